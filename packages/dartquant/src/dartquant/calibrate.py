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
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["calibrate_rotation", "normalize_acts", "rotate_acts"]

OWNER = "calibrate_rotation"
NORMALIZE = ("none", "rms")


def normalize_acts(x: torch.Tensor, normalize: str = "none") -> torch.Tensor:
    """``"none"``: x as is; ``"rms"``: each token (row of x[T, d], or x[T, H, h] over all its
    trailing dims) divided by its RMS. NaN and inf are refused.

    >>> normalize_acts(torch.tensor([[3.0, 4.0]]), "rms") * 12.5**0.5
    tensor([[3., 4.]])
    """
    owner = "normalize_acts"
    check_tensor("x", owner, x, ndim=(2, 3))
    check_choice("normalize", owner, normalize, NORMALIZE)
    return _normalize(x, normalize)


def _normalize(x: torch.Tensor, normalize: str) -> torch.Tensor:
    if normalize == "none":
        return x
    flat = x.reshape(x.shape[0], -1)
    rms = flat.pow(2).mean(-1).clamp_min(1e-12).sqrt()
    return x / rms.view(-1, *([1] * (x.dim() - 1)))


def rotate_acts(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    """x[T, d] @ R[d, d], or per head x[T, H, h] with R[n_kv, h, h] shared by H / n_kv heads.

    Computed in ``torch.promote_types(x.dtype, R.dtype)``; NaN and inf are refused.
    """
    owner = "rotate_acts"
    check_tensor("x", owner, x, ndim=(2, 3))
    check_tensor("R", owner, R, ndim=(2, 3))
    if x.dim() != R.dim():
        raise param_error(
            "x",
            owner,
            "as many dims as R (x [T, d] with R [d, d], or x [T, H, h] with R [n_kv, h, h])",
            Described(f"x of shape {tuple(x.shape)} with 'R' of shape {tuple(R.shape)}"),
        )
    dims: dict = {}
    if x.dim() == 2:
        check_tensor("x", owner, x, shape=("T", "d"), dims=dims, finite=False)
        check_tensor("R", owner, R, shape=("d", "d"), dims=dims, finite=False)
    else:
        check_tensor("x", owner, x, shape=("T", "H", "h"), dims=dims, finite=False)
        check_tensor("R", owner, R, shape=("n_kv", "h", "h"), dims=dims, finite=False)
        if x.shape[1] % R.shape[0]:
            raise param_error(
                "R",
                owner,
                f"one rotation per KV head, a divisor of the H={x.shape[1]} heads of x",
                Described(f"{R.shape[0]} rotations"),
            )
    dtype = torch.promote_types(x.dtype, R.dtype)
    return _rotate(x.to(dtype), R.to(dtype))


def _rotate(x: torch.Tensor, R: torch.Tensor) -> torch.Tensor:
    if x.dim() == 2:
        return x @ R
    group = x.shape[1] // R.shape[0]
    return torch.einsum("thd,hde->the", x, R.repeat_interleave(group, dim=0))


def _kv_heads(acts: torch.Tensor, n_kv_heads: Any) -> int:
    """The number of rotations: 1 for [T, d] acts, ``n_kv_heads`` (default H) for [T, H, h]."""
    if acts.dim() == 2:
        if n_kv_heads is not None:
            raise param_error(
                "acts", OWNER, "3-D [T, H, h] when n_kv_heads is given", describe(acts)
            )
        return 1
    heads = acts.shape[1]
    n_kv = heads if n_kv_heads is None else check_int("n_kv_heads", OWNER, n_kv_heads, low=1)
    if heads % n_kv:
        raise param_error("n_kv_heads", OWNER, f"a divisor of the {heads} heads of acts", n_kv)
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
            returned as [n_kv_heads, h, h]); any floating dtype, cast to float32 (the
            calibration and R are float32). NaN and inf are refused.
        epochs, batch_size, subset: each epoch uses a random ``subset`` fraction of the T tokens
            (at least one batch) in mini-batches of ``batch_size`` rows.
        lr, momentum, optimizer: ``"sgd"`` (momentum) or ``"adam"`` on Z (QR-Orth); the Cayley
            baseline is SGD with momentum on the manifold.
        parametrization: ``"qr"`` (QR-Orth) or ``"cayley"`` (Cayley SGD, SpinQuant's optimiser).
        init: ``"hadamard"``, ``"random"`` or ``"identity"`` start.
        normalize: ``"none"`` (raw activations, as the official code) or ``"rms"``.
        n_kv_heads: KV heads for 3-D acts (GQA groups share a rotation); default H; only for
            3-D acts.
        accumulation_steps: batches whose gradients are summed per optimiser step.
        cosine_lr: cosine annealing of the lr over the epochs.
        eval_every: if > 0, the Whip loss of the whole (normalised) set is recorded every that
            many steps, outside the timed region.
        time_limit_s: stop once the timed optimisation exceeds this many seconds (> 0).

    ``history`` holds ``step_loss`` (per optimiser step), ``epoch_loss`` (mean per epoch; noisy:
    each epoch is a different subset), ``time_s`` (cumulative optimisation seconds per step),
    ``eval`` ((step, seconds, full-set loss) triples), ``initial_loss`` and ``final_loss`` (full
    set) and ``steps``.
    """
    check_tensor("acts", OWNER, acts, ndim=(2, 3))
    n_kv = _kv_heads(acts, n_kv_heads)
    epochs = check_int("epochs", OWNER, epochs, low=1)
    batch_size = check_int("batch_size", OWNER, batch_size, low=1)
    accumulation_steps = check_int("accumulation_steps", OWNER, accumulation_steps, low=1)
    subset = check_real("subset", OWNER, subset, low=0, low_open=True, high=1)
    lr = check_real("lr", OWNER, lr, low=0, low_open=True)
    momentum = check_real("momentum", OWNER, momentum, low=0, high=1, high_open=True)
    check_choice("optimizer", OWNER, optimizer, ("sgd", "adam"))
    check_choice("parametrization", OWNER, parametrization, ("qr", "cayley"))
    check_choice("init", OWNER, init, INITS)
    check_choice("normalize", OWNER, normalize, NORMALIZE)
    seed = check_int("seed", OWNER, seed, low=0)
    cosine_lr = check_bool("cosine_lr", OWNER, cosine_lr)
    eval_every = check_int("eval_every", OWNER, eval_every, low=0)
    if time_limit_s is not None:
        time_limit_s = check_real(
            "time_limit_s", OWNER, time_limit_s, low=0, low_open=True, finite=False
        )
    if parametrization == "cayley" and optimizer != "sgd":
        raise param_error("optimizer", OWNER, "'sgd' with parametrization='cayley'", optimizer)

    x_all = _normalize(acts.float(), normalize)
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
                total += whip_loss(_rotate(chunk, as_rotation(current())).flatten(1)).item() * len(
                    chunk
                )
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
            loss = whip_loss(_rotate(x_all[rows], as_rotation(current())).flatten(1))
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
