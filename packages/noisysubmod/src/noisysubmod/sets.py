"""Set representations and the batched evaluation every oracle goes through.

A set S of the ground set N = {0, ..., n-1} is passed as an index array, a ``frozenset`` / ``set``
/ list of indices, or a boolean mask of shape (n,). Batches are boolean masks of shape (batch, n).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from paperkit import param_error
from paperkit.checks import describe

__all__ = ["as_mask", "evaluate", "extensions"]


def as_mask(S: Any, n: int, name: str = "S", owner: str = "as_mask") -> np.ndarray:
    """The boolean mask (n,) of ``S`` (indices, a set, or a mask (n,)).

    >>> as_mask([0, 2], 4).astype(int).tolist()
    [1, 0, 1, 0]
    """
    if isinstance(S, (set, frozenset)):
        S = sorted(S)
    array = np.asarray(S)
    if array.dtype == bool:
        if array.shape != (n,):
            raise param_error(name, owner, f"a boolean mask of shape ({n},)", describe(array))
        return array
    if array.size == 0:
        return np.zeros(n, dtype=bool)
    if array.dtype.kind not in "iu" or array.ndim != 1:
        raise param_error(
            name,
            owner,
            "a 1-D array of element indices or a boolean mask",
            describe(array),
            cls=TypeError,
        )
    if array.min() < 0 or array.max() >= n:
        raise param_error(name, owner, f"indices in [0, {n})", describe(array))
    mask = np.zeros(n, dtype=bool)
    mask[array] = True
    return mask


def evaluate(f: Callable[..., Any], masks: np.ndarray, owner: str = "evaluate") -> np.ndarray:
    """Values ``f(S)`` for every row ``S`` of ``masks`` (batch, n), as float64 (batch,).

    Uses ``f.evaluate(masks)`` when ``f`` has it (the vectorised path of this package's
    functions and oracles), else calls ``f(mask)`` row by row. A negative or non-finite value
    raises ``ValueError`` naming ``f``: the model assumes f: 2^N -> R>=0.
    """
    if hasattr(f, "evaluate"):
        values = np.asarray(f.evaluate(masks), dtype=float)
    else:
        values = np.array([float(f(row)) for row in masks], dtype=float)
    if values.shape != (len(masks),):
        raise param_error("f", owner, "a set function returning one number per set", values.shape)
    if not np.all(np.isfinite(values)) or np.any(values < 0):
        bad = values[~(np.isfinite(values) & (values >= 0))][0]
        raise param_error("f", owner, "a function with finite values >= 0", float(bad))
    return values


def extensions(
    f: Callable[..., Any], masks: np.ndarray, cand: np.ndarray, owner: str = "extensions"
) -> tuple[np.ndarray, np.ndarray]:
    """(f(S) (batch,), f(S + e) (batch, len(cand))) for every row S of ``masks`` and e in
    ``cand``: the values a greedy step needs. Uses ``f.extensions`` when ``f`` has it (one
    marginal-gain product instead of batch * len(cand) set evaluations), else builds the masks.
    For e in S, f(S + e) = f(S).
    """
    if hasattr(f, "extensions"):
        base, ext = f.extensions(masks, cand)
        base, ext = np.asarray(base, dtype=float), np.asarray(ext, dtype=float)
        if not (np.all(np.isfinite(ext)) and np.all(ext >= 0)):
            raise param_error("f", owner, "a function with finite values >= 0", "a bad value")
        return evaluate(_Values(base), masks, owner), ext
    batch = len(masks)
    grown = np.repeat(masks, len(cand), axis=0)
    grown[np.arange(batch * len(cand)), np.tile(cand, batch)] = True
    values = evaluate(f, np.concatenate([masks, grown]), owner)
    return values[:batch], values[batch:].reshape(batch, len(cand))


class _Values:
    """Already computed values, passed through :func:`evaluate`'s checks."""

    def __init__(self, values: np.ndarray) -> None:
        self.values = values

    def evaluate(self, masks: np.ndarray) -> np.ndarray:
        return self.values
