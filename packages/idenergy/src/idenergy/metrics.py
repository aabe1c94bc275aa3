"""Detection metrics with generated images as the positive class (label 1) and larger scores
meaning "more likely generated".

AUROC is the Mann-Whitney probability P(s+ > s-) + P(s+ = s-)/2 (ties count one half); average
precision is sum_k (R_k - R_{k-1}) P_k over the distinct thresholds (as scikit-learn defines it);
FPR@TPR is the false-positive rate at the largest threshold whose TPR reaches the target.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.stats import rankdata

from paperkit import check_array, check_real, param_error

__all__ = ["auroc", "average_precision", "fpr_at_tpr"]


def _scores_labels(owner: str, scores: Any, labels: Any) -> tuple[np.ndarray, np.ndarray]:
    dims: dict = {}
    s = check_array("scores", owner, scores, shape=("N",), dims=dims).astype(np.float64)
    y = check_array("labels", owner, labels, shape=("N",), dims=dims, kind=None)
    if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
        raise param_error("labels", owner, "labels in {0, 1}", f"values {np.unique(y)[:5]}")
    y = y.astype(bool)
    if y.all() or not y.any():
        raise param_error(
            "labels", owner, "both classes present (0 natural, 1 generated)", "one class"
        )
    return s, y


def auroc(scores: Any, labels: Any) -> float:
    """Area under the ROC curve, ``(R+ - n+(n+ + 1)/2) / (n+ n-)`` with mid-ranks for ties.

    ``scores (N,)`` real, ``labels (N,)`` in {0, 1} with both present. NaN refused.

    >>> auroc([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1])
    0.75
    """
    s, y = _scores_labels("auroc", scores, labels)
    ranks = rankdata(s)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _curve(s: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """True and false positives at each distinct threshold, thresholds decreasing."""
    order = np.argsort(-s, kind="mergesort")
    s, y = s[order], y[order]
    last = np.r_[np.nonzero(np.diff(s))[0], s.size - 1]
    tps = np.cumsum(y)[last]
    return tps, (last + 1) - tps


def average_precision(scores: Any, labels: Any) -> float:
    """Average precision ``sum_k (R_k - R_{k-1}) P_k`` over the distinct score thresholds.

    NaN refused.

    >>> round(average_precision([0.1, 0.4, 0.35, 0.8], [0, 0, 1, 1]), 4)
    0.8333
    """
    s, y = _scores_labels("average_precision", scores, labels)
    tps, fps = _curve(s, y)
    precision = tps / (tps + fps)
    recall = tps / tps[-1]
    return float(np.sum(np.diff(np.r_[0.0, recall]) * precision))


def fpr_at_tpr(scores: Any, labels: Any, tpr: float = 0.95) -> float:
    """False-positive rate at the first (largest) threshold whose true-positive rate is ``>= tpr``.

    NaN refused. With positives scored ``[5, 4, 3]`` and negatives ``[3.5, 2, 1]``, TPR reaches
    2/3 at threshold 4 (FPR 0) and 1 at threshold 3 (FPR 1/3):

    >>> fpr_at_tpr([5, 4, 3, 3.5, 2, 1], [1, 1, 1, 0, 0, 0], tpr=0.95)
    0.3333333333333333
    """
    tpr = check_real("tpr", "fpr_at_tpr", tpr, low=0, high=1, low_open=True)
    s, y = _scores_labels("fpr_at_tpr", scores, labels)
    tps, fps = _curve(s, y)
    k = int(np.argmax(tps / tps[-1] >= tpr - 1e-12))
    return float(fps[k] / (~y).sum())
