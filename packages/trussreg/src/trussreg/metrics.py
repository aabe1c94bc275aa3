"""Registration error metrics (3DMatch convention) and inlier precision/recall."""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["inlier_scores", "registration_metrics"]


def registration_metrics(
    R: Any, t: Any, R_gt: Any, t_gt: Any, re_thresh_deg: float = 15.0, te_thresh: float = 0.3
) -> dict[str, Any]:
    r"""Rotation error, translation error and success of an estimate.

    .. math:: \mathrm{RE} = \arccos\frac{\operatorname{tr}(R_{gt}^\top R) - 1}{2}\ (\text{deg}),
              \qquad \mathrm{TE} = \|t - t_{gt}\|

    ``success`` is RE <= ``re_thresh_deg`` and TE <= ``te_thresh`` (15 deg, 0.3 m: 3DMatch).
    """
    R, R_gt = np.asarray(R, float), np.asarray(R_gt, float)
    cos = np.clip((np.trace(R_gt.T @ R) - 1) / 2, -1.0, 1.0)
    re = float(np.degrees(np.arccos(cos)))
    te = float(np.linalg.norm(np.asarray(t, float) - np.asarray(t_gt, float)))
    return {"re_deg": re, "te": te, "success": bool(re <= re_thresh_deg and te <= te_thresh)}


def inlier_scores(pred: np.ndarray, truth: np.ndarray) -> dict[str, float]:
    """Precision, recall and F1 of a predicted inlier mask against the ground truth."""
    tp = float((pred & truth).sum())
    precision = tp / max(float(pred.sum()), 1.0)
    recall = tp / max(float(truth.sum()), 1.0)
    f1 = 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}
