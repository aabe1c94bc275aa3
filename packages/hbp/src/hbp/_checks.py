"""Argument checks shared by this package's modules (worded by :func:`paperkit.param_error`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import Described, param_error

__all__ = ["as_lengths", "positive_int"]


def positive_int(name: str, owner: str, value: Any) -> int:
    """``value`` as an ``int`` when it is a positive integer, else the worded ValueError."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise param_error(name, owner, "a positive integer", value)
    return int(value)


def as_lengths(lengths: Any, owner: str, name: str = "lengths") -> np.ndarray:
    """Sample lengths as a 1-D int64 array of positive integers (a torch tensor is accepted)."""
    if hasattr(lengths, "detach"):
        lengths = lengths.detach().cpu().numpy()
    arr = np.asarray(lengths)
    if arr.ndim != 1 or arr.size == 0:
        raise param_error(name, owner, "a non-empty 1-D sequence", Described(f"shape {arr.shape}"))
    if not np.issubdtype(arr.dtype, np.integer) and (
        not np.issubdtype(arr.dtype, np.floating) or not np.all(arr == np.round(arr))
    ):
        raise param_error(name, owner, "integer token counts", Described(f"dtype {arr.dtype}"))
    arr = arr.astype(np.int64)
    if arr.min() < 1:
        raise param_error(name, owner, "positive (no empty sample)", int(arr.min()))
    return arr
