"""Argument checks shared by the public entry points (paperkit's wording, one place)."""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from paperkit import check_array, check_int
from paperkit.errors import param_error


def as_rng(name: str, owner: str, rng: Any) -> np.random.Generator:
    """``rng``: None (fresh entropy), a non-negative integer seed, or a numpy Generator."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, numbers.Integral) and not isinstance(rng, bool):
        return np.random.default_rng(check_int(name, owner, rng, low=0))
    raise param_error(
        name, owner, "None, a non-negative integer or a numpy Generator", rng, cls=TypeError
    )


def matrix(name: str, owner: str, value: Any, dims: dict, rows: str = "n") -> np.ndarray:
    """A finite real array of shape (n,) or (n, d) with n ≥ 3, returned as float (n, d)."""
    array = check_array(name, owner, value, ndim=(1, 2), kind="real")
    array = np.asarray(array, dtype=float)
    if array.ndim == 1:
        array = array[:, None]
    if array.shape[0] < 3:
        raise param_error(name, owner, "of at least 3 rows (samples)", array.shape)
    check_array(name, owner, array, shape=(rows, None), dims=dims)
    if array.shape[1] == 0:
        raise param_error(name, owner, "non-empty (at least one column)", array.shape)
    return array


def blocks(name: str, owner: str, value: Any, dims: dict) -> list[np.ndarray]:
    """Representation blocks: an (n, m) array (m one-column blocks) or a list of (n, d_i)."""
    if isinstance(value, (list, tuple)):
        if not value:
            raise param_error(name, owner, "a non-empty list of (n, d_i) arrays", value)
        return [matrix(f"{name}", owner, b, dims) for b in value]
    array = check_array(name, owner, value, ndim=2, kind="real", shape=("n", None), dims=dims)
    return [np.asarray(array[:, [i]], dtype=float) for i in range(array.shape[1])]
