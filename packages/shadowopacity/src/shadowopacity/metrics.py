"""Evaluation metrics: opacity errors, the balanced error rate of the binary mask, errors per
opacity bin, the ordering of instance opacities and the PSNR of shadow removal."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch
from scipy.stats import kendalltau

from paperkit import check_real, check_tensor, param_error

__all__ = [
    "ber",
    "binned_mae",
    "instance_opacities",
    "instance_opacity_kendall",
    "opacity_mae",
    "opacity_rmse",
    "removal_psnr",
]


def _pair(owner: str, pred, gt, names=("pred", "gt")) -> tuple[torch.Tensor, torch.Tensor]:
    dims: dict = {}
    pred = check_tensor(names[0], owner, pred, shape=("B", "C", "H", "W"), dims=dims)
    gt = check_tensor(names[1], owner, gt, shape=("B", "C", "H", "W"), dims=dims)
    return pred, gt


def opacity_mae(pred: torch.Tensor, gt: torch.Tensor) -> float:
    """Mean absolute error ``mean |alpha_hat - alpha|`` over all pixels."""
    pred, gt = _pair("opacity_mae", pred, gt)
    return float((pred - gt).abs().mean())


def opacity_rmse(pred: torch.Tensor, gt: torch.Tensor) -> float:
    """Root mean squared error ``sqrt(mean (alpha_hat - alpha)^2)`` over all pixels."""
    pred, gt = _pair("opacity_rmse", pred, gt)
    return float((pred - gt).pow(2).mean().sqrt())


def ber(pred_bin: torch.Tensor, gt_bin: torch.Tensor) -> float:
    """Balanced error rate in percent, ``100 (1 - (TP/N_p + TN/N_n) / 2)``, of binary masks
    (any dtype; nonzero = shadow). A class absent from ``gt_bin`` counts as fully correct."""
    dims: dict = {}
    p = check_tensor("pred_bin", "ber", pred_bin, shape=("B", "C", "H", "W"), dims=dims, dtype=None)
    g = check_tensor("gt_bin", "ber", gt_bin, shape=("B", "C", "H", "W"), dims=dims, dtype=None)
    p, g = p != 0, g != 0
    n_p, n_n = int(g.sum()), int((~g).sum())
    tpr = int((p & g).sum()) / n_p if n_p else 1.0
    tnr = int((~p & ~g).sum()) / n_n if n_n else 1.0
    return 100.0 * (1.0 - 0.5 * (tpr + tnr))


def binned_mae(
    pred: torch.Tensor, gt: torch.Tensor, bins: Sequence[float] = (0.05, 0.35, 0.65, 1.0)
) -> dict[str, float]:
    """MAE over the shadow pixels grouped by their true opacity: ``(bins[i], bins[i+1]]`` for
    each i (defaults: soft (0.05, 0.35], mid (0.35, 0.65], hard (0.65, 1.0]). An empty bin is NaN.
    Returns ``{"(lo, hi]": mae}``."""
    pred, gt = _pair("binned_mae", pred, gt)
    if (
        not isinstance(bins, (list, tuple))
        or len(bins) < 2
        or any(isinstance(b, bool) or not isinstance(b, (int, float)) for b in bins)
    ):
        raise param_error("bins", "binned_mae", "a list of at least 2 numbers", bins, cls=TypeError)
    edges = [check_real("bins", "binned_mae", b, low=0.0, high=1.0) for b in bins]
    if any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
        raise param_error("bins", "binned_mae", "strictly increasing", tuple(bins))
    out = {}
    err = (pred - gt).abs()
    for lo, hi in zip(edges, edges[1:], strict=False):
        sel = (gt > lo) & (gt <= hi)
        out[f"({lo:g}, {hi:g}]"] = float(err[sel].mean()) if bool(sel.any()) else math.nan
    return out


def instance_opacities(alpha: torch.Tensor, instance_ids: torch.Tensor) -> np.ndarray:
    """Mean opacity of every (image, instance) region with id > 0: an array of shape (K,) in the
    order (image, id). The ids are those of :func:`shadowopacity.data.make_shadow_scenes`."""
    dims: dict = {}
    alpha = check_tensor("alpha", "instance_opacities", alpha, shape=("B", 1, "H", "W"), dims=dims)
    ids = check_tensor(
        "instance_ids",
        "instance_opacities",
        instance_ids,
        shape=("B", "H", "W"),
        dims=dims,
        dtype="int",
    )
    if bool((ids < 0).any()):
        raise param_error("instance_ids", "instance_opacities", "non-negative", "a negative id")
    k = int(ids.max()) + 1
    flat = ids + k * torch.arange(ids.shape[0])[:, None, None]
    sums = torch.bincount(
        flat.flatten(), weights=alpha[:, 0].flatten().double(), minlength=k * ids.shape[0]
    )
    counts = torch.bincount(flat.flatten(), minlength=k * ids.shape[0])
    sums, counts = sums.view(-1, k)[:, 1:].flatten(), counts.view(-1, k)[:, 1:].flatten()
    return (sums[counts > 0] / counts[counts > 0]).numpy()


def instance_opacity_kendall(
    pred: torch.Tensor, gt: torch.Tensor, instance_ids: torch.Tensor
) -> float:
    """Kendall's tau-b between predicted and true mean opacities of the shadow instances, pooled
    over the whole set (each instance: one (image, occluder) region of ``instance_ids``)."""
    pred, gt = _pair("instance_opacity_kendall", pred, gt)
    a = instance_opacities(pred, instance_ids)
    b = instance_opacities(gt, instance_ids)
    if a.size < 2:
        raise param_error(
            "instance_ids", "instance_opacity_kendall", "at least 2 instances", f"{a.size}"
        )
    tau = kendalltau(a, b).statistic
    return float(tau) if np.isfinite(tau) else 0.0


def removal_psnr(pred_free: torch.Tensor, gt_free: torch.Tensor) -> float:
    """PSNR (dB) of a shadow-removed image against the true shadow-free one, data range 1:
    ``10 log10(1 / MSE)`` with the MSE over all pixels, after clipping the prediction to [0, 1]."""
    pred, gt = _pair("removal_psnr", pred_free, gt_free, names=("pred_free", "gt_free"))
    mse = float((pred.clamp(0, 1) - gt).pow(2).mean())
    return 10.0 * math.log10(1.0 / max(mse, 1e-12))
