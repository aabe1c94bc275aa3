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
from dartquant.fusion import fuse_rotations, quantize_model, rotated_state_core, untie_lm_head
from dartquant.model import check_model, geometry, set_online_hadamard, token_ids
from dartquant.quant import bit_width
from dartquant.rotations import is_power_of_two, random_hadamard
from paperkit import (
    Described,
    check_choice,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)

__all__ = ["METHODS", "QuantResult", "calibrate_rotations", "collect_activations", "pipeline"]

METHODS = ("none", "quarot", "dartquant", "cayley_whip", "spinquant_lite")
#: The options of :func:`calibrate_rotations` with their defaults (what ``pipeline`` passes on).
CALIBRATION_DEFAULTS: dict[str, Any] = {
    "seed": 0,
    "normalize": "rms",
    "r1_epochs": 10,
    "r2_epochs": 5,
    "e2e_bits": (None, 4, 4),
    "e2e_steps": 100,
    "e2e_lr": 0.02,
    "e2e_batch": 8,
    "e2e_time_limit_s": None,
}


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


def _cache_bytes(model: nn.Module, tokens: torch.Tensor) -> int:
    """float32 bytes of the activation caches (X1: 2 per layer, X2: 1 per layer, each
    [N T, d]) and of one normalised copy."""
    g = geometry(model)
    return 2 * 4 * 3 * g.n_layers * tokens.numel() * g.dim


