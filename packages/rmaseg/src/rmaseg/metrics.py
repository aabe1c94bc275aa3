r"""Dice and IoU of predictions against labels, per image and class, per image and per dataset.

For a predicted set :math:`I` and a label set :math:`Y`:
:math:`\mathrm{Dice} = 2|I \cap Y| / (|I| + |Y|)`, :math:`\mathrm{IoU} = |I \cap Y| / |I \cup Y|`.
:math:`\mathrm{mIoU}^I` averages, over images, the mean IoU over the classes present in the label
or the prediction of that image; :math:`\mathrm{mIoU}^D` accumulates intersections and unions
over the whole dataset before dividing (classes with an empty union are left out).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from paperkit import Described, param_error

__all__ = ["dice", "iou", "mdice_dataset", "mdice_image", "miou_dataset", "miou_image"]


def _tensor(x: Any, name: str, owner: str) -> torch.Tensor:
    if isinstance(x, np.ndarray):
        return torch.from_numpy(x)
    if isinstance(x, torch.Tensor):
        return x
    raise param_error(
        name, owner, "a torch.Tensor or numpy.ndarray", Described(type(x).__name__), cls=TypeError
    )


def _pair(pred: Any, target: Any, owner: str, min_ndim: int) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = _tensor(pred, "pred", owner), _tensor(target, "target", owner)
    if a.shape != b.shape:
        raise param_error(
            "target",
            owner,
            f"of the prediction's shape {tuple(a.shape)}",
            Described(f"shape {tuple(b.shape)}"),
        )
    if a.ndim < min_ndim:
        raise param_error(
            "pred",
            owner,
            "of shape (B, C, *spatial) for masks, (B, *spatial) for labels",
            Described(f"shape {tuple(a.shape)}"),
        )
    return a, b.to(a.device)


def _counts(pred: Any, target: Any, owner: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    a, b = _pair(pred, target, owner, 3)
    if a.dtype != torch.bool or b.dtype != torch.bool:
        raise param_error(
            "pred",
            owner,
            "boolean masks (B, C, *spatial)",
            Described(f"dtypes {a.dtype}, {b.dtype}"),
            cls=TypeError,
        )
    dims = tuple(range(2, a.ndim))
    inter = (a & b).sum(dims).to(torch.float64)
    return inter, a.sum(dims).to(torch.float64), b.sum(dims).to(torch.float64)


def dice(pred: Any, target: Any, *, smooth: float = 0.0, empty: float = 1.0) -> torch.Tensor:
    r""":math:`(2|I \cap Y| + s)/(|I| + |Y| + s)` per image and class: bool (B, C, \*spatial)
    -> float64 (B, C); ``empty`` where both sets are empty and ``smooth == 0``."""
    inter, n_pred, n_true = _counts(pred, target, "dice")
    den = n_pred + n_true + smooth
    return torch.where(den > 0, (2 * inter + smooth) / den.clamp_min(1e-300), empty)


def iou(pred: Any, target: Any, *, smooth: float = 0.0, empty: float = 1.0) -> torch.Tensor:
    r""":math:`(|I \cap Y| + s)/(|I \cup Y| + s)` per image and class, as :func:`dice`."""
    inter, n_pred, n_true = _counts(pred, target, "iou")
    den = n_pred + n_true - inter + smooth
    return torch.where(den > 0, (inter + smooth) / den.clamp_min(1e-300), empty)


def _confusion(pred: Any, target: Any, num_classes: int, owner: str):
    """Per image and class: intersection, |pred = c|, |target = c| (labels outside [0, C) count
    as no class)."""
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) or num_classes < 1:
        raise param_error("num_classes", owner, "a positive int", num_classes)
    a, b = _pair(pred, target, owner, 2)
    if a.is_floating_point() or b.is_floating_point():
        raise param_error(
            "pred",
            owner,
            "integer label maps (B, *spatial)",
            Described(f"dtypes {a.dtype}, {b.dtype}"),
            cls=TypeError,
        )
    classes = torch.arange(num_classes, device=a.device).view(1, -1, 1)
    a1 = a.reshape(a.shape[0], 1, -1) == classes
    b1 = b.reshape(b.shape[0], 1, -1) == classes
    inter = (a1 & b1).sum(-1).to(torch.float64)
    return inter, a1.sum(-1).to(torch.float64), b1.sum(-1).to(torch.float64)


def _per_image(metric: str, pred: Any, target: Any, num_classes: int, owner: str) -> float:
    inter, n_pred, n_true = _confusion(pred, target, num_classes, owner)
    union = n_pred + n_true - inter
    present = union > 0
    if metric == "iou":
        value = inter / union.clamp_min(1)
    else:
        value = 2 * inter / (n_pred + n_true).clamp_min(1)
    per_image = (value * present).sum(1) / present.sum(1).clamp_min(1)
    return float(per_image[present.any(1)].mean()) if present.any() else float("nan")


def _per_dataset(metric: str, pred: Any, target: Any, num_classes: int, owner: str) -> float:
    inter, n_pred, n_true = (x.sum(0) for x in _confusion(pred, target, num_classes, owner))
    union = n_pred + n_true - inter
    present = union > 0
    value = (
        inter / union.clamp_min(1)
        if metric == "iou"
        else 2 * inter / (n_pred + n_true).clamp_min(1)
    )
    return float(value[present].mean()) if present.any() else float("nan")


def miou_image(pred: Any, target: Any, num_classes: int) -> float:
    r""":math:`\mathrm{mIoU}^I`: mean over images of the mean IoU over classes present in the
    label or the prediction. ``pred``, ``target``: int labels (B, \*spatial); labels outside
    [0, ``num_classes``) (e.g. a void index) belong to no class."""
    return _per_image("iou", pred, target, num_classes, "miou_image")


def mdice_image(pred: Any, target: Any, num_classes: int) -> float:
    r""":math:`\mathrm{mDice}^I`, as :func:`miou_image` with Dice."""
    return _per_image("dice", pred, target, num_classes, "mdice_image")


def miou_dataset(pred: Any, target: Any, num_classes: int) -> float:
    r""":math:`\mathrm{mIoU}^D = \mathrm{mean}_c \sum_i |I_{ic} \cap Y_{ic}| / \sum_i |I_{ic} \cup
    Y_{ic}|` over classes with a non-empty union."""
    return _per_dataset("iou", pred, target, num_classes, "miou_dataset")


def mdice_dataset(pred: Any, target: Any, num_classes: int) -> float:
    r""":math:`\mathrm{mDice}^D`, as :func:`miou_dataset` with Dice."""
    return _per_dataset("dice", pred, target, num_classes, "mdice_dataset")
