"""Metrics of prediction sets: class-conditional coverage, mean size, singleton rate."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit import Described, param_error

__all__ = ["class_conditional_coverage", "mean_set_size", "singleton_rate"]


def _sets(sets: np.ndarray | Sequence[np.ndarray], owner: str) -> np.ndarray:
    array = np.asarray(sets)
    if array.ndim != 2 or array.dtype != bool:
        raise param_error(
            "sets",
            owner,
            "a boolean array of shape (N, K)",
            Described(f"an array of shape {array.shape} and dtype {array.dtype}"),
        )
    return array


def class_conditional_coverage(
    sets: np.ndarray | Sequence[np.ndarray], y: np.ndarray
) -> np.ndarray:
    """:math:`\\widehat{\\mathrm{cov}}_y = \\frac{1}{N_y}
    \\sum_{i : Y_i = y} 1\\{y \\in \\Gamma_i\\}`
    for each class (column) :math:`y`; NaN for a class absent from ``y``.

    Args:
        sets: boolean ``(N, K)`` (or a list of ``(K,)`` rows).
        y: labels ``(N,)`` as column indices in ``[0, K)``.
    """
    array = _sets(sets, "class_conditional_coverage")
    y = np.asarray(y).reshape(-1)
    if y.shape[0] != array.shape[0] or y.min(initial=0) < 0 or y.max(initial=0) >= array.shape[1]:
        raise param_error(
            "y",
            "class_conditional_coverage",
            f"{array.shape[0]} labels in [0, {array.shape[1]})",
            Described(f"{y.shape[0]} labels"),
        )
    hit = array[np.arange(len(y)), y]
    total = np.bincount(y, minlength=array.shape[1]).astype(np.float64)
    covered = np.bincount(y, weights=hit, minlength=array.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, covered / total, np.nan)


def mean_set_size(sets: np.ndarray | Sequence[np.ndarray]) -> float:
    """:math:`\\frac1N \\sum_i |\\Gamma_i|`."""
    return float(_sets(sets, "mean_set_size").sum(axis=1).mean())


def singleton_rate(sets: np.ndarray | Sequence[np.ndarray]) -> float:
    """:math:`\\frac1N \\#\\{i : |\\Gamma_i| = 1\\}`."""
    return float((_sets(sets, "singleton_rate").sum(axis=1) == 1).mean())
