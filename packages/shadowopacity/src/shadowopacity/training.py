"""Training and evaluation of the five methods of the reproduction on one backbone.

``METHODS``: ``BinaryShadowNet`` (BCE + Dice on labels binarised at 0.5), ``DirectOpacityNet``
(the opacity loss only), ``ours w/o SOA`` (full losses without the augmentation, hence without
the paired terms L_inv and L_rank), ``ours w/o SFS`` (SOA and L_alpha + L_pos, no L_inv, L_rank,
L_dec) and ``ours`` (everything). Adam, learning rate 2e-3, batches drawn with replacement.
"""

from __future__ import annotations

import time
from typing import Any

import torch

from paperkit import check_bool, check_choice, check_int, check_real, param_error, progress
from shadowopacity.applications import remove_predicted_shadow
from shadowopacity.augment import ShadowOpacityAugment
from shadowopacity.data import binarize_dataset
from shadowopacity.losses import SeparationLoss, opacity_loss, position_loss
from shadowopacity.metrics import (
    ber,
    binned_mae,
    instance_opacity_kendall,
    opacity_mae,
    opacity_rmse,
    removal_psnr,
)
from shadowopacity.model import BinaryShadowNet, DirectOpacityNet, OpacityShadowNet
from shadowopacity.physics import T_MASK

__all__ = ["METHODS", "evaluate", "train_method"]

METHODS = ("BinaryShadowNet", "DirectOpacityNet", "ours w/o SOA", "ours w/o SFS", "ours")
_DATA_KEYS = ("image", "shadow_free", "alpha", "rho", "instance_ids")


def _check_data(name: str, owner: str, data: Any) -> dict[str, torch.Tensor]:
    if not isinstance(data, dict) or not set(_DATA_KEYS) <= set(data):
        raise TypeError(
            f"The {name!r} parameter of {owner} must be the dict of make_shadow_scenes. "
            f"Got {type(data).__name__} instead."
        )
    return data


def _build(method: str, base: int) -> torch.nn.Module:
    if method == "BinaryShadowNet":
        return BinaryShadowNet(base)
    if method == "DirectOpacityNet":
        return DirectOpacityNet(base)
    return OpacityShadowNet(base, d_branch=32)


def _make_step(
    method: str,
    data: dict[str, torch.Tensor],
    batch_size: int,
    base: int,
    seed: int,
    lr: float,
    weights: dict[str, float] | None = None,
) -> tuple[torch.nn.Module, Any]:
    """The model of ``method`` and a function doing one training step on a random batch
    (arguments checked by the caller)."""
    torch.manual_seed(seed)
    gen = torch.Generator().manual_seed(seed + 1)
    model = _build(method, base)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    w = {"w_pos": 1.0, "w_inv": 0.1, "w_rank": 0.1, "w_dec": 0.01}
    if method == "ours w/o SFS":
        w.update(w_inv=0.0, w_rank=0.0, w_dec=0.0)
    w.update(weights or {})
    loss_fn = SeparationLoss(**w)
    soa = ShadowOpacityAugment()
    use_soa = method in ("ours", "ours w/o SFS")
    n = data["image"].shape[0]

    def step() -> float:
        idx = torch.randint(0, n, (batch_size,), generator=gen)
        image, alpha = data["image"][idx], data["alpha"][idx]
        if method == "BinaryShadowNet":
            loss = position_loss(model(image)["pos_logit"], binarize_dataset(alpha))
        elif method == "DirectOpacityNet":
            loss = opacity_loss(model(image)["alpha"], alpha)
        elif use_soa:
            image_aug, alpha_aug, s = soa(
                image, alpha, data["shadow_free"][idx], data["rho"][idx], generator=gen
            )
            out = model(torch.cat([image, image_aug]))
            half = {k: v[:batch_size] for k, v in out.items()}
            other = {k: v[batch_size:] for k, v in out.items()}
            loss = loss_fn(half, alpha, other, alpha_aug, s)["total"]
        else:
            loss = loss_fn(model(image), alpha)["total"]
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        return float(loss.detach())

    return model, step


def train_method(
    method: str,
    data: dict[str, torch.Tensor],
    steps: int = 800,
    batch_size: int = 16,
    base: int = 8,
    seed: int = 0,
    lr: float = 2e-3,
    weights: dict[str, float] | None = None,
    show_progress: bool = True,
) -> torch.nn.Module:
    """Train one method of :data:`METHODS` on ``data`` (a :func:`make_shadow_scenes` dict) for
    ``steps`` Adam steps; ``weights`` overrides :class:`SeparationLoss` weights (ablations).
    Returns the trained model in eval mode."""
    owner = "train_method"
    method = check_choice("method", owner, method, METHODS)
    data = _check_data("data", owner, data)
    steps = check_int("steps", owner, steps, low=1, high=1_000_000)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=4096)
    base = check_int("base", owner, base, low=1, high=256)
    seed = check_int("seed", owner, seed, low=0)
    lr = check_real("lr", owner, lr, low=0.0, high=1.0, low_open=True)
    show_progress = check_bool("show_progress", owner, show_progress)
    known = {"w_pos", "w_inv", "w_rank", "w_dec", "w_grad", "margin"}
    if weights is not None and (not isinstance(weights, dict) or not set(weights) <= known):
        raise param_error("weights", owner, f"a dict with keys among {sorted(known)}", weights)
    model, step = _make_step(method, data, batch_size, base, seed, lr, weights)
    model.train()
    for _ in progress(range(steps), f"train {method}") if show_progress else range(steps):
        step()
    return model.eval()


@torch.no_grad()
def evaluate(
    model: torch.nn.Module, data: dict[str, torch.Tensor], batch_size: int = 100
) -> dict[str, float]:
    """The reproduction's metrics of a trained model on ``data``: opacity MAE and RMSE, BER (%)
    of the model's binary mask against m = 1[alpha > 0.05], MAE per opacity bin,
    instance-opacity Kendall tau, PSNR of removal from the predicted alpha, and CPU ms per image."""
    data = _check_data("data", "evaluate", data)
    batch_size = check_int("batch_size", "evaluate", batch_size, low=1)
    t0 = time.process_time()
    outs = [model(x) for x in data["image"].split(batch_size)]
    cpu_ms = 1e3 * (time.process_time() - t0) / data["image"].shape[0]
    alpha_hat = torch.cat([o["alpha"] for o in outs]).clamp(0, 1)
    mask_hat = torch.cat([o["mask"] for o in outs])
    gt = data["alpha"]
    bins = binned_mae(alpha_hat, gt)
    removed, _ = remove_predicted_shadow(data["image"], alpha_hat)
    return {
        "MAE": opacity_mae(alpha_hat, gt),
        "RMSE": opacity_rmse(alpha_hat, gt),
        "BER": ber(mask_hat, gt > T_MASK),
        "MAE soft": bins["(0.05, 0.35]"],
        "MAE mid": bins["(0.35, 0.65]"],
        "MAE hard": bins["(0.65, 1]"],
        "Kendall": instance_opacity_kendall(alpha_hat, gt, data["instance_ids"]),
        "removal PSNR": removal_psnr(removed, data["shadow_free"]),
        "infer cpu ms/img": cpu_ms,
    }
