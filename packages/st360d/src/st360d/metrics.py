"""Depth metrics after the alignment that relative depth needs (Sec. 4, evaluation)."""

from __future__ import annotations

import numpy as np
import torch

from paperkit import check_choice, check_tensor, param_error

__all__ = ["depth_metrics"]


def _as_tensor(x: object) -> object:
    """numpy arrays are accepted as tensors (anything else goes to the checks as it is)."""
    return torch.from_numpy(x) if isinstance(x, np.ndarray) else x


def depth_metrics(
    pred: torch.Tensor, gt: torch.Tensor, mask: torch.Tensor | None = None, align: str = "median"
) -> dict[str, float]:
    """AbsRel, RMSE and δ1 of a depth map against ground truth on ``mask``.

    ``align="median"``: ``pred ← pred · median(gt / pred)`` (relative depth; the median of the
    per-pixel ratios, which a few wrong pixels cannot move when the rest agree, unlike
    ``median(gt) / median(pred)`` when the depth histogram has a gap at its median);
    ``"affine_disparity"``: ``1/pred`` is fitted to ``1/gt`` by least-squares scale and shift
    (affine-invariant disparity models), then inverted; ``"none"``: as given. Then
    ``AbsRel = mean |p − g| / g``, ``RMSE = sqrt(mean (p − g)²)``,
    ``δ1 = mean[max(p/g, g/p) < 1.25]``. Tensors or numpy arrays of shape ``(H, W)``; ``mask``
    boolean (default: every pixel).
    """
    owner = "depth_metrics"
    pred, gt = _as_tensor(pred), _as_tensor(gt)
    mask = None if mask is None else _as_tensor(mask)
    dims: dict = {}
    check_tensor("pred", owner, pred, shape=("H", "W"), dims=dims)
    check_tensor("gt", owner, gt, shape=("H", "W"), dims=dims)
    if mask is None:
        mask = torch.ones(gt.shape, dtype=torch.bool)
    check_tensor("mask", owner, mask, shape=("H", "W"), dims=dims, dtype="bool")
    check_choice("align", owner, align, ("median", "affine_disparity", "none"))
    p, g = pred[mask].to(torch.float64), gt[mask].to(torch.float64)
    if p.numel() == 0:
        raise param_error("mask", owner, "at least one True pixel", "an empty mask")
    if bool((g <= 0).any()):
        raise param_error("gt", owner, "positive depth on the mask", "non-positive values")
    if bool((p <= 0).any()):
        raise param_error("pred", owner, "positive depth on the mask", "non-positive values")
    if align == "median":
        p = p * (g / p).median()
    elif align == "affine_disparity":
        X = torch.stack([1.0 / p, torch.ones_like(p)], 1)
        coef = torch.linalg.lstsq(X, (1.0 / g)[:, None]).solution[:, 0]
        inv = (X @ coef).clamp(min=1e-6 * float((1.0 / g).min()))
        p = 1.0 / inv
    ratio = torch.maximum(p / g, g / p)
    return {
        "abs_rel": float(((p - g).abs() / g).mean()),
        "rmse": float(((p - g) ** 2).mean().sqrt()),
        "delta1": float((ratio < 1.25).double().mean()),
    }