def collect_activations(
    model: nn.Module, tokens: torch.Tensor, batch: int = 16
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """Run the model on ``tokens`` [N, T] and cache X1 = the inputs of every attention / MLP norm
    (residual stream, all layers pooled; [2 L N T, d]) and X2[l] = layer l's o_proj inputs
    reshaped to [N T, n_heads, head_dim].

    ``tokens``: an integer tensor [N, T] of ids in ``[0, vocab)`` (other ids are refused);
    caches that would not fit in memory are refused before the model runs.
    """
    owner = "collect_activations"
    check_model(model, owner)
    tokens = token_ids("tokens", owner, tokens, geometry(model).vocab, ndim=2)
    batch = check_int("batch", owner, batch, low=1)
    check_memory(
        "tokens", owner, Described(f"{tokens.numel()} tokens"), _cache_bytes(model, tokens)
    )
    return _collect(model, tokens, batch)


@torch.no_grad()
def _collect(
    model: nn.Module, tokens: torch.Tensor, batch: int = 16
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    g = geometry(model)
    x1: list[torch.Tensor] = []
    x2: list[list[torch.Tensor]] = [[] for _ in range(g.n_layers)]
    hooks = []
    for i, layer in enumerate(model.model.layers):
        for norm in (layer.input_layernorm, layer.post_attention_layernorm):
            hooks.append(
                norm.register_forward_pre_hook(
                    lambda _m, a: x1.append(a[0].reshape(-1, a[0].shape[-1]))
                )
            )
        hooks.append(
            layer.self_attn.o_proj.register_forward_pre_hook(
                lambda _m, a, i=i: x2[i].append(a[0].reshape(-1, g.n_heads, g.head_dim))
            )
        )
    try:
        for b in range(0, len(tokens), batch):
            model(tokens[b : b + batch])
    finally:
        for h in hooks:
            h.remove()
    return torch.cat(x1), [torch.cat(x) for x in x2]


def _calibration_args(
    owner: str, model: Any, calib_tokens: Any, method: Any, options: dict[str, Any]
) -> dict[str, Any]:
    """The arguments of :func:`calibrate_rotations`, checked for ``owner`` (the function the
    user called): returns them converted, with the int64 tokens under ``"tokens"``."""
    check_model(model, owner)
    g = geometry(model)
    tokens = token_ids("calib_tokens", owner, calib_tokens, g.vocab, ndim=2)
    if tokens.shape[1] < 2:
        raise param_error(
            "calib_tokens",
            owner,
            "sequences of at least 2 tokens [N, T >= 2]",
            Described(f"a tensor of shape {tuple(tokens.shape)}"),
        )
    check_choice("method", owner, method, METHODS)
    if method != "none" and not (is_power_of_two(g.dim) and g.hadamard_ready()):
        raise param_error(
            "model",
            owner,
            "a model whose dim, head_dim and ffn_dim are powers of 2 (Hadamard rotations)",
            Described(f"a model with dim={g.dim}, head_dim={g.head_dim}, ffn_dim={g.ffn_dim}"),
        )
    unknown = sorted(set(options) - set(CALIBRATION_DEFAULTS))
    if unknown:
        raise param_error(
            unknown[0],
            owner,
            f"an option of calibrate_rotations ({', '.join(CALIBRATION_DEFAULTS)})",
            Described("an unknown keyword"),
            cls=TypeError,
        )
    kw = {**CALIBRATION_DEFAULTS, **options}
    bits = kw["e2e_bits"]
    if not isinstance(bits, (tuple, list)):
        raise param_error(
            "e2e_bits", owner, "a tuple (w_bits, a_bits, kv_bits)", describe(bits), cls=TypeError
        )
    if len(bits) != 3:
        raise param_error(
            "e2e_bits", owner, "a tuple (w_bits, a_bits, kv_bits)", Described(f"{len(bits)} values")
        )
    out = {
        "tokens": tokens,
        "seed": check_int("seed", owner, kw["seed"], low=0),
        "normalize": check_choice("normalize", owner, kw["normalize"], ("none", "rms")),
        "r1_epochs": check_int("r1_epochs", owner, kw["r1_epochs"], low=1),
        "r2_epochs": check_int("r2_epochs", owner, kw["r2_epochs"], low=1),
        "e2e_bits": tuple(bit_width("e2e_bits", owner, b, allow_none=True) for b in bits),
        "e2e_steps": check_int("e2e_steps", owner, kw["e2e_steps"], low=1),
        "e2e_lr": check_real("e2e_lr", owner, kw["e2e_lr"], low=0, low_open=True),
        "e2e_batch": check_int("e2e_batch", owner, kw["e2e_batch"], low=1),
        "e2e_time_limit_s": kw["e2e_time_limit_s"],
    }
    if out["e2e_time_limit_s"] is not None:
        out["e2e_time_limit_s"] = check_real(
            "e2e_time_limit_s", owner, kw["e2e_time_limit_s"], low=0, low_open=True, finite=False
        )
    if method in ("dartquant", "cayley_whip"):
        check_memory(
            "calib_tokens",
            owner,
            Described(f"{tokens.numel()} tokens"),
            _cache_bytes(model, tokens),
        )
    return out


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
    set_online_hadamard(qmodel, True)
    quantize_model(qmodel, *bits)
    for p in qmodel.parameters():
        p.requires_grad_(False)
    g = geometry(model)
    d, n_kv, h = g.dim, g.n_kv_heads, g.head_dim
    R1 = nn.Parameter(random_hadamard(d, seed))
    R2 = nn.Parameter(
        torch.stack(
            [torch.stack([random_hadamard(h, seed + 1 + i)] * n_kv) for i in range(g.n_layers)]
        )
    )
    opt = CayleySGD([R1, R2], lr=lr, momentum=0.9)
    gen = torch.Generator().manual_seed(seed)
    losses, t0 = [], time.perf_counter()
    for _ in range(steps):
        rows = torch.randint(0, len(tokens), (min(batch, len(tokens)),), generator=gen)
        x = tokens[rows]
        state = rotated_state_core(model, R1, list(R2), True)
        logits = functional_call(qmodel, state, (x[:, :-1],)).logits
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
    """Only the rotation step of :func:`pipeline`: ``(R1, R2s, info)`` for ``method``.

    ``calib_tokens``: an integer tensor [N, T >= 2] of ids in ``[0, vocab)`` (other ids are
    refused). Options: ``seed``, ``normalize`` (``"rms"`` or ``"none"``), ``r1_epochs``,
    ``r2_epochs`` (local methods), ``e2e_bits`` (the (w, a, kv) bit-widths in SpinQuant-lite's
    loop), ``e2e_steps``, ``e2e_lr``, ``e2e_batch``, ``e2e_time_limit_s`` (SpinQuant-lite).
    Every method but ``"none"`` needs power-of-2 ``dim``, ``head_dim`` and ``ffn_dim``.
    Everything is checked before any work starts.
    """
    options = {
        "seed": seed,
        "normalize": normalize,
        "r1_epochs": r1_epochs,
        "r2_epochs": r2_epochs,
        "e2e_bits": e2e_bits,
        "e2e_steps": e2e_steps,
        "e2e_lr": e2e_lr,
        "e2e_batch": e2e_batch,
        "e2e_time_limit_s": e2e_time_limit_s,
    }
    args = _calibration_args("calibrate_rotations", model, calib_tokens, method, options)
    return _calibrate(model, method, **args)


def _calibrate(
    model: nn.Module,
    method: str,
    *,
    tokens: torch.Tensor,
    seed: int,
    normalize: str,
    r1_epochs: int,
    r2_epochs: int,
    e2e_bits: tuple[int | None, int | None, int | None],
    e2e_steps: int,
    e2e_lr: float,
    e2e_batch: int,
    e2e_time_limit_s: float | None,
) -> tuple[torch.Tensor | None, list[torch.Tensor] | None, dict[str, Any]]:
    if method == "none":
        return None, None, {}
    g = geometry(model)
    if method == "quarot":
        R2s = [
            torch.stack([random_hadamard(g.head_dim, seed + 1 + i)] * g.n_kv_heads)
            for i in range(g.n_layers)
        ]
        return random_hadamard(g.dim, seed), R2s, {}
    if method == "spinquant_lite":
        return _spinquant_lite(
            model,
            tokens,
            bits=e2e_bits,
            seed=seed,
            steps=e2e_steps,
            lr=e2e_lr,
            batch=e2e_batch,
            time_limit_s=e2e_time_limit_s,
        )
    param = "qr" if method == "dartquant" else "cayley"
    X1, X2 = _collect(model, tokens)
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
            n_kv_heads=g.n_kv_heads,
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
        model: a full-precision Llama-family transformers causal LM (not modified).
        calib_tokens: calibration sequences, an integer tensor [n_sequences, seq_len >= 2] of
            ids in ``[0, vocab)`` (other ids are refused).
        method: one of :data:`METHODS`.
        w_bits, a_bits, kv_bits: bit-widths in [2, 16] (``None`` keeps that side in full
            precision).
        weight_quant: ``"rtn"`` or ``"gptq"`` (GPTQ uses ``calib_tokens`` for its Hessians).
        seed: seed of the random Hadamards and calibration subsets.
        calib_kw: options of :func:`calibrate_rotations` (``normalize``, ``r1_epochs``,
            ``e2e_steps``, ``e2e_time_limit_s`` ...). SpinQuant-lite trains with
            full-precision weights and the activation / KV bit-widths given here (SpinQuant's
            W16A4KV4 recipe; ``e2e_bits=(w, a, kv)`` overrides).

    Every argument is checked before any work starts.
    """
    owner = "pipeline"
    w_bits = bit_width("w_bits", owner, w_bits, allow_none=True)
    a_bits = bit_width("a_bits", owner, a_bits, allow_none=True)
    kv_bits = bit_width("kv_bits", owner, kv_bits, allow_none=True)
    check_choice("weight_quant", owner, weight_quant, ("rtn", "gptq"))
    options = {"e2e_bits": (None, a_bits, kv_bits), **calib_kw, "seed": seed}
    args = _calibration_args(owner, model, calib_tokens, method, options)
    if method != "none" and model.lm_head.weight is model.model.embed_tokens.weight:
        model = untie_lm_head(copy.deepcopy(model))  # R1 enters the head and embedding apart
    start = time.perf_counter()
    R1, R2s, info = _calibrate(model, method, **args)
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
        calib_tokens=args["tokens"],
    )
    return QuantResult(qmodel, fp_model, method, R1, R2s, seconds, info)
