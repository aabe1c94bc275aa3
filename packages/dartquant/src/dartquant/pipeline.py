"""The end-to-end recipe: cache activations, calibrate R1 / R2, fuse, quantise.

Methods (all except ``"none"`` absorb the norms and use the online Hadamards R3 / R4):

- ``"none"``: RTN quantisation of the unrotated model;
- ``"quarot"``: random Hadamard R1 (d x d) and R2 (h x h per KV head), nothing learned;
- ``"dartquant"``: R1 and every layer's R2 calibrated locally by the Whip loss with QR-Orth on
  cached activations (R1: residual-stream inputs of all attention / MLP norms pooled, 10 epochs,
  batch 64, 10% subsets; R2: per-layer o_proj inputs [T, H, h], 5 epochs, batch 128, gradient
  accumulation 2), SGD lr 1e-3 momentum 0.9, Hadamard start;
- ``"cayley_whip"``: the same loss and schedule with Cayley SGD on the manifold (the optimiser
  QR-Orth replaces);
- ``"spinquant_lite"``: R1 and R2 trained end to end with Cayley SGD (momentum 0.9, lr 0.02) on
  the next-token loss of the model with fake-quantised activations and KV cache (weights in full
  precision during training, as SpinQuant; straight-through estimators), starting from
  random Hadamards, ``e2e_steps`` steps of ``e2e_batch`` calibration sequences.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn
from torch.func import functional_call

from dartquant.calibrate import calibrate_rotation
from dartquant.cayley import CayleySGD
from dartquant.fusion import check_model, fuse_rotations, quantize_model, rotated_state
from dartquant.hadamard import random_hadamard
from dartquant.quant import check_bits
from paperkit import Described, check_choice, param_error

__all__ = ["METHODS", "QuantResult", "calibrate_rotations", "collect_activations", "pipeline"]

METHODS = ("none", "quarot", "dartquant", "cayley_whip", "spinquant_lite")


@dataclass
class QuantResult:
    """What :func:`pipeline` returns: the quantised model, its full-precision rotated twin, the
    rotations and the calibration cost."""

    model: nn.Module
    fp_model: nn.Module
    method: str
    R1: torch.Tensor | None
    R2s: list[torch.Tensor] | None
    calib_seconds: float
    info: dict[str, Any] = field(default_factory=dict)


@torch.no_grad()
def collect_activations(
    model: nn.Module, tokens: torch.Tensor, batch: int = 16
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Run the model on ``tokens`` [N, T] and cache X1 = the inputs of every attention / MLP norm
    (residual stream, all layers pooled; [2 L N T, d]) and X2[l] = layer l's o_proj inputs
    reshaped to [N T, n_heads, head_dim]."""
    check_model(model, "collect_activations")
    x1: list[torch.Tensor] = []
    x2: list[list[torch.Tensor]] = [[] for _ in model.layers]
    hooks = []
    for i, layer in enumerate(model.layers):
        for norm in (layer.attn_norm, layer.mlp_norm):
            hooks.append(
                norm.register_forward_pre_hook(
                    lambda _m, a: x1.append(a[0].reshape(-1, a[0].shape[-1]))
                )
            )
        hooks.append(
            layer.attn.o_proj.register_forward_pre_hook(
                lambda _m, a, i=i: x2[i].append(a[0].reshape(-1, model.n_heads, model.head_dim))
            )
        )
    try:
        for b in range(0, len(tokens), batch):
            model(tokens[b : b + batch])
    finally:
        for h in hooks:
            h.remove()
    return torch.cat(x1), [torch.cat(x) for x in x2]


def _check_tokens(tokens: Any, vocab: int) -> None:
    if not isinstance(tokens, torch.Tensor) or tokens.dim() != 2 or tokens.dtype != torch.int64:
        got = (
            f"{tokens.dtype} shape {tuple(tokens.shape)}"
            if isinstance(tokens, torch.Tensor)
            else type(tokens).__name__
        )
        raise param_error(
            "calib_tokens", "pipeline", "an int64 tensor [n_sequences, seq_len]", Described(got)
        )
    if tokens.numel() == 0 or tokens.shape[1] < 2:
        raise param_error(
            "calib_tokens",
            "pipeline",
            "a non-empty calibration set (seq_len >= 2)",
            Described(f"shape {tuple(tokens.shape)}"),
        )
    if tokens.min() < 0 or tokens.max() >= vocab:
        raise param_error(
            "calib_tokens",
            "pipeline",
            f"token ids in [0, {vocab})",
            Described(f"ids in [{tokens.min()}, {tokens.max()}]"),
        )


def _spinquant_lite(
    model: nn.Module,
    tokens: torch.Tensor,
    *,
    bits: tuple,
    seed: int,
    steps: int,
    lr: float,
    batch: int,
    time_limit_s: float | None,
) -> tuple[torch.Tensor, list[torch.Tensor], dict[str, Any]]:
    """Cayley SGD on R1 and all R2 of the fake-quantised model's next-token loss."""
    qmodel = copy.deepcopy(model)
    qmodel.set_online_hadamard(True)
    quantize_model(qmodel, *bits)
    for p in qmodel.parameters():
        p.requires_grad_(False)
    d, n_kv, h = model.dim, model.n_kv_heads, model.head_dim
    R1 = nn.Parameter(random_hadamard(d, seed))
    R2 = nn.Parameter(
        torch.stack(
            [
                torch.stack([random_hadamard(h, seed + 1 + i)] * n_kv)
                for i in range(len(model.layers))
            ]
        )
    )
    opt = CayleySGD([R1, R2], lr=lr, momentum=0.9)
    gen = torch.Generator().manual_seed(seed)
    losses, t0 = [], time.perf_counter()
    for _ in range(steps):
        rows = torch.randint(0, len(tokens), (min(batch, len(tokens)),), generator=gen)
        x = tokens[rows]
        state = rotated_state(model, R1, list(R2), online_hadamard=True)
        logits = functional_call(qmodel, state, (x[:, :-1],))
        loss = F.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten())
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
        if time_limit_s is not None and time.perf_counter() - t0 >= time_limit_s:
            break
    return (
        R1.detach().clone(),
        [r.detach().clone() for r in R2],
        {"e2e_loss": losses, "steps": len(losses)},
    )


