"""Rotation fusion (QuaRot / SpinQuant placements) and model quantisation for Llama-family models.

With the RMSNorm gains g absorbed into the weights that read the normalised residual stream
(W ← W diag(g), g ← 1), an orthogonal R1 on the residual stream is exact:

- embedding: E ← E R1 (the residual stream becomes h R1);
- weights reading it (q, k, v, gate, up, lm_head): W ← W R1, since RMSNorm(h R1) = RMSNorm(h) R1;
- weights writing it (o, down): W ← R1^T W (and a bias b ← b R1).

R2 (one h x h matrix per KV head, shared by its query heads) sits between v_proj and o_proj:
W_v[head k rows] ← R2_k^T W_v[head k rows] (a bias b_k ← b_k R2_k),
W_o[:, head j cols] ← W_o[:, head j cols] R2_{k(j)};
attention mixes V over positions only, so the head outputs rotate by the same R2. R3 (Q and K)
and R4 (before down_proj, with W_down ← W_down H) are online Hadamards. The rotated model computes
the same function as the original in exact arithmetic. A tied LM head is untied first (the head
and the embedding absorb different factors).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn

from dartquant.model import (
    LINEAR_NAMES,
    check_model,
    geometry,
    runtime_state,
    set_kv_bits,
    set_online_hadamard,
    token_ids,
)
from dartquant.quant import QuantLinear, bit_width, clip_ratio_arg, gptq_quantize
from dartquant.rotations import online_hadamard_core
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_real,
    check_tensor,
    param_error,
)

__all__ = [
    "fuse_rotations",
    "inject_channel_outliers",
    "quantize_model",
    "quantized_copy",
    "rotated_state",
]

_READERS = {
    "input_layernorm": ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"),
    "post_attention_layernorm": ("mlp.gate_proj", "mlp.up_proj"),
}
_WRITERS = ("self_attn.o_proj", "mlp.down_proj")
#: Largest max |R^T R - I| accepted for a rotation.
ORTHOGONALITY_TOL = 1e-3


def _rotation(name: str, owner: str, R: Any, shape: tuple[int, ...], dtype: torch.dtype) -> Any:
    """``R`` checked (shape, finite, orthogonal to 1e-3) and cast to ``dtype``; None passes."""
    if R is None:
        return None
    check_tensor(name, owner, R, shape=shape)
    Rd = R.detach().double()
    err = (Rd.mT @ Rd - torch.eye(shape[-1], dtype=torch.float64)).abs().max().item()
    if err > ORTHOGONALITY_TOL:
        raise param_error(
            name, owner, "orthogonal (R^T R = I)", Described(f"max |R^T R - I| = {err:.3g}")
        )
    return R.to(dtype)


def _rotations(
    owner: str, model: nn.Module, R1: Any, R2s: Any
) -> tuple[torch.Tensor | None, list[torch.Tensor | None] | None]:
    """R1 [d, d] and R2s (per layer [n_kv_heads, h, h] or None), checked and cast to the
    model's dtype."""
    dtype = model.model.embed_tokens.weight.dtype
    g = geometry(model)
    R1 = _rotation("R1", owner, R1, (g.dim, g.dim), dtype)
    if R2s is None:
        return R1, None
    n = g.n_layers
    if not isinstance(R2s, (list, tuple)) or len(R2s) != n:
        got = (
            f"{len(R2s)} rotations" if isinstance(R2s, (list, tuple)) else f"a {type(R2s).__name__}"
        )
        raise param_error("R2s", owner, f"a list of {n} rotations (one per layer)", Described(got))
    shape = (g.n_kv_heads, g.head_dim, g.head_dim)
    return R1, [_rotation("R2s", owner, R2, shape, dtype) for R2 in R2s]


