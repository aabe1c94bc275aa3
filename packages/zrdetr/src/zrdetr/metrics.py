r"""Evaluation metrics (paper Sec. 4): COCO-style mAP, expected calibration error and the
rank correlation between predicted box variance and localisation error.

:func:`mean_ap` follows the COCO protocol (all areas, up to ``max_dets`` detections per image):
per class and IoU threshold, detections of all images are sorted by score, each is matched
greedily to the unmatched ground-truth box of highest IoU at or above the threshold, the
precision envelope :math:`\hat p(r)=\max_{r'\ge r}p(r')` is read at the 101 recall points
:math:`0, 0.01, \dots, 1`, and AP is their mean; mAP is the mean over classes that have ground
truth and over thresholds.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from paperkit import check_array, check_int, param_error

__all__ = [
    "ap50",
    "bootstrap_map",
    "box_iou_np",
    "ece",
    "mean_ap",
    "uncertainty_error_spearman",
]

RECALL_POINTS = np.linspace(0.0, 1.0, 101)
#: COCO's IoU thresholds 0.50:0.05:0.95.
COCO_THRESHOLDS = tuple(np.round(np.arange(0.5, 0.96, 0.05), 2).tolist())


def box_iou_np(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pairwise IoU of ``(x0, y0, x1, y1)`` boxes a (n, 4), b (m, 4) -> (n, m) (numpy)."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.clip(rb - lt, 0, None), -1)
    area_a = np.prod(a[:, 2:] - a[:, :2], -1)
    area_b = np.prod(b[:, 2:] - b[:, :2], -1)
    union = area_a[:, None] + area_b[None, :] - inter
    return inter / np.maximum(union, np.finfo(float).tiny)


def _check_images(
    name: str, items: Sequence[Mapping[str, np.ndarray]], scored: bool
) -> list[dict[str, np.ndarray]]:
    if not isinstance(items, (list, tuple)):
        raise param_error(
            name, "mean_ap", "a list of per-image dicts", type(items).__name__, cls=TypeError
        )
    if len(items) == 0:
        raise param_error(name, "mean_ap", "a non-empty list", "[]")
    keys = ("boxes", "labels", "scores") if scored else ("boxes", "labels")
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, Mapping) or any(k not in item for k in keys):
            raise param_error(
                name, "mean_ap", f"dicts with keys {keys}", f"item {i}", cls=TypeError
            )
        boxes = check_array(
            name, "mean_ap", np.asarray(item["boxes"], dtype=float).reshape(-1, 4), nonempty=False
        )
        labels = check_array(
            name,
            "mean_ap",
            np.asarray(item["labels"]).reshape(-1),
            kind="int",
            shape=(boxes.shape[0],),
            nonempty=False,
        )
        if bool((boxes[:, 2:] < boxes[:, :2]).any()):
            raise param_error(
                name,
                "mean_ap",
                "(x0, y0, x1, y1) boxes with x1 >= x0, y1 >= y0",
                f"a reversed box in item {i}",
            )
        row = {"boxes": boxes, "labels": labels}
        if scored:
            row["scores"] = check_array(
                name,
                "mean_ap",
                np.asarray(item["scores"], dtype=float).reshape(-1),
                shape=(boxes.shape[0],),
                nonempty=False,
            )
        out.append(row)
    return out


def mean_ap(
    dets: Sequence[Mapping[str, np.ndarray]],
    gts: Sequence[Mapping[str, np.ndarray]],
    iou_thresholds: Sequence[float] | np.ndarray = COCO_THRESHOLDS,
    max_dets: int = 100,
) -> float:
    r"""COCO mAP over ``iou_thresholds`` (default 0.50:0.05:0.95).

    Args:
        dets: per image, a dict with ``boxes`` (n, 4) ``(x0, y0, x1, y1)``, ``scores`` (n,),
            ``labels`` (n,) int.
        gts: per image (same order), ``boxes`` (m, 4) and ``labels`` (m,).
        iou_thresholds: the IoU thresholds, each in (0, 1].
        max_dets: at most this many highest-scoring detections per image are kept.

    Returns the mean AP over classes with ground truth and thresholds; nan when no image has
    ground truth.
    """
    det = _check_images("dets", dets, scored=True)
    gt = _check_images("gts", gts, scored=False)
    if len(det) != len(gt):
        raise param_error("gts", "mean_ap", f"one entry per image of 'dets' ({len(det)})", len(gt))
    thr = check_array(
        "iou_thresholds", "mean_ap", np.asarray(iou_thresholds, dtype=float).reshape(-1)
    )
    if bool(((thr <= 0) | (thr > 1)).any()):
        raise param_error("iou_thresholds", "mean_ap", "values in (0, 1]", thr.tolist())
    max_dets = check_int("max_dets", "mean_ap", max_dets, low=1)
    return _map_from_matches(_matches(det, gt, thr, max_dets), np.arange(len(det)))


def _matches(det, gt, thr: np.ndarray, max_dets: int) -> dict[int, list]:
    """Per class with ground truth, per image: (scores (n,), TP flags (T, n), number of GT).
    COCO's greedy matching is per image, so these parts are reused by the bootstrap."""
    classes = np.unique(np.concatenate([g["labels"] for g in gt]))
    out: dict[int, list] = {}
    for c in classes.tolist():
        parts = []
        for d, g in zip(det, gt, strict=True):
            keep = np.flatnonzero(d["labels"] == c)
            keep = keep[np.argsort(-d["scores"][keep], kind="mergesort")][:max_dets]
            gboxes = g["boxes"][g["labels"] == c]
            m = np.zeros((len(thr), len(keep)), dtype=bool)
            if len(keep) and len(gboxes):
                iou = box_iou_np(d["boxes"][keep], gboxes)
                for t, th in enumerate(thr):
                    taken = np.zeros(len(gboxes), dtype=bool)
                    for i in range(len(keep)):
                        cand = np.where(taken, -1.0, iou[i])
                        j = int(np.argmax(cand))
                        if cand[j] >= min(th, 1 - 1e-10):
                            taken[j], m[t, i] = True, True
            parts.append((d["scores"][keep], m, len(gboxes)))
        out[int(c)] = parts
    return out


