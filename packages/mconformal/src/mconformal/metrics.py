"""Metrics of prediction sets: class-conditional coverage, mean size, singleton rate.

Sets are boolean ``(N, K)`` arrays (or lists of ``(K,)`` rows); labels are integers in ``[0, K)``
(no NaN can arise).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit import check_array, describe, param_error

__all__ = ["class_conditional_coverage", "mean_set_size", "singleton_rate"]


def _sets(sets: np.ndarray | Sequence[np.ndarray], owner: str) -> np.ndarray:
    return check_array("sets", owner, sets, ndim=2, kind="bool")


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
    owner = "class_conditional_coverage"
    dims: dict = {}
    array = check_array("sets", owner, sets, shape=("N", "K"), dims=dims, kind="bool")
    y = check_array("y", owner, y, shape=("N",), dims=dims, kind="int")
    if y.min() < 0 or y.max() >= array.shape[1]:
        raise param_error("y", owner, f"labels in [0, K={array.shape[1]})", describe(y))
    hit = array[np.arange(len(y)), y]
    total = np.bincount(y, minlength=array.shape[1]).astype(np.float64)
    covered = np.bincount(y, weights=hit, minlength=array.shape[1])
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(total > 0, covered / total, np.nan)


def mean_set_size(sets: np.ndarray | Sequence[np.ndarray]) -> float:
    """:math:`\\frac1N \\sum_i |\\Gamma_i|`.

    >>> mean_set_size(np.array([[True, False], [True, True]]))
    1.5
    """
    return float(_sets(sets, "mean_set_size").sum(axis=1).mean())


def singleton_rate(sets: np.ndarray | Sequence[np.ndarray]) -> float:
    """:math:`\\frac1N \\#\\{i : |\\Gamma_i| = 1\\}`."""
    return float((_sets(sets, "singleton_rate").sum(axis=1) == 1).mean())
