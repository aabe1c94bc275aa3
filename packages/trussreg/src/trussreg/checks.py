"""Argument checks shared by the public functions, worded with :func:`paperkit.param_error`."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import Described, param_error

__all__ = ["as_points", "as_point_pair", "check_int", "check_positive"]


def as_points(x: Any, name: str, owner: str, *, min_rows: int = 1) -> np.ndarray:
    """``x`` as a finite float64 array of shape (n, 3) with n >= ``min_rows``.

    Raises ``TypeError`` for non-numeric input and ``ValueError`` for a wrong shape, too few rows
    or non-finite values.
    """
    arr = np.asarray(x)
    if arr.dtype.kind not in "biuf":
        raise param_error(
            name,
            owner,
            "a numeric array",
            Described(f"an array of dtype {arr.dtype}"),
            cls=TypeError,
        )
    if arr.ndim != 2 or arr.shape[1] != 3:
        raise param_error(
            name, owner, "an array of shape (n, 3)", Described(f"an array of shape {arr.shape}")
        )
    if arr.shape[0] < min_rows:
        raise param_error(
            name,
            owner,
            f"an array with at least {min_rows} rows",
            Described(f"{arr.shape[0]} rows"),
        )
    arr = arr.astype(np.float64)
    if not np.isfinite(arr).all():
        bad = int((~np.isfinite(arr)).sum())
        raise param_error(name, owner, "finite", Described(f"{bad} non-finite values"))
    return arr


def as_point_pair(P: Any, Q: Any, owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Source and target points of N >= 3 putative correspondences, shapes checked alike."""
    P = as_points(P, "P", owner, min_rows=3)
    Q = as_points(Q, "Q", owner, min_rows=3)
    if P.shape != Q.shape:
        raise param_error(
            "Q", owner, f"an array of the shape of P, {P.shape}", Described(f"shape {Q.shape}")
        )
    return P, Q


def check_positive(value: Any, name: str, owner: str) -> float:
    """A finite real number > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise param_error(name, owner, "a positive number", value, cls=TypeError)
    if not np.isfinite(value) or value <= 0:
        raise param_error(name, owner, "a positive number", value)
    return float(value)


def check_int(value: Any, name: str, owner: str, *, minimum: int) -> int:
    """An integer >= ``minimum``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise param_error(name, owner, f"an integer >= {minimum}", value, cls=TypeError)
    if value < minimum:
        raise param_error(name, owner, f"an integer >= {minimum}", value)
    return int(value)