def calibrate_rotations(
    model: nn.Module,
    calib_tokens: torch.Tensor,
    method: str,
    *,
    seed: int = 0,
    normalize: str = "rms",
    r1_epochs: int = 10,
    r2_epochs: int = 5,
    e2e_bits: tuple[int | None, int | None, int | None] = (None, 4, 4),
    e2e_steps: int = 100,
    e2e_lr: float = 0.02,
    e2e_batch: int = 8,
    e2e_time_limit_s: float | None = None,
) -> tuple[torch.Tensor | None, list[torch.Tensor] | None, dict[str, Any]]:
    """Only the rotation step of :func:`pipeline`: ``(R1, R2s, info)`` for ``method``."""
    check_model(model, "pipeline")
    check_choice("method", "pipeline", method, METHODS)
    _check_tokens(calib_tokens, model.vocab)
    if method == "none":
        return None, None, {}
    if method == "quarot":
        R2s = [
            torch.stack([random_hadamard(model.head_dim, seed + 1 + i)] * model.n_kv_heads)
            for i in range(len(model.layers))
        ]
        return random_hadamard(model.dim, seed), R2s, {}
    if method == "spinquant_lite":
        return _spinquant_lite(
            model,
            calib_tokens,
            bits=e2e_bits,
            seed=seed,
            steps=e2e_steps,
            lr=e2e_lr,
            batch=e2e_batch,
            time_limit_s=e2e_time_limit_s,
        )
    param = "qr" if method == "dartquant" else "cayley"
    X1, X2 = collect_activations(model, calib_tokens)
    R1, h1 = calibrate_rotation(
        X1, epochs=r1_epochs, batch_size=64, parametrization=param, normalize=normalize, seed=seed
    )
    R2s, h2 = [], []
    for i, acts in enumerate(X2):
        R2, hist = calibrate_rotation(
            acts,
            epochs=r2_epochs,
            batch_size=128,
            parametrization=param,
            normalize=normalize,
            seed=seed + 1 + i,
            n_kv_heads=model.n_kv_heads,
            accumulation_steps=2,
        )
        R2s.append(R2)
        h2.append(hist)
    info = {
        "r1_whip": (h1["initial_loss"], h1["final_loss"]),
        "r2_whip": [(h["initial_loss"], h["final_loss"]) for h in h2],
        "max_over_rms": {"X1": _max_over_rms(X1), "X2": [_max_over_rms(x.flatten(1)) for x in X2]},
    }
    return R1, R2s, info


def _max_over_rms(x: torch.Tensor) -> float:
    """Mean over tokens of max_i |x_i| / RMS(x): what sets per-token quantisation error."""
    return float((x.abs().amax(-1) / x.pow(2).mean(-1).sqrt().clamp_min(1e-12)).mean())


def pipeline(
    model: nn.Module,
    calib_tokens: torch.Tensor,
    method: str = "dartquant",
    *,
    w_bits: int | None = 4,
    a_bits: int | None = 4,
    kv_bits: int | None = 4,
    weight_quant: str = "rtn",
    seed: int = 0,
    **calib_kw: Any,
) -> QuantResult:
    """Rotate (per ``method``, see the module doc) and quantise a copy of ``model``.

    Args:
        model: a full-precision TinyLlama (not modified).
        calib_tokens: calibration sequences, int64 [n_sequences, seq_len].
        method: one of :data:`METHODS`.
        w_bits, a_bits, kv_bits: bit-widths (``None`` keeps that side in full precision).
        weight_quant: ``"rtn"`` or ``"gptq"`` (GPTQ uses ``calib_tokens`` for its Hessians).
        calib_kw: options of :func:`calibrate_rotations` (``normalize``, ``r1_epochs``,
            ``e2e_steps``, ``e2e_time_limit_s`` ...). SpinQuant-lite trains with full-precision
            weights and the activation / KV bit-widths given here (SpinQuant's W16A4KV4 recipe;
            ``e2e_bits=(w, a, kv)`` overrides).
    """
    for name, bits in (("w_bits", w_bits), ("a_bits", a_bits), ("kv_bits", kv_bits)):
        if bits is not None:
            check_bits(bits, "pipeline", name)
    calib_kw.setdefault("e2e_bits", (None, a_bits, kv_bits))
    start = time.perf_counter()
    R1, R2s, info = calibrate_rotations(model, calib_tokens, method, seed=seed, **calib_kw)
    seconds = time.perf_counter() - start
    fp_model = copy.deepcopy(model)
    if method != "none":
        fuse_rotations(fp_model, R1, R2s, online_hadamard=True)
    qmodel = quantize_model(
        copy.deepcopy(fp_model),
        w_bits,
        a_bits,
        kv_bits,
        weight_quant=weight_quant,
        calib_tokens=calib_tokens,
    )
    return QuantResult(qmodel, fp_model, method, R1, R2s, seconds, info)