def rotated_state(
    model: nn.Module,
    R1: torch.Tensor | None = None,
    R2s: list[torch.Tensor | None] | None = None,
    *,
    online_hadamard: bool = False,
) -> dict[str, torch.Tensor]:
    """The state dict of ``model`` with norms absorbed and R1 / R2 / R4 folded into its weights.

    Differentiable in ``R1`` and ``R2s`` (SpinQuant-style training runs the model on this state
    through ``torch.func.functional_call``); the model itself is not modified. ``R1`` is
    ``[dim, dim]``, ``R2s`` one ``[n_kv_heads, head_dim, head_dim]`` or None per layer; both must
    be orthogonal (max |R^T R - I| <= 1e-3) and finite (NaN and inf are refused), and are cast
    to the model's dtype.
    """
    owner = "rotated_state"
    check_model(model, owner)
    R1, R2s = _rotations(owner, model, R1, R2s)
    online_hadamard = check_bool("online_hadamard", owner, online_hadamard)
    return rotated_state_core(model, R1, R2s, online_hadamard)


def untie_lm_head(model: nn.Module) -> nn.Module:
    """Give a model whose LM head shares the embedding matrix a head of its own (same values),
    in place; the config records it. Returns the model."""
    emb, head = model.model.embed_tokens.weight, model.lm_head.weight
    if head is emb or head.data_ptr() == emb.data_ptr():
        model.lm_head.weight = nn.Parameter(emb.detach().clone())
        model.config.tie_word_embeddings = False
    return model


def rotated_state_core(
    model: nn.Module,
    R1: torch.Tensor | None,
    R2s: list[torch.Tensor | None] | None,
    online_hadamard: bool,
) -> dict[str, torch.Tensor]:
    """:func:`rotated_state` on checked arguments."""
    state = {k: v.detach() for k, v in model.state_dict().items()}
    g = geometry(model)
    layers = [f"model.layers.{i}." for i in range(g.n_layers)]
    for p in layers:
        for norm, readers in _READERS.items():
            gain = state[f"{p}{norm}.weight"]
            for r in readers:
                state[f"{p}{r}.weight"] = state[f"{p}{r}.weight"] * gain
            state[f"{p}{norm}.weight"] = torch.ones_like(gain)
    state["lm_head.weight"] = state["lm_head.weight"] * state["model.norm.weight"]
    state["model.norm.weight"] = torch.ones_like(state["model.norm.weight"])
    if R1 is not None:
        state["model.embed_tokens.weight"] = state["model.embed_tokens.weight"] @ R1
        state["lm_head.weight"] = state["lm_head.weight"] @ R1
        for p in layers:
            for r in (*_READERS["input_layernorm"], *_READERS["post_attention_layernorm"]):
                state[f"{p}{r}.weight"] = state[f"{p}{r}.weight"] @ R1
            for w in _WRITERS:
                state[f"{p}{w}.weight"] = R1.T @ state[f"{p}{w}.weight"]
                if f"{p}{w}.bias" in state:
                    state[f"{p}{w}.bias"] = state[f"{p}{w}.bias"] @ R1
    n_kv, h, group = g.n_kv_heads, g.head_dim, g.n_heads // g.n_kv_heads
    for p, R2 in zip(layers, R2s or [], strict=False):
        if R2 is None:
            continue
        p = f"{p}self_attn."
        Wv = state[f"{p}v_proj.weight"].reshape(n_kv, h, -1)
        state[f"{p}v_proj.weight"] = torch.einsum("kji,kjd->kid", R2, Wv).reshape(n_kv * h, -1)
        if f"{p}v_proj.bias" in state:
            bv = state[f"{p}v_proj.bias"].reshape(n_kv, h)
            state[f"{p}v_proj.bias"] = torch.einsum("kj,kji->ki", bv, R2).reshape(-1)
        Wo = state[f"{p}o_proj.weight"].reshape(-1, n_kv * group, h)
        R2_heads = R2.repeat_interleave(group, dim=0)
        state[f"{p}o_proj.weight"] = torch.einsum("dji,jik->djk", Wo, R2_heads).reshape(
            Wo.shape[0], -1
        )
    if online_hadamard:
        for p in layers:
            key = f"{p}mlp.down_proj.weight"
            state[key] = online_hadamard_core(state[key])
    return state


