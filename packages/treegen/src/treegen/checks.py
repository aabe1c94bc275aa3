"""Argument checks shared by the public entry points (paperkit's wording)."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, param_error

__all__ = ["M2_TOL", "check_leaves"]

#: Relative tolerance on a negative invariant mass squared: m² ≥ -M2_TOL·E² is accepted (a
#: massless particle after a boost carries round-off of this order).
M2_TOL = 1e-9


def check_leaves(
    name: str, owner: str, leaves: Any, *, n_min: int = 2, n_max: int | None = None
) -> np.ndarray:
    """``leaves`` as a float64 ``(n, 4)`` array of physical four-momenta ``(E, px, py, pz)``.

    Refuses non-float arrays (TypeError), NaN/inf, ``n < n_min`` or ``n > n_max``, a negative
    energy, and ``m² < -M2_TOL·E²`` (ValueError naming ``name``).
    """
    arr = check_array(name, owner, leaves, shape=(None, 4), kind="float")
    n = arr.shape[0]
    if n < n_min:
        raise param_error(name, owner, f"an (n, 4) array with n >= {n_min} particles", n)
    if n_max is not None and n > n_max:
        raise param_error(name, owner, f"an (n, 4) array with n <= {n_max} particles", n)
    arr = arr.astype(np.float64)
    if (arr[:, 0] < 0).any():
        raise param_error(name, owner, "four-momenta with non-negative energy", arr[:, 0].min())
    m2 = arr[:, 0] ** 2 - (arr[:, 1:] ** 2).sum(1)
    if (m2 < -M2_TOL * np.maximum(arr[:, 0] ** 2, 1.0)).any():
        raise param_error(name, owner, "four-momenta with m² >= 0 (up to round-off)", m2.min())
    return arr
