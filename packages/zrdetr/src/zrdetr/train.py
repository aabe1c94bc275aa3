r"""Training, inference and evaluation of ZR-DETR (paper Sec. 3-4), and the optional
mean-teacher domain adaptation.

:func:`train_detector` minimises :class:`~zrdetr.criterion.ZRDETRCriterion` with AdamW (linear
warm-up, cosine decay, gradient clipping), feeding the true zoom when the model uses zoom.
:func:`detections` turns outputs into per-image detections (one per query: the most probable
structure and its probability), optionally rescored by the relation prior,
:math:`s_k\leftarrow s_k\exp(-\lambda\,\overline{d^2_{kl}}/4)`. :func:`evaluate` reports mAP50
and mAP50:95 with bootstrap 95% intervals, ECE, Spearman(var, 1 - IoU) and the count of
anatomically implausible false positives. :func:`adapt_mean_teacher` is the UDA of Sec. 3: an EMA
teacher labels unlabeled target images; a pseudo-label is kept when its score exceeds 0.7, its GP
box variance lies below the source median and its relation NLL below the source 90th percentile.
"""

from __future__ import annotations

import copy
import math
import time
from typing import Any

import numpy as np
import torch

from paperkit import progress
from zrdetr.criterion import ZRDETRCriterion
from zrdetr.metrics import bootstrap_map, box_iou_np, ece, uncertainty_error_spearman
from zrdetr.model import ZRDETR
from zrdetr.relation import AnatomicalRelationPrior

__all__ = [
    "adapt_mean_teacher",
    "detections",
    "evaluate",
    "fit_prior",
    "predict",
    "structure_nll",
    "train_detector",
]


def fit_prior(data: dict[str, torch.Tensor], n_classes: int) -> AnatomicalRelationPrior:
    """Fit the relation prior on the present, untruncated training structures."""
    keep = data["present"] & ~data["truncated"]
    boxes = [data["boxes"][i][keep[i]] for i in range(len(keep))]
    labels = [data["labels"][i][keep[i]] for i in range(len(keep))]
    return AnatomicalRelationPrior(n_classes).fit(boxes, labels)


def _param_groups(model: ZRDETR, lr: float, scale: float) -> list[dict[str, Any]]:
    gp = [
        p
        for n, p in model.named_parameters()
        if (
            n.startswith("head.")
            and not n.startswith(("head.proj", "head.norm"))
            and model.head_kind == "gp"
        )
        or n == "zoom_regressor.offset"
    ]
    ids = {id(p) for p in gp}
    rest = [p for p in model.parameters() if id(p) not in ids]
    groups = [{"params": rest, "lr": lr}]
    if gp:
        groups.append({"params": gp, "lr": lr * scale, "weight_decay": 0.0})
    return groups


def _schedule(step: int, steps: int, warmup: int) -> float:
    if step < warmup:
        return (step + 1) / warmup
    return 0.5 * (1 + math.cos(math.pi * (step - warmup) / max(1, steps - warmup)))


