"""Metrics of fair classification: the demographic-parity gap and the calibration error."""

from __future__ import annotations

from typing import Any

import numpy as np

from fairpareto.checks import check_groups, check_unit
from paperkit import check_array, check_int, param_error

__all__ = ["expected_calibration_error", "parity_gap"]


def parity_gap(y_pred: Any, A: Any) -> float:
    """Statistical-parity gap |P(Yhat = 1 | A = 1) - P(Yhat = 1 | A = 0)|.

    ``y_pred`` ``(N,)`` holds hard predictions in {0, 1} or probabilities P(Yhat = 1 | x) in
    [0, 1] (then the gap of the randomised classifier); ``A`` ``(N,)`` the groups, both present.
    NaN policy: NaN or inf predictions are refused (ValueError).

    >>> parity_gap(np.array([1, 0, 1, 1]), np.array([0, 0, 1, 1]))
    0.5
    """
    y = check_unit("y_pred", "parity_gap", y_pred)
    A = check_groups("parity_gap", A, y.shape[0])
    return float(abs(y[A == 1].mean() - y[A == 0].mean()))


def expected_calibration_error(scores: Any, y: Any, n_bins: int = 10) -> float:
    """ECE = sum_b (N_b / N) |mean(y in b) - mean(score in b)| over ``n_bins`` equal-width bins
    of [0, 1]. ``scores`` ``(N,)`` in [0, 1]; ``y`` ``(N,)`` labels in {0, 1}.
    NaN policy: NaN or inf scores or labels are refused (ValueError).

    >>> round(expected_calibration_error(np.array([0.2, 0.2, 0.8, 0.8]), np.array([0, 1, 1, 1])), 9)
    0.25
    """
    owner = "expected_calibration_error"
    s = check_unit("scores", owner, scores)
    labels = check_array("y", owner, y, ndim=1, kind=None)
    if labels.shape[0] != s.shape[0]:
        raise param_error("y", owner, f"of length {s.shape[0]}", f"length {labels.shape[0]}")
    if labels.dtype.kind not in "biuf" or not np.isin(labels, (0, 1)).all():
        raise param_error("y", owner, "binary (0/1) labels", "other values")
    n_bins = check_int("n_bins", owner, n_bins, low=1)
    index = np.minimum((s * n_bins).astype(int), n_bins - 1)
    count = np.bincount(index, minlength=n_bins)
    gap = np.abs(
        np.bincount(index, weights=labels.astype(float), minlength=n_bins)
        - np.bincount(index, weights=s, minlength=n_bins)
    )
    return float(gap.sum() / count.sum())
