"""Argument checks shared by the modules of this package (paperkit's wording throughout)."""

from __future__ import annotations

from typing import Any

import torch

from paperkit import Described, check_tensor, param_error


def points(
    name: str, owner: str, x: Any, dims: dict, dtype: torch.dtype, axis: str = "B"
) -> torch.Tensor:
    """A finite ``(axis, d)`` tensor cast to ``dtype``; its sizes are recorded in ``dims``."""
    check_tensor(name, owner, x, shape=(axis, "d"), dims=dims)
    return x.to(dtype)


def times(
    name: str,
    owner: str,
    t: Any,
    batch: int | None,
    dtype: torch.dtype,
    *,
    low_open: bool = False,
    high_open: bool = False,
    low: float = 0.0,
    high: float = 1.0,
) -> torch.Tensor:
    """Times in [low, high] (ends open where said) as a ``(B,)`` tensor of ``dtype``.

    ``t`` is a Python number or a 0-d tensor (both broadcast to ``batch``), or a ``(B,)`` tensor.
    """
    if isinstance(t, (int, float)) and not isinstance(t, bool):
        t = torch.tensor(float(t), dtype=dtype)
    check_tensor(name, owner, t, ndim=(0, 1))
    t = t.to(dtype)
    if t.ndim == 0:
        t = t.expand(1 if batch is None else batch)
    elif batch is not None and t.shape[0] != batch:
        raise param_error(
            name,
            owner,
            f"of shape (B,) with B={batch} (as in the points)",
            Described(f"a tensor of shape {tuple(t.shape)}"),
        )
    low_bad = (t <= low) if low_open else (t < low)
    high_bad = (t >= high) if high_open else (t > high)
    if bool((low_bad | high_bad).any()):
        interval = ("(" if low_open else "[") + f"{low:g}, {high:g}" + (")" if high_open else "]")
        raise param_error(
            name,
            owner,
            f"times in {interval}",
            Described(f"values in [{float(t.min()):g}, {float(t.max()):g}]"),
        )
    return t