def fuse_rotations(
    model: nn.Module,
    R1: torch.Tensor | None = None,
    R2s: list[torch.Tensor | None] | None = None,
    *,
    online_hadamard: bool = False,
) -> nn.Module:
    """Fold R1 (d x d) and R2s (per layer [n_kv_heads, h, h] or None) into ``model`` in place,
    after absorbing the RMSNorm gains; with ``online_hadamard`` also switch on R3 / R4 (the
    model's ``head_dim`` and ``ffn_dim`` must be powers of 2). The model computes the same logits
    (up to rounding). Returns the model. The rotations are checked and cast as in
    :func:`rotated_state` (NaN and inf refused); nothing is modified when a check fails."""
    owner = "fuse_rotations"
    check_model(model, owner)
    if any(isinstance(m, QuantLinear) for m in model.modules()):
        raise param_error(
            "model",
            owner,
            "a full-precision model (fuse before quantize_model)",
            Described("a quantised model"),
        )
    R1, R2s = _rotations(owner, model, R1, R2s)
    online_hadamard = check_bool("online_hadamard", owner, online_hadamard)
    g = geometry(model)
    if online_hadamard and not g.hadamard_ready():
        raise param_error(
            "model",
            owner,
            "a model whose head_dim and ffn_dim are powers of 2 (online_hadamard=True)",
            Described(f"a model with head_dim={g.head_dim}, ffn_dim={g.ffn_dim}"),
        )
    untie_lm_head(model)
    with torch.no_grad():
        model.load_state_dict(rotated_state_core(model, R1, R2s, online_hadamard))
    if online_hadamard:
        set_online_hadamard(model, True)
    return model


def inject_channel_outliers(
    model: nn.Module, scale: float = 30.0, n_channels: int = 2, seed: int = 0
) -> nn.Module:
    """Function-preserving outlier channels at the R2 and R4 points of every layer, in place.

    ``n_channels`` seeded channels of the v_proj output (o_proj input) and of the up_proj output
    (down_proj input) are multiplied by ``scale`` (finite, > 0) and the matching o_proj /
    down_proj columns divided by it: attention and SwiGLU are linear in v and up, so the logits
    are unchanged but the o_proj / down_proj inputs carry large channels (not absorbable into
    norm gains).
    """
    owner = "inject_channel_outliers"
    check_model(model, owner)
    scale = check_real("scale", owner, scale, low=0, low_open=True)
    g = geometry(model)
    widest = min(g.n_kv_heads * g.head_dim, g.ffn_dim)
    n_channels = check_int("n_channels", owner, n_channels, low=0, high=widest)
    seed = check_int("seed", owner, seed, low=0)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in model.model.layers:
            for write, read in (
                (layer.self_attn.v_proj, layer.self_attn.o_proj),
                (layer.mlp.up_proj, layer.mlp.down_proj),
            ):
                idx = torch.randperm(write.out_features, generator=gen)[:n_channels]
                write.weight[idx] *= scale
                if write.bias is not None:
                    write.bias[idx] *= scale
                read.weight[:, idx] /= scale
    return model


@torch.no_grad()
def _input_hessians(model: nn.Module, tokens: torch.Tensor) -> dict[str, torch.Tensor]:
    """H = X^T X of every projection's input over the calibration tokens."""
    hessians: dict[str, torch.Tensor] = {}
    hooks = []
    for i, layer in enumerate(model.model.layers):
        for name in LINEAR_NAMES:
            key = f"{i}.{name}"

            def hook(_mod, args, key=key):
                x = args[0].reshape(-1, args[0].shape[-1]).double()
                hessians[key] = hessians.get(key, 0) + x.T @ x

            hooks.append(layer.get_submodule(name).register_forward_pre_hook(hook))
    try:
        for b in range(0, len(tokens), 16):
            model(tokens[b : b + 16])
    finally:
        for h in hooks:
            h.remove()
    return hessians


_BITS = ("w_bits", "a_bits", "kv_bits")


