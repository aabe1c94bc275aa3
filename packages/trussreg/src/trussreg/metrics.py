"""Registration error metrics (3DMatch convention) and inlier precision/recall."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, check_real

__all__ = ["inlier_scores", "registration_metrics"]


def registration_metrics(
    R: Any, t: Any, R_gt: Any, t_gt: Any, re_thresh_deg: float = 15.0, te_thresh: float = 0.3
) -> dict[str, Any]:
    r"""Rotation error, translation error and success of an estimate.

    .. math:: \mathrm{RE} = \arccos\frac{\operatorname{tr}(R_{gt}^\top R) - 1}{2}\ (\text{deg}),
              \qquad \mathrm{TE} = \|t - t_{gt}\|

    ``success`` is RE <= ``re_thresh_deg`` and TE <= ``te_thresh`` (15 deg, 0.3 m: 3DMatch).

    Shapes:
        R, R_gt: (3, 3) rotations; t, t_gt: (3,) translations (NaN and inf refused).

    >>> registration_metrics(np.eye(3), [0.0, 0.0, 0.1], np.eye(3), np.zeros(3))["success"]
    True
    """
    owner = "registration_metrics"
    R, R_gt = (check_array(n, owner, v, shape=(3, 3)) for n, v in (("R", R), ("R_gt", R_gt)))
    t, t_gt = (check_array(n, owner, v, shape=(3,)) for n, v in (("t", t), ("t_gt", t_gt)))
    re_thresh_deg = check_real("re_thresh_deg", owner, re_thresh_deg, low=0)
    te_thresh = check_real("te_thresh", owner, te_thresh, low=0)
    cos = np.clip((np.trace(R_gt.T @ R) - 1) / 2, -1.0, 1.0)
    re = float(np.degrees(np.arccos(cos)))
    te = float(np.linalg.norm(t - t_gt))
    return {"re_deg": re, "te": te, "success": bool(re <= re_thresh_deg and te <= te_thresh)}


def inlier_scores(pred: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Precision, recall and F1 of a predicted inlier mask against the ground truth (0 where a
    denominator is 0).

    Shapes:
        pred, truth: (N,) boolean masks, N >= 1 (other dtypes, NaN among them, are refused).

    >>> inlier_scores(np.array([True, True]), np.array([True, False]))["precision"]
    0.5
    """
    dims: dict = {}
    pred, truth = (
        check_array(name, "inlier_scores", v, shape=("N",), dims=dims, kind="bool")
        for name, v in (("pred", pred), ("truth", truth))
    )
    tp = float((pred & truth).sum())
    precision = tp / max(float(pred.sum()), 1.0)
    recall = tp / max(float(truth.sum()), 1.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}
