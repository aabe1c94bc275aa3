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

from paperkit import check_int, check_memory, check_real, check_tensor, describe, param_error

__all__ = ["dice", "iou", "mdice_dataset", "mdice_image", "miou_dataset", "miou_image"]


def _tensor(x: Any, name: str, owner: str, *, dtype: str, min_ndim: int) -> torch.Tensor:
    """``x`` (torch or numpy) as a non-empty tensor of ``dtype`` (``"bool"`` masks or ``"int"``
    labels) with at least ``min_ndim`` dimensions."""
    if isinstance(x, np.ndarray):
        x = torch.from_numpy(x)
    if not isinstance(x, torch.Tensor):
        raise param_error(
            name, owner, "a torch.Tensor or numpy.ndarray", describe(x), cls=TypeError
        )
    check_tensor(name, owner, x, dtype=dtype, finite=False)
    if x.ndim < min_ndim:
        layout = "(B, C, *spatial) masks" if dtype == "bool" else "(B, *spatial) labels"
        raise param_error(name, owner, f"of shape {layout}", describe(x))
    return x


def _pair(
    pred: Any, target: Any, owner: str, *, dtype: str, min_ndim: int
) -> tuple[torch.Tensor, torch.Tensor]:
    a = _tensor(pred, "pred", owner, dtype=dtype, min_ndim=min_ndim)
    b = _tensor(target, "target", owner, dtype=dtype, min_ndim=min_ndim)
    if a.shape != b.shape:  # the message names both: either may be the odd one
        raise param_error("target", owner, f"of the shape of 'pred' {tuple(a.shape)}", describe(b))
    return a, b.to(a.device)


def _counts(pred: Any, target: Any, owner: str) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    a, b = _pair(pred, target, owner, dtype="bool", min_ndim=3)
    dims = tuple(range(2, a.ndim))
    inter = (a & b).sum(dims).to(torch.float64)
    return inter, a.sum(dims).to(torch.float64), b.sum(dims).to(torch.float64)


def dice(pred: Any, target: Any, *, smooth: float = 0.0, empty: float = 1.0) -> torch.Tensor:
    r""":math:`(2|I \cap Y| + s)/(|I| + |Y| + s)` per image and class: bool (B, C, \*spatial)
    -> float64 (B, C); ``empty`` where both sets are empty and ``smooth == 0``. ``pred`` and
    ``target`` are bool arrays of one shape (torch or numpy), ``smooth >= 0``, ``empty`` finite.

    >>> dice(np.array([[[True, True]]]), np.array([[[True, False]]]))
    tensor([[0.6667]], dtype=torch.float64)
    """
    owner = "dice"
    inter, n_pred, n_true = _counts(pred, target, owner)
    smooth = check_real("smooth", owner, smooth, low=0)
    empty = check_real("empty", owner, empty)
    den = n_pred + n_true + smooth
    return torch.where(den > 0, (2 * inter + smooth) / den.clamp_min(1e-300), empty)


def iou(pred: Any, target: Any, *, smooth: float = 0.0, empty: float = 1.0) -> torch.Tensor:
    r""":math:`(|I \cap Y| + s)/(|I \cup Y| + s)` per image and class, as :func:`dice`.

    >>> iou(np.array([[[True, True]]]), np.array([[[True, False]]]))
    tensor([[0.5000]], dtype=torch.float64)
    """
    owner = "iou"
    inter, n_pred, n_true = _counts(pred, target, owner)
    smooth = check_real("smooth", owner, smooth, low=0)
    empty = check_real("empty", owner, empty)
    den = n_pred + n_true - inter + smooth
    return torch.where(den > 0, (inter + smooth) / den.clamp_min(1e-300), empty)


def _confusion(pred: Any, target: Any, num_classes: int, owner: str):
    """Per image and class: intersection, |pred = c|, |target = c| (labels outside [0, C) count
    as no class)."""
    a, b = _pair(pred, target, owner, dtype="int", min_ndim=2)
    num_classes = check_int("num_classes", owner, num_classes, low=1)
    check_memory("num_classes", owner, num_classes, 3.0 * num_classes * a.numel())
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
    label or the prediction. ``pred``, ``target``: int labels (B, \*spatial) of one shape
    (torch or numpy); labels outside [0, ``num_classes``) (e.g. a void index) belong to no class.

    >>> miou_image(np.array([[0, 1, 1]]), np.array([[0, 1, 0]]), num_classes=2)
    0.5
    """
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