def _quant_args(owner: str, model: Any, **kw: Any) -> dict[str, Any]:
    """The arguments of :func:`quantize_model`, checked for ``owner``."""
    check_model(model, owner)
    if any(isinstance(m, QuantLinear) for m in model.modules()):
        raise param_error(
            "model", owner, "a full-precision model", Described("an already quantised model")
        )
    args = {name: bit_width(name, owner, kw[name], allow_none=True) for name in _BITS}
    args["a_clip"] = clip_ratio_arg(owner, "a_clip", kw["a_clip"])
    args["kv_clip"] = clip_ratio_arg(owner, "kv_clip", kw["kv_clip"])
    args["weight_quant"] = check_choice("weight_quant", owner, kw["weight_quant"], ("rtn", "gptq"))
    tokens = kw["calib_tokens"]
    if tokens is not None:
        tokens = token_ids("calib_tokens", owner, tokens, geometry(model).vocab, ndim=2)
    elif args["weight_quant"] == "gptq" and args["w_bits"] is not None:
        raise param_error(
            "calib_tokens", owner, "a token tensor [N, T] for GPTQ", Described("None")
        )
    args["calib_tokens"] = tokens
    return args


def _quantize(
    model: nn.Module,
    *,
    w_bits: int | None,
    a_bits: int | None,
    kv_bits: int | None,
    a_clip: float,
    kv_clip: float,
    weight_quant: str,
    calib_tokens: torch.Tensor | None,
) -> nn.Module:
    online = runtime_state(model)["online_hadamard"]  # R4 lives on down_proj, replaced below
    hessians = {}
    if weight_quant == "gptq" and w_bits is not None:
        hessians = _input_hessians(model, calib_tokens)
    for i, layer in enumerate(model.model.layers):
        for name in LINEAR_NAMES:
            parent_name, child = name.rsplit(".", 1)
            parent = layer.get_submodule(parent_name)
            q = QuantLinear.from_linear(
                getattr(parent, child), w_bits=w_bits, a_bits=a_bits, a_clip=a_clip
            )
            if hessians:
                with torch.no_grad():
                    q.weight.copy_(gptq_quantize(q.weight, hessians[f"{i}.{name}"], w_bits))
                q.weight_prequantized = True
            setattr(parent, child, q)
    set_online_hadamard(model, online)
    set_kv_bits(model, kv_bits, kv_clip)
    return model


def quantize_model(
    model: nn.Module,
    w_bits: int | None = 4,
    a_bits: int | None = 4,
    kv_bits: int | None = 4,
    *,
    a_clip: float = 0.9,
    kv_clip: float = 1.0,
    weight_quant: str = "rtn",
    calib_tokens: torch.Tensor | None = None,
) -> nn.Module:
    """Replace every projection of the decoder layers by a :class:`QuantLinear` (weights
    per-channel symmetric RTN or GPTQ, inputs per-token asymmetric) and fake-quantise the KV
    cache, in place; ``lm_head`` and the embedding stay in full precision. Returns the model.

    Bit-widths are ints in [2, 16] or ``None`` (that side stays in full precision); the clip
    ratios are in (0, 1]. GPTQ needs ``calib_tokens``, an integer tensor [N, T] of ids in
    ``[0, vocab)`` (its Hessians come from the model's activations on them). Arguments are
    checked before the model is touched.
    """
    args = _quant_args(
        "quantize_model",
        model,
        w_bits=w_bits,
        a_bits=a_bits,
        kv_bits=kv_bits,
        a_clip=a_clip,
        kv_clip=kv_clip,
        weight_quant=weight_quant,
        calib_tokens=calib_tokens,
    )
    return _quantize(model, **args)


def quantized_copy(
    model: nn.Module,
    w_bits: int | None = 4,
    a_bits: int | None = 4,
    kv_bits: int | None = 4,
    *,
    a_clip: float = 0.9,
    kv_clip: float = 1.0,
    weight_quant: str = "rtn",
    calib_tokens: torch.Tensor | None = None,
) -> nn.Module:
    """:func:`quantize_model` on a deep copy (the input model is left in full precision)."""
    args = _quant_args(
        "quantized_copy",
        model,
        w_bits=w_bits,
        a_bits=a_bits,
        kv_bits=kv_bits,
        a_clip=a_clip,
        kv_clip=kv_clip,
        weight_quant=weight_quant,
        calib_tokens=calib_tokens,
    )
    return _quantize(copy.deepcopy(model), **args)
