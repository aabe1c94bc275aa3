"""Local rotation calibration on cached activations (DartQuant's R1 / R2 step).

Given cached activations X (tokens x d for R1; tokens x heads x h for R2), minimise the Whip loss
of the rotated activations,

    min_R  E_b [ sum_i exp(-|(x_b R)_i|) ],

with R = Q(Z) (QR-Orth, plain SGD on Z; the paper's method) or R on the orthogonal group moved
by Cayley SGD (SpinQuant's optimiser; the baseline). Each epoch draws a random ``subset`` of the
cached tokens and walks through it in mini-batches; with ``accumulation_steps`` > 1 gradients of
consecutive batches are summed before a step. For R2 the heads of a KV group share one h x h
rotation and the loss sums over all heads. ``normalize="rms"`` divides each token by its RMS
first (the quantity a following RMSNorm would feed to the linear layer).
"""

from __future__ import annotations

import math
import time
from typing import Any

import torch

from dartquant.cayley import CayleySGD
from dartquant.losses import whip_loss
from dartquant.qrorth import INITS, QROrth, initial_rotation
from paperkit import Described, check_choice, param_error

__all__ = ["calibrate_rotation", "normalize_acts", "rotate_acts"]

OWNER = "calibrate_rotation"


def normalize_acts(x: torch.Tensor, normalize: str = "none") -> torch.Tensor:
    """``"none"``: x as is; ``"rms"``: each token (all trailing dims) divided by its RMS."""
    check_choice("normalize", OWNER, normalize, ("none", "rms"))
    if normalize == "none":
        return x
    flat = x.reshape(x.shape[0], -1)
    rms = flat.pow(2).mean(-1).clamp_min(1e-12).sqrt()
    return x / rms.view(-1, *([1] * (x.dim() - 1)))


