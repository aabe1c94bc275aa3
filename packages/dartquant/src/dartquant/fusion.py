"""Rotation fusion (QuaRot / SpinQuant placements) and model quantisation for TinyLlama.

With the RMSNorm gains g absorbed into the weights that read the normalised residual stream
(W ← W diag(g), g ← 1), an orthogonal R1 on the residual stream is exact:

- embedding and offset: E ← E R1 (the residual stream becomes h R1);
- weights reading it (q, k, v, gate, up, lm_head): W ← W R1, since RMSNorm(h R1) = RMSNorm(h) R1;
- weights writing it (o, down): W ← R1^T W.

R2 (one h x h matrix per KV head, shared by its query heads) sits between v_proj and o_proj:
W_v[head k rows] ← R2_k^T W_v[head k rows], W_o[:, head j cols] ← W_o[:, head j cols] R2_{k(j)};
attention mixes V over positions only, so the head outputs rotate by the same R2. R3 (Q and K)
and R4 (before down_proj, with W_down ← W_down H) are online Hadamards. The rotated model computes
the same function as the original in exact arithmetic.
"""

from __future__ import annotations

import copy

import torch
from torch import nn

from dartquant.hadamard import online_hadamard as hadamard_transform
from dartquant.quant import QuantLinear, check_bits, gptq_quantize
from paperkit import Described, check_choice, param_error

__all__ = [
    "LINEAR_NAMES",
    "check_model",
    "fuse_rotations",
    "inject_channel_outliers",
    "quantize_model",
    "quantized_copy",
    "rotated_state",
]

LINEAR_NAMES = (
    "attn.q_proj",
    "attn.k_proj",
    "attn.v_proj",
    "attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
)
_READERS = {
    "attn_norm": ("attn.q_proj", "attn.k_proj", "attn.v_proj"),
    "mlp_norm": ("mlp.gate_proj", "mlp.up_proj"),
}


def check_model(model: object, owner: str) -> None:
    """Raise a clear error unless ``model`` has the LLaMA layout TinyLlama has."""
    expected = (
        "a LLaMA-style model with embed, embed_offset, layers[i].attn_norm/mlp_norm, "
        "layers[i].attn.{q,k,v,o}_proj, layers[i].mlp.{gate,up,down}_proj, norm and lm_head"
    )
    missing = [
        a for a in ("embed", "embed_offset", "layers", "norm", "lm_head") if not hasattr(model, a)
    ]
    if not missing:
        for i, layer in enumerate(model.layers):
            for name in (*LINEAR_NAMES, "attn_norm", "mlp_norm"):
                try:
                    layer.get_submodule(name)
                except AttributeError:
                    missing.append(f"layers[{i}].{name}")
    if missing:
        raise param_error(
            "model",
            owner,
            expected,
            Described(f"a {type(model).__name__} without {', '.join(missing[:3])}"),
            cls=TypeError,
        )


def _check_rotation(R: torch.Tensor | None, shape: tuple[int, ...], name: str, owner: str) -> None:
    if R is None:
        return
    if not isinstance(R, torch.Tensor) or tuple(R.shape) != shape:
        got = f"shape {tuple(R.shape)}" if isinstance(R, torch.Tensor) else type(R).__name__
        raise param_error(name, owner, f"a tensor of shape {shape}", Described(got))
    Rd = R.detach().double()
    err = (Rd.mT @ Rd - torch.eye(shape[-1], dtype=torch.float64)).abs().max().item()
    if err > 1e-3:
        raise param_error(
            name, owner, "orthogonal (R^T R = I)", Described(f"max |R^T R - I| = {err:.3g}")
        )


def rotated_state(
    model: nn.Module,
    R1: torch.Tensor | None = None,
    R2s: list[torch.Tensor | None] | None = None,
    *,
    online_hadamard: bool = False,
) -> dict[str, torch.Tensor]:
    """The state dict of ``model`` with norms absorbed and R1 / R2 / R4 folded into its weights.

    Differentiable in ``R1`` and ``R2s`` (SpinQuant-style training runs the model on this state
    through ``torch.func.functional_call``); the model itself is not modified.
    """
    state = {k: v.detach() for k, v in model.state_dict().items()}
    for i in range(len(model.layers)):
        p = f"layers.{i}."
        for norm, readers in _READERS.items():
            g = state[f"{p}{norm}.weight"]
            for r in readers:
                state[f"{p}{r}.weight"] = state[f"{p}{r}.weight"] * g
            state[f"{p}{norm}.weight"] = torch.ones_like(g)
    state["lm_head.weight"] = state["lm_head.weight"] * state["norm.weight"]
    state["norm.weight"] = torch.ones_like(state["norm.weight"])
    if R1 is not None:
        state["embed.weight"] = state["embed.weight"] @ R1
        state["embed_offset"] = state["embed_offset"] @ R1
        state["lm_head.weight"] = state["lm_head.weight"] @ R1
        for i in range(len(model.layers)):
            p = f"layers.{i}."
            for r in (*_READERS["attn_norm"], *_READERS["mlp_norm"]):
                state[f"{p}{r}.weight"] = state[f"{p}{r}.weight"] @ R1
            for w in ("attn.o_proj", "mlp.down_proj"):
                state[f"{p}{w}.weight"] = R1.T @ state[f"{p}{w}.weight"]
    n_kv, h, group = model.n_kv_heads, model.head_dim, model.n_heads // model.n_kv_heads
    for i, R2 in enumerate(R2s or []):
        if R2 is None:
            continue
        p = f"layers.{i}.attn."
        Wv = state[f"{p}v_proj.weight"].reshape(n_kv, h, -1)
        state[f"{p}v_proj.weight"] = torch.einsum("kji,kjd->kid", R2, Wv).reshape(n_kv * h, -1)
        Wo = state[f"{p}o_proj.weight"].reshape(-1, n_kv * group, h)
        R2_heads = R2.repeat_interleave(group, dim=0)
        state[f"{p}o_proj.weight"] = torch.einsum("dji,jik->djk", Wo, R2_heads).reshape(
            Wo.shape[0], -1
        )
    if online_hadamard:
        for i in range(len(model.layers)):
            key = f"layers.{i}.mlp.down_proj.weight"
            state[key] = hadamard_transform(state[key])
    return state