def train_detector(
    model: ZRDETR,
    data: dict[str, torch.Tensor],
    *,
    steps: int,
    prior: AnatomicalRelationPrior | None = None,
    batch: int = 32,
    lr: float = 1e-3,
    seed: int = 0,
    label: str = "",
    extra_batches: Any = None,
    gp_lr_scale: float = 10.0,
    verbose: bool = False,
) -> dict[str, Any]:
    """Train ``model`` on ``data`` (a :func:`~zrdetr.data.make_anatomy_scenes` dict) for
    ``steps`` batches; returns the loss curve, seconds and process CPU seconds.

    The GP's variational parameters, inducing inputs and kernel hyperparameters, and the
    per-structure log-sizes of :class:`~zrdetr.zoom.BoxZoomEstimator`, learn at
    ``gp_lr_scale`` times ``lr`` (Adam moves each parameter by about ``lr`` per step, and the GP's
    outputs are linear in its variational mean). ``extra_batches(step, model)`` may return one
    more (images, targets) pair whose loss is added (the pseudo-labelled target batch of the
    UDA)."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed)
    crit = ZRDETRCriterion(
        model.n_classes,
        prior=prior if model.use_relation else None,
        n_train=len(data["images"]),
        class_queries=model.class_queries,
    )
    opt = torch.optim.AdamW(_param_groups(model, lr, gp_lr_scale), lr=lr, weight_decay=1e-4)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: _schedule(s, steps, warmup))
    n = len(data["images"])
    curve, wall, cpu = [], time.perf_counter(), time.process_time()
    model.train()
    for step in progress(range(steps), label or "training"):
        idx = torch.randint(0, n, (batch,), generator=gen)
        targets = {k: data[k][idx] for k in ("boxes", "present", "truncated", "zoom")}
        out = model(data["images"][idx], zoom=targets["zoom"] if model.use_zoom else None)
        loss, parts = crit(out, targets)
        if extra_batches is not None:
            extra = extra_batches(step, model)
            if extra is not None:
                images, tgt = extra
                loss = loss + crit(model(images), tgt)[0]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 10 == 0 or step == steps - 1:
            curve.append((step, parts["total"]))
            if verbose:
                print(step, {k: round(v, 3) for k, v in parts.items()})
    model.eval()
    return {
        "curve": curve,
        "seconds": time.perf_counter() - wall,
        "cpu_seconds": time.process_time() - cpu,
    }


@torch.no_grad()
def predict(
    model: ZRDETR, images: torch.Tensor, zoom: torch.Tensor | None = None, batch: int = 100
) -> dict[str, torch.Tensor]:
    """Final-layer outputs of ``model`` in eval mode over ``images``, in batches; without
    ``zoom`` the model uses its predicted zoom."""
    model.eval()
    keys = ("logits", "boxes", "box_var", "log_zoom")
    parts: dict[str, list] = {k: [] for k in keys}
    for s in range(0, len(images), batch):
        out = model(images[s : s + batch], None if zoom is None else zoom[s : s + batch])
        for k in keys:
            parts[k].append(out[k])
    return {k: torch.cat(v) for k, v in parts.items()}


def structure_nll(
    prior: AnatomicalRelationPrior, boxes: np.ndarray, present: np.ndarray
) -> np.ndarray:
    r"""Per structure k of each image: :math:`\tfrac12\,\mathrm{mean}_l d^2_{kl}` over the other
    present structures l (nan where none), boxes (B, K, 4), present (B, K) -> (B, K)."""
    b = torch.as_tensor(np.where(present[..., None], boxes, 0.1), dtype=torch.float64)
    d2 = prior.pair_mahalanobis(b).numpy()
    mask = prior.pair_mask(torch.as_tensor(present)).numpy()
    cnt = mask.sum(-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(cnt > 0, 0.5 * (d2 * mask).sum(-1) / cnt, np.nan)


def _best_per_class(labels, scores, boxes, K, thr):
    """Per image, the highest-scoring detection of each class above ``thr``: boxes (B, K, 4),
    present (B, K)."""
    B = labels.shape[0]
    best = np.zeros((B, K, 4)) + 0.1
    present = np.zeros((B, K), dtype=bool)
    top = np.full((B, K), -1.0)
    for b in range(B):
        for q in np.argsort(-scores[b]):
            c = labels[b, q]
            if scores[b, q] > thr and scores[b, q] > top[b, c]:
                top[b, c], best[b, c], present[b, c] = scores[b, q], boxes[b, q], True
    return best, present


def detections(
    out: dict[str, torch.Tensor],
    n_classes: int,
    prior: AnatomicalRelationPrior | None = None,
    lam: float = 0.1,
    thr: float = 0.3,
) -> dict[str, np.ndarray]:
    """Per query: label, score, box ``(cx, cy, w, h)``, mean box variance and relation NLL
    (against the best other detections above ``thr``); with ``lam > 0`` and a prior, scores are
    rescored by :math:`\\exp(-\\lambda\\,\\overline{d^2}/4)`. Arrays (B, Q[, 4])."""
    probs = out["logits"].float().softmax(-1)[..., :n_classes].numpy()
    labels, scores = probs.argmax(-1), probs.max(-1)
    boxes = out["boxes"].float().numpy()
    rel = np.full(scores.shape, np.nan)
    if prior is not None:
        best, present = _best_per_class(labels, scores, boxes, n_classes, thr)
        for q in range(scores.shape[1]):  # each query seen against the others' best boxes
            b = best.copy()
            pres = present.copy()
            rows = np.arange(len(b))
            b[rows, labels[:, q]] = boxes[:, q]
            pres[rows, labels[:, q]] = True
            rel[:, q] = structure_nll(prior, b, pres)[rows, labels[:, q]]
        if lam > 0:
            scores = scores * np.exp(-lam * np.nan_to_num(2 * rel) / 4)
    return {
        "labels": labels,
        "scores": scores,
        "boxes": boxes,
        "var": out["box_var"].float().mean(-1).numpy(),
        "rel": rel,
    }


def _xyxy(b: np.ndarray) -> np.ndarray:
    """(cx, cy, w, h) -> (x0, y0, x1, y1) in numpy (also for an image without boxes)."""
    b = np.asarray(b, dtype=float).reshape(-1, 4)
    return np.concatenate([b[:, :2] - b[:, 2:] / 2, b[:, :2] + b[:, 2:] / 2], axis=1)


def evaluate(
    det: dict[str, np.ndarray],
    data: dict[str, torch.Tensor],
    *,
    implausible_threshold: float | None = None,
    n_boot: int = 200,
    seed: int = 0,
) -> dict[str, Any]:
    """Metrics of ``det`` (from :func:`detections`) against the present structures of ``data``."""
    B, Q = det["scores"].shape
    gboxes, gpresent = data["boxes"].numpy(), data["present"].numpy()
    dets = [
        {"boxes": _xyxy(det["boxes"][b]), "scores": det["scores"][b], "labels": det["labels"][b]}
        for b in range(B)
    ]
    gts = [
        {"boxes": _xyxy(gboxes[b][gpresent[b]]), "labels": np.flatnonzero(gpresent[b])}
        for b in range(B)
    ]
    m50 = bootstrap_map(dets, gts, [0.5], n_boot=n_boot, seed=seed)
    m5095 = bootstrap_map(dets, gts, n_boot=n_boot, seed=seed)
    rows = np.arange(B)[:, None].repeat(Q, 1)
    gt_box = gboxes[rows, det["labels"]]
    has_gt = gpresent[rows, det["labels"]]
    iou = np.where(
        has_gt,
        np.diagonal(
            box_iou_np(_xyxy(det["boxes"].reshape(-1, 4)), _xyxy(gt_box.reshape(-1, 4)))
        ).reshape(B, Q),
        0.0,
    )
    correct = iou >= 0.5
    result = {
        "mAP50": m50[0],
        "mAP50 CI": (m50[1], m50[2]),
        "mAP50:95": m5095[0],
        "mAP50:95 CI": (m5095[1], m5095[2]),
        "ECE": ece(np.clip(det["scores"].reshape(-1), 0, 1), correct.reshape(-1)),
    }
    sel = has_gt & (det["scores"] > 0.3)
    v = det["var"][sel]
    result["Spearman"] = (
        uncertainty_error_spearman(v, iou[sel]) if sel.sum() > 2 and np.ptp(v) > 0 else float("nan")
    )
    if implausible_threshold is not None:
        fp = (det["scores"] > 0.5) & ~correct
        implausible = fp & (np.nan_to_num(det["rel"], nan=0.0) > implausible_threshold)
        result["implausible FP / 100 img"] = 100 * implausible.sum() / B
        result["FP / 100 img"] = 100 * fp.sum() / B
    return result


def adapt_mean_teacher(
    model: ZRDETR,
    source: dict[str, torch.Tensor],
    target_images: torch.Tensor,
    prior: AnatomicalRelationPrior,
    *,
    steps: int,
    ema: float = 0.999,
    score_threshold: float = 0.7,
    batch: int = 32,
    lr: float = 2e-4,
    seed: int = 0,
) -> dict[str, Any]:
    """Continue training ``model`` on ``source`` plus pseudo-labelled ``target_images`` from an EMA
    teacher; returns the training record and the fraction of pseudo-labels kept."""
    teacher = copy.deepcopy(model).eval()
    for p in teacher.parameters():
        p.requires_grad_(False)
    src = predict(model, source["images"][:300])
    src_det = detections(src, model.n_classes, prior, lam=0.0)
    var_cut = float(np.nanpercentile(src_det["var"][src_det["scores"] > score_threshold], 50))
    rel = src_det["rel"][src_det["scores"] > score_threshold]
    rel_cut = float(np.nanpercentile(rel, 90)) if np.isfinite(rel).any() else np.inf
    gen = torch.Generator().manual_seed(seed + 1)
    kept: list[float] = []
    K = model.n_classes

    def pseudo(step: int, student: ZRDETR):
        with torch.no_grad():
            for pt, ps in zip(teacher.parameters(), student.parameters(), strict=True):
                pt.mul_(ema).add_(ps.detach(), alpha=1 - ema)
            idx = torch.randint(0, len(target_images), (batch,), generator=gen)
            images = target_images[idx]
            det = detections(teacher(images), K, prior, lam=0.0)
        ok = (det["scores"] > score_threshold) & (det["var"] < var_cut)
        ok &= np.nan_to_num(det["rel"], nan=0.0) < rel_cut
        boxes = torch.zeros(batch, K, 4) + 0.1
        present = torch.zeros(batch, K, dtype=torch.bool)
        for b, q in zip(*np.nonzero(ok), strict=True):
            c = det["labels"][b, q]
            if not present[b, c]:
                boxes[b, c] = torch.as_tensor(det["boxes"][b, q])
                present[b, c] = True
        kept.append(float(present.float().mean()))
        noisy = (images + 0.05 * torch.randn(images.shape, generator=gen)).clamp(0, 1)
        return noisy, {"boxes": boxes, "present": present}

    record = train_detector(
        model,
        source,
        steps=steps,
        prior=prior,
        batch=batch,
        lr=lr,
        seed=seed,
        label="UDA mean teacher",
        extra_batches=pseudo,
    )
    record["kept"] = float(np.mean(kept)) if kept else 0.0
    record["thresholds"] = {"var": var_cut, "relation": rel_cut, "score": score_threshold}
    return record