def rotate_acts(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """x[T, d] @ R[d, d], or per head x[T, H, h] with R[n_kv, h, h] shared by H / n_kv heads."""
    if x.dim() == 2:
        return x @ R
    group = x.shape[1] // R.shape[0]
    return torch.einsum("thd,hde->the", x, R.repeat_interleave(group, dim=0))


def _check_acts(acts: Any, n_kv_heads: int | None) -> int:
    if not isinstance(acts, torch.Tensor):
        raise param_error("acts", OWNER, "a torch.Tensor", type(acts).__name__, cls=TypeError)
    if acts.dim() not in (2, 3) or not acts.is_floating_point():
        raise param_error(
            "acts",
            OWNER,
            "a float tensor [T, d] or [T, H, h]",
            Described(f"shape {tuple(acts.shape)}"),
        )
    if acts.shape[0] == 0 or acts.shape[-1] == 0:
        raise param_error(
            "acts", OWNER, "a non-empty calibration set", Described(f"shape {tuple(acts.shape)}")
        )
    if not torch.isfinite(acts).all():
        raise param_error("acts", OWNER, "finite", Described("a tensor with NaN or inf"))
    if acts.dim() == 2:
        return 1
    heads = acts.shape[1]
    n_kv = heads if n_kv_heads is None else n_kv_heads
    if isinstance(n_kv, bool) or not isinstance(n_kv, int) or n_kv < 1 or heads % n_kv:
        raise param_error("n_kv_heads", OWNER, f"a positive divisor of the {heads} heads", n_kv)
    return n_kv


def calibrate_rotation(
    acts: torch.Tensor,
    epochs: int = 10,
    batch_size: int = 64,
    lr: float = 1e-3,
    momentum: float = 0.9,
    subset: float = 0.1,
    optimizer: str = "sgd",
    parametrization: str = "qr",
    init: str = "hadamard",
    normalize: str = "none",
    seed: int = 0,
    *,
    n_kv_heads: int | None = None,
    accumulation_steps: int = 1,
    cosine_lr: bool = False,
    eval_every: int = 0,
    time_limit_s: float | None = None,
) -> tuple[torch.Tensor, dict[str, Any]]:
    """Calibrate a rotation on cached activations with the Whip loss; return ``(R, history)``.

    Args:
        acts: [T, d] (R1: one d x d rotation) or [T, H, h] (R2: one h x h rotation per KV head,
            returned as [n_kv_heads, h, h]).
        epochs, batch_size, subset: each epoch uses a random ``subset`` fraction of the T tokens
            (at least one batch) in mini-batches of ``batch_size`` rows.
        lr, momentum, optimizer: ``"sgd"`` (momentum) or ``"adam"`` on Z (QR-Orth); the Cayley
            baseline is SGD with momentum on the manifold.
        parametrization: ``"qr"`` (QR-Orth) or ``"cayley"`` (Cayley SGD, SpinQuant's optimiser).
        init: ``"hadamard"``, ``"random"`` or ``"identity"`` start.
        normalize: ``"none"`` (raw activations, as the official code) or ``"rms"``.
        n_kv_heads: KV heads for 3-D acts (GQA groups share a rotation); default H.
        accumulation_steps: batches whose gradients are summed per optimiser step.
        cosine_lr: cosine annealing of the lr over the epochs.
        eval_every: if > 0, the Whip loss of the whole (normalised) set is recorded every that
            many steps, outside the timed region.
        time_limit_s: stop once the timed optimisation exceeds this many seconds.

    ``history`` holds ``step_loss`` (per optimiser step), ``epoch_loss`` (mean per epoch; noisy:
    each epoch is a different subset), ``time_s`` (cumulative optimisation seconds per step),
    ``eval`` ((step, seconds, full-set loss) triples), ``initial_loss`` and ``final_loss`` (full
    set) and ``steps``.
    """
    n_kv = _check_acts(acts, n_kv_heads)
    for name, value in (("epochs", epochs), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise param_error(name, OWNER, "a positive int", value)
    if (
        isinstance(accumulation_steps, bool)
        or not isinstance(accumulation_steps, int)
        or accumulation_steps < 1
    ):
        raise param_error("accumulation_steps", OWNER, "a positive int", accumulation_steps)
    if not 0 < subset <= 1:
        raise param_error("subset", OWNER, "in (0, 1]", subset)
    if not lr > 0:
        raise param_error("lr", OWNER, "positive", lr)
    if not 0 <= momentum < 1:
        raise param_error("momentum", OWNER, "in [0, 1)", momentum)
    check_choice("optimizer", OWNER, optimizer, ("sgd", "adam"))
    check_choice("parametrization", OWNER, parametrization, ("qr", "cayley"))
    check_choice("init", OWNER, init, INITS)
    if parametrization == "cayley" and optimizer != "sgd":
        raise param_error("optimizer", OWNER, "'sgd' with parametrization='cayley'", optimizer)

    x_all = normalize_acts(acts.float(), normalize)
    T, d = x_all.shape[0], x_all.shape[-1]
    gen = torch.Generator().manual_seed(seed)
    if parametrization == "qr":
        module = QROrth(d, n_kv, init=init, seed=seed).to(x_all.device)
        params = [module.Z]
        opt: torch.optim.Optimizer = (
            torch.optim.SGD(params, lr=lr, momentum=momentum)
            if optimizer == "sgd"
            else torch.optim.Adam(params, lr=lr)
        )
        current = module.rotation

    else:
        start = torch.stack([initial_rotation(d, init, seed + k) for k in range(n_kv)])
        R_param = torch.nn.Parameter(start.to(x_all.device))
        params = [R_param]
        opt = CayleySGD(params, lr=lr, momentum=momentum)

        def current() -> torch.Tensor:
            return R_param[0] if n_kv == 1 else R_param

    def as_rotation(R: torch.Tensor) -> torch.Tensor:
        """The rotation in the shape rotate_acts expects ([d, d] or [n_kv, h, h])."""
        if acts.dim() == 3 and R.dim() == 2:
            return R.unsqueeze(0)
        return R

    def full_loss() -> float:
        with torch.no_grad():
            total = 0.0
            for start_row in range(0, T, 4096):
                chunk = x_all[start_row : start_row + 4096]
                total += whip_loss(
                    rotate_acts(chunk, as_rotation(current())).flatten(1)
                ).item() * len(chunk)
            return total / T

    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs) if cosine_lr else None
    per_epoch = max(min(batch_size, T), int(T * subset))
    history: dict[str, Any] = {"step_loss": [], "epoch_loss": [], "time_s": [], "eval": []}
    history["initial_loss"] = full_loss()
    history["eval"].append((0, 0.0, history["initial_loss"]))
    elapsed, steps, stop = 0.0, 0, False
    for _ in range(epochs):
        idx = torch.randperm(T, generator=gen)[:per_epoch].to(x_all.device)
        batches = [idx[i : i + batch_size] for i in range(0, per_epoch, batch_size)]
        epoch_losses = []
        tic = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        for b, rows in enumerate(batches):
            loss = whip_loss(rotate_acts(x_all[rows], as_rotation(current())).flatten(1))
            (loss / accumulation_steps).backward()
            epoch_losses.append(loss.item())
            if (b + 1) % accumulation_steps and b + 1 < len(batches):
                continue
            opt.step()
            opt.zero_grad(set_to_none=True)
            steps += 1
            elapsed += time.perf_counter() - tic
            history["step_loss"].append(loss.item())
            history["time_s"].append(elapsed)
            if eval_every and steps % eval_every == 0:
                history["eval"].append((steps, elapsed, full_loss()))
            if time_limit_s is not None and elapsed >= time_limit_s:
                stop = True
                break
            tic = time.perf_counter()
        history["epoch_loss"].append(sum(epoch_losses) / len(epoch_losses))
        if sched is not None:
            sched.step()
        if stop:
            break
    R = as_rotation(current()).detach().clone()
    if acts.dim() == 2:
        R = R.reshape(d, d)
    history["final_loss"] = full_loss()
    history["steps"] = steps
    history["seconds"] = elapsed
    if math.isnan(history["final_loss"]):
        raise FloatingPointError("calibrate_rotation diverged (NaN loss); lower lr")
    return R, history