def fuse_rotations(
    model: nn.Module,
    R1: torch.Tensor | None = None,
    R2s: list[torch.Tensor | None] | None = None,
    *,
    online_hadamard: bool = False,
) -> nn.Module:
    """Fold R1 (d x d) and R2s (per layer [n_kv_heads, h, h] or None) into ``model`` in place,
    after absorbing the RMSNorm gains; with ``online_hadamard`` also switch on R3 / R4. The model
    computes the same logits (up to rounding). Returns the model."""
    check_model(model, "fuse_rotations")
    if any(isinstance(m, QuantLinear) for m in model.modules()):
        raise param_error(
            "model",
            "fuse_rotations",
            "a full-precision model (fuse before quantize_model)",
            Described("a quantised model"),
        )
    _check_rotation(R1, (model.dim, model.dim), "R1", "fuse_rotations")
    if R2s is not None:
        if len(R2s) != len(model.layers):
            raise param_error(
                "R2s",
                "fuse_rotations",
                f"a list of {len(model.layers)} rotations (one per layer)",
                Described(f"{len(R2s)} rotations"),
            )
        for R2 in R2s:
            _check_rotation(
                R2, (model.n_kv_heads, model.head_dim, model.head_dim), "R2s", "fuse_rotations"
            )
    if online_hadamard:
        model.set_online_hadamard(True)  # validates the Hadamard sizes before any weight changes
    with torch.no_grad():
        state = rotated_state(model, R1, R2s, online_hadamard=online_hadamard)
        model.load_state_dict(state)
    return model


def inject_channel_outliers(
    model: nn.Module, scale: float = 30.0, n_channels: int = 2, seed: int = 0
) -> nn.Module:
    """Function-preserving outlier channels at the R2 and R4 points of every layer, in place.

    ``n_channels`` seeded channels of the v_proj output (o_proj input) and of the up_proj output
    (down_proj input) are multiplied by ``scale`` and the matching o_proj / down_proj columns
    divided by it: attention and SwiGLU are linear in v and up, so the logits are unchanged but
    the o_proj / down_proj inputs carry large channels (not absorbable into norm gains).
    """
    check_model(model, "inject_channel_outliers")
    if not scale > 0:
        raise param_error("scale", "inject_channel_outliers", "positive", scale)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for layer in model.layers:
            for write, read in (
                (layer.attn.v_proj, layer.attn.o_proj),
                (layer.mlp.up_proj, layer.mlp.down_proj),
            ):
                idx = torch.randperm(write.out_features, generator=gen)[:n_channels]
                write.weight[idx] *= scale
                read.weight[:, idx] /= scale
    return model


@torch.no_grad()
def _input_hessians(model: nn.Module, tokens: torch.Tensor) -> dict[str, torch.Tensor]:
    """H = X^T X of every projection's input over the calibration tokens."""
    hessians: dict[str, torch.Tensor] = {}
    hooks = []
    for i, layer in enumerate(model.layers):
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
    ``None`` bits keep that side in full precision. GPTQ needs ``calib_tokens`` [N, T]."""
    check_model(model, "quantize_model")
    for name, bits in (("w_bits", w_bits), ("a_bits", a_bits), ("kv_bits", kv_bits)):
        if bits is not None:
            check_bits(bits, "quantize_model", name)
    check_choice("weight_quant", "quantize_model", weight_quant, ("rtn", "gptq"))
    if any(isinstance(m, QuantLinear) for m in model.modules()):
        raise param_error(
            "model",
            "quantize_model",
            "a full-precision model",
            Described("an already quantised model"),
        )
    hessians = {}
    if weight_quant == "gptq" and w_bits is not None:
        if (
            not isinstance(calib_tokens, torch.Tensor)
            or calib_tokens.dim() != 2
            or len(calib_tokens) == 0
        ):
            raise param_error(
                "calib_tokens",
                "quantize_model",
                "a non-empty token tensor [N, T] for GPTQ",
                type(calib_tokens).__name__,
            )
        hessians = _input_hessians(model, calib_tokens)
    for i, layer in enumerate(model.layers):
        for name in LINEAR_NAMES:
            parent_name, child = name.split(".")
            parent = layer.get_submodule(parent_name)
            q = QuantLinear.from_linear(
                getattr(parent, child), w_bits=w_bits, a_bits=a_bits, a_clip=a_clip
            )
            if hessians:
                with torch.no_grad():
                    q.weight.copy_(gptq_quantize(q.weight, hessians[f"{i}.{name}"], w_bits))
                q.weight_prequantized = True
            setattr(parent, child, q)
    model.set_kv_bits(kv_bits, kv_clip)
    return model


def quantized_copy(model: nn.Module, *args, **kwargs) -> nn.Module:
    """:func:`quantize_model` on a deep copy (the input model is left in full precision)."""
    return quantize_model(copy.deepcopy(model), *args, **kwargs)