def _map_from_matches(matches: dict[int, list], images: np.ndarray) -> float:
    """mAP over the classes with ground truth among ``images`` (indices, repeats allowed)."""
    aps = []
    for parts in matches.values():
        chosen = [parts[i] for i in images]
        n_gt = sum(p[2] for p in chosen)
        if n_gt == 0:
            continue
        s = np.concatenate([p[0] for p in chosen])
        tp = np.concatenate([p[1] for p in chosen], axis=1)
        T = tp.shape[0]
        if tp.shape[1] == 0:
            aps.append(np.zeros(T))
            continue
        order = np.argsort(-s, kind="mergesort")
        tp = tp[:, order]
        ctp = np.cumsum(tp, axis=1)
        recall = ctp / n_gt
        precision = ctp / np.arange(1, tp.shape[1] + 1)
        ap = np.zeros(T)
        for t in range(T):
            env = np.maximum.accumulate(precision[t][::-1])[::-1]
            idx = np.searchsorted(recall[t], RECALL_POINTS, side="left")
            ap[t] = np.where(idx < len(env), env[np.minimum(idx, len(env) - 1)], 0.0).mean()
        aps.append(ap)
    return float(np.mean(aps)) if aps else float("nan")


def bootstrap_map(
    dets: Sequence[Mapping[str, np.ndarray]],
    gts: Sequence[Mapping[str, np.ndarray]],
    iou_thresholds: Sequence[float] | np.ndarray = COCO_THRESHOLDS,
    n_boot: int = 200,
    seed: int = 0,
) -> tuple[float, float, float]:
    """:func:`mean_ap` and its percentile bootstrap 95% interval over images (``n_boot``
    resamples of the images with replacement): (value, low, high)."""
    det = _check_images("dets", dets, scored=True)
    gt = _check_images("gts", gts, scored=False)
    if len(det) != len(gt):
        raise param_error(
            "gts", "bootstrap_map", f"one entry per image of 'dets' ({len(det)})", len(gt)
        )
    thr = check_array(
        "iou_thresholds", "bootstrap_map", np.asarray(iou_thresholds, dtype=float).reshape(-1)
    )
    n_boot = check_int("n_boot", "bootstrap_map", n_boot, low=1, high=100_000)
    seed = check_int("seed", "bootstrap_map", seed, low=0)
    matches = _matches(det, gt, thr, 100)
    n = len(det)
    value = _map_from_matches(matches, np.arange(n))
    rng = np.random.default_rng(seed)
    boots = [_map_from_matches(matches, rng.integers(0, n, n)) for _ in range(n_boot)]
    lo, hi = np.nanpercentile(boots, [2.5, 97.5])
    return value, float(lo), float(hi)


