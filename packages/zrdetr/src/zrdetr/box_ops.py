r"""Box operations in torch (paper Sec. 3, the DETR set loss).

Boxes are ``(cx, cy, w, h)`` or ``(x0, y0, x1, y1)`` in normalised image coordinates.
:func:`generalized_box_iou` is Rezatofighi et al.'s GIoU,
:math:`\mathrm{GIoU}(a,b)=\mathrm{IoU}(a,b)-|C\setminus(a\cup b)|/|C|` with :math:`C` the smallest
box enclosing both, in :math:`[-1, 1]`.
"""

from __future__ import annotations

import torch

from paperkit import check_tensor

__all__ = ["box_cxcywh_to_xyxy", "box_iou", "box_xyxy_to_cxcywh", "generalized_box_iou"]


def box_cxcywh_to_xyxy(boxes: torch.Tensor) -> torch.Tensor:
    r"""``(cx, cy, w, h) -> (cx - w/2, cy - h/2, cx + w/2, cy + h/2)`` on the last axis (..., 4)."""
    check_tensor("boxes", "box_cxcywh_to_xyxy", boxes, shape=None)
    if boxes.ndim < 1 or boxes.shape[-1] != 4:
        raise ValueError(
            "The 'boxes' parameter of box_cxcywh_to_xyxy must have a last axis of size 4. "
            f"Got shape {tuple(boxes.shape)} instead."
        )
    return _to_xyxy(boxes)


def _to_xyxy(boxes: torch.Tensor) -> torch.Tensor:
    """:func:`box_cxcywh_to_xyxy` without the checks (inside the loss; empty input allowed)."""
    cx, cy, w, h = boxes.unbind(-1)
    return torch.stack([cx - 0.5 * w, cy - 0.5 * h, cx + 0.5 * w, cy + 0.5 * h], dim=-1)


def box_xyxy_to_cxcywh(boxes: torch.Tensor) -> torch.Tensor:
    r"""``(x0, y0, x1, y1) -> ((x0 + x1)/2, (y0 + y1)/2, x1 - x0, y1 - y0)`` on the last axis."""
    check_tensor("boxes", "box_xyxy_to_cxcywh", boxes, shape=None)
    if boxes.ndim < 1 or boxes.shape[-1] != 4:
        raise ValueError(
            "The 'boxes' parameter of box_xyxy_to_cxcywh must have a last axis of size 4. "
            f"Got shape {tuple(boxes.shape)} instead."
        )
    x0, y0, x1, y1 = boxes.unbind(-1)
    return torch.stack([(x0 + x1) / 2, (y0 + y1) / 2, x1 - x0, y1 - y0], dim=-1)


def _check_pair(owner: str, boxes1: torch.Tensor, boxes2: torch.Tensor) -> None:
    check_tensor("boxes1", owner, boxes1, shape=(None, 4))
    check_tensor("boxes2", owner, boxes2, shape=(None, 4))
    for name, b in (("boxes1", boxes1), ("boxes2", boxes2)):
        if bool(((b[:, 2] < b[:, 0]) | (b[:, 3] < b[:, 1])).any()):
            raise ValueError(
                f"The '{name}' parameter of {owner} must hold (x0, y0, x1, y1) boxes with "
                "x1 >= x0 and y1 >= y0. Got a box with x1 < x0 or y1 < y0 instead."
            )
    if boxes1.dtype != boxes2.dtype:
        raise TypeError(
            f"The 'boxes2' parameter of {owner} must have the dtype of 'boxes1' ({boxes1.dtype}). "
            f"Got {boxes2.dtype} instead."
        )


def _iou_union(boxes1: torch.Tensor, boxes2: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    area1 = (boxes1[:, 2] - boxes1[:, 0]) * (boxes1[:, 3] - boxes1[:, 1])
    area2 = (boxes2[:, 2] - boxes2[:, 0]) * (boxes2[:, 3] - boxes2[:, 1])
    lt = torch.maximum(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = torch.minimum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    inter = wh[..., 0] * wh[..., 1]
    union = area1[:, None] + area2[None, :] - inter
    return inter / union.clamp(min=torch.finfo(union.dtype).tiny), union


def box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    r"""Pairwise IoU :math:`|a\cap b|/|a\cup b|` of ``boxes1`` (N, 4) and ``boxes2`` (M, 4),
    both ``(x0, y0, x1, y1)``; returns (N, M)."""
    _check_pair("box_iou", boxes1, boxes2)
    return _iou_union(boxes1, boxes2)[0]


def generalized_box_iou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    r"""Pairwise GIoU of ``boxes1`` (N, 4) and ``boxes2`` (M, 4), ``(x0, y0, x1, y1)``:
    :math:`\mathrm{IoU}-(|C|-|a\cup b|)/|C|`, (N, M), in [-1, 1]."""
    _check_pair("generalized_box_iou", boxes1, boxes2)
    return _giou(boxes1, boxes2)


def _giou(boxes1: torch.Tensor, boxes2: torch.Tensor) -> torch.Tensor:
    """GIoU without the argument checks (inside the loss, on the model's own boxes)."""
    iou, union = _iou_union(boxes1, boxes2)
    lt = torch.minimum(boxes1[:, None, :2], boxes2[None, :, :2])
    rb = torch.maximum(boxes1[:, None, 2:], boxes2[None, :, 2:])
    wh = (rb - lt).clamp(min=0)
    area = wh[..., 0] * wh[..., 1]
    return iou - (area - union) / area.clamp(min=torch.finfo(area.dtype).tiny)