def ap50(
    dets: Sequence[Mapping[str, np.ndarray]], gts: Sequence[Mapping[str, np.ndarray]]
) -> float:
    """:func:`mean_ap` at the single IoU threshold 0.5."""
    return mean_ap(dets, gts, iou_thresholds=[0.5])


def ece(probs: np.ndarray, correct: np.ndarray, n_bins: int = 15) -> float:
    r"""Expected calibration error
    :math:`\sum_b\frac{|B_b|}{n}\,|\mathrm{acc}(B_b)-\mathrm{conf}(B_b)|` over ``n_bins``
    equal-width confidence bins (the last bin closed); ``probs`` (n,) in [0, 1], ``correct``
    (n,) bool (or 0/1)."""
    p = check_array("probs", "ece", probs, ndim=1, kind="float")
    y = check_array("correct", "ece", correct, shape=(p.shape[0],), kind=None)
    if y.dtype.kind not in "biuf" or not np.isin(y, (0, 1)).all():
        raise param_error(
            "correct",
            "ece",
            "booleans (or 0/1 values)",
            f"dtype {y.dtype}",
            cls=TypeError if y.dtype.kind not in "biuf" else ValueError,
        )
    y = y.astype(bool)
    if bool(((p < 0) | (p > 1)).any()):
        raise param_error(
            "probs", "ece", "probabilities in [0, 1]", f"range [{p.min()}, {p.max()}]"
        )
    n_bins = check_int("n_bins", "ece", n_bins, low=1, high=10_000)
    idx = np.minimum((p * n_bins).astype(int), n_bins - 1)
    total = 0.0
    for b in range(n_bins):
        sel = idx == b
        if sel.any():
            total += sel.mean() * abs(y[sel].mean() - p[sel].mean())
    return float(total)


def uncertainty_error_spearman(var: np.ndarray, iou: np.ndarray) -> float:
    r"""Spearman rank correlation between the predicted box variance and the localisation
    error :math:`1-\mathrm{IoU}`, i.e. corr(var, -IoU) in ranks (ties get mean ranks); nan when
    either side is constant."""
    from scipy.stats import spearmanr

    v = check_array("var", "uncertainty_error_spearman", var, ndim=1, kind="float")
    if v.shape[0] < 2:
        raise param_error("var", "uncertainty_error_spearman", "at least 2 values", v.shape[0])
    u = check_array("iou", "uncertainty_error_spearman", iou, shape=(v.shape[0],), kind="float")
    if bool((v < 0).any()):
        raise param_error("var", "uncertainty_error_spearman", "non-negative variances", "v < 0")
    if np.ptp(v) == 0 or np.ptp(u) == 0:
        return float("nan")
    return float(spearmanr(v, 1.0 - u).statistic)
