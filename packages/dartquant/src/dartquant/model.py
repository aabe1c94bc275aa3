"""Llama-family transformers models for rotation-based quantisation.

DartQuant works on any Hugging Face causal LM with the Llama layout (Llama, Qwen2, Mistral and
their kin): ``model.model.embed_tokens``, decoder layers ``model.model.layers[i]`` with
``input_layernorm``, ``self_attn.{q,k,v,o}_proj``, ``post_attention_layernorm`` and
``mlp.{gate,up,down}_proj``, a final RMSNorm ``model.model.norm`` and ``lm_head``. The
architecture is the field's own (transformers); this module adds what rotation-based
quantisation switches on at run time:

- the online Hadamards: R3 rotates Q and K after RoPE (q·k is unchanged) and R4 rotates the
  SwiGLU output before ``down_proj`` (whose weight carries the same H, see
  :func:`dartquant.fusion.fuse_rotations`);
- KV-cache fake quantisation: K (after RoPE and R3) and V per token and KV head.

Both act inside transformers' attention through an attention function registered under the name
``"dartquant"`` (``transformers.AttentionInterface``) and a forward pre-hook on ``down_proj``.
:func:`tiny_llama` builds the small model the reproduction trains.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import torch
import torch.nn.functional as F
from torch import nn

from dartquant.quant import bit_width, clip_ratio_arg, fake_quantize_core
from dartquant.rotations import is_power_of_two, online_hadamard_core
from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_tensor,
    param_error,
    tiny_causal_lm,
)

if TYPE_CHECKING:
    from transformers import PreTrainedModel

__all__ = [
    "FAMILIES",
    "LINEAR_NAMES",
    "Geometry",
    "check_model",
    "geometry",
    "perplexity",
    "set_kv_bits",
    "set_online_hadamard",
    "tiny_llama",
    "token_ids",
]

#: The Llama-family architectures :func:`tiny_llama` builds.
FAMILIES = ("llama", "qwen2")

#: The projections of every decoder layer, as ``layer.get_submodule`` names.
LINEAR_NAMES = (
    "self_attn.q_proj",
    "self_attn.k_proj",
    "self_attn.v_proj",
    "self_attn.o_proj",
    "mlp.gate_proj",
    "mlp.up_proj",
    "mlp.down_proj",
)
_NORMS = ("input_layernorm", "post_attention_layernorm")
ATTENTION = "dartquant"


@dataclass(frozen=True)
class Geometry:
    """The sizes the rotations are placed by, read from a model's config."""

    vocab: int
    dim: int
    n_layers: int
    n_heads: int
    n_kv_heads: int
    head_dim: int
    ffn_dim: int

    def hadamard_ready(self) -> bool:
        """Whether the online Hadamards fit: ``head_dim`` and ``ffn_dim`` are powers of 2."""
        return is_power_of_two(self.head_dim) and is_power_of_two(self.ffn_dim)


def geometry(model: nn.Module) -> Geometry:
    """The :class:`Geometry` of a checked model (from its transformers config)."""
    c = model.config
    n_heads = c.num_attention_heads
    return Geometry(
        vocab=c.vocab_size,
        dim=c.hidden_size,
        n_layers=len(model.model.layers),
        n_heads=n_heads,
        n_kv_heads=getattr(c, "num_key_value_heads", None) or n_heads,
        head_dim=getattr(c, "head_dim", None) or c.hidden_size // n_heads,
        ffn_dim=c.intermediate_size,
    )


def _has_layout(model: Any) -> bool:
    from transformers import PreTrainedModel

    if not isinstance(model, PreTrainedModel):
        return False
    body = getattr(model, "model", None)
    layers = getattr(body, "layers", None)
    if not isinstance(layers, nn.ModuleList) or not len(layers):
        return False
    if not all(hasattr(body, a) for a in ("embed_tokens", "norm")) or not hasattr(model, "lm_head"):
        return False
    for layer in layers:
        for name in (*LINEAR_NAMES, *_NORMS):
            try:
                layer.get_submodule(name)
            except AttributeError:
                return False
    return True


def check_model(model: Any, owner: str) -> PreTrainedModel:
    """``model`` if it is a transformers causal LM with the Llama layout (full precision or
    quantised), else a ``TypeError`` naming ``model``."""
    if not _has_layout(model):
        raise param_error(
            "model",
            owner,
            "a Llama-family transformers causal LM (Llama, Qwen2, Mistral layout)",
            Described(f"a {type(model).__name__}"),
            cls=TypeError,
        )
    return model


def token_ids(name: str, owner: str, tokens: Any, vocab: int, *, ndim: int) -> torch.Tensor:
    """``tokens`` checked as a non-empty integer tensor of ``ndim`` dims with every id in
    ``[0, vocab)``; returned as int64 (any integer dtype is accepted and cast)."""
    check_tensor(name, owner, tokens, dtype="int", ndim=ndim)
    lo, hi = int(tokens.min()), int(tokens.max())
    if lo < 0 or hi >= vocab:
        raise param_error(
            name, owner, f"token ids in [0, {vocab})", Described(f"ids in [{lo}, {hi}]")
        )
    return tokens.long()


def tiny_llama(
    vocab: int = 96,
    dim: int = 64,
    n_layers: int = 2,
    n_heads: int = 4,
    n_kv_heads: int | None = None,
    ffn_dim: int | None = None,
    *,
    ctx: int = 2048,
    family: Literal["llama", "qwen2"] = "llama",
) -> PreTrainedModel:
    """A freshly initialised ``LlamaForCausalLM`` (or ``Qwen2ForCausalLM``, whose q/k/v carry
    biases) small enough to train and quantise on a CPU.

    ``n_heads`` divides ``dim`` with an even head width, ``n_kv_heads`` (default ``n_heads``)
    divides ``n_heads`` (grouped-query attention), ``ffn_dim`` defaults to ``4 dim``; the LM
    head is untied. Initialisation: embedding N(0, 1) (a unit-RMS residual stream), projections
    and head N(0, 0.02^2), o_proj and down_proj scaled by 1 / sqrt(2 n_layers). Sizes whose
    weights would not fit in memory are refused before anything is allocated.

    >>> tiny_llama(96, 32, 1, 4)(torch.zeros(1, 5, dtype=torch.long)).logits.shape
    torch.Size([1, 5, 96])
    """
    owner = "tiny_llama"
    vocab = check_int("vocab", owner, vocab, low=1)
    dim = check_int("dim", owner, dim, low=1)
    n_layers = check_int("n_layers", owner, n_layers, low=1)
    n_heads = check_int("n_heads", owner, n_heads, low=1)
    ctx = check_int("ctx", owner, ctx, low=1)
    check_choice("family", owner, family, FAMILIES)
    if dim % n_heads or (dim // n_heads) % 2:
        raise param_error(
            "n_heads", owner, f"a divisor of 'dim' = {dim} leaving an even head_dim", n_heads
        )
    n_kv_heads = (
        n_heads if n_kv_heads is None else check_int("n_kv_heads", owner, n_kv_heads, low=1)
    )
    if n_heads % n_kv_heads:
        raise param_error("n_kv_heads", owner, f"a divisor of 'n_heads' = {n_heads}", n_kv_heads)
    ffn_dim = 4 * dim if ffn_dim is None else check_int("ffn_dim", owner, ffn_dim, low=1)
    head_dim = dim // n_heads
    layer_params = 2 * dim * dim + 2 * dim * n_kv_heads * head_dim + 3 * dim * ffn_dim
    check_memory("dim", owner, dim, 4 * dim * dim)
    check_memory("vocab", owner, vocab, 4 * 2 * vocab * dim)
    check_memory("ffn_dim", owner, ffn_dim, 4 * 3 * dim * ffn_dim)
    check_memory("n_layers", owner, n_layers, 4 * (2 * vocab * dim + n_layers * layer_params))

    model = tiny_causal_lm(
        family,
        vocab=vocab,
        dim=dim,
        layers=n_layers,
        heads=n_heads,
        kv_heads=n_kv_heads,
        hidden=ffn_dim,
        ctx=ctx,
    )
    with torch.no_grad():
        nn.init.normal_(model.model.embed_tokens.weight, std=1.0)
        for name, p in model.named_parameters():
            if name.endswith(("o_proj.weight", "down_proj.weight")):
                nn.init.normal_(p, std=0.02 / (2 * n_layers) ** 0.5)
            elif name.endswith("proj.weight") or name == "lm_head.weight":
                nn.init.normal_(p, std=0.02)
            elif name.endswith("proj.bias"):
                nn.init.zeros_(p)
    return model


def _attention(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    **kwargs: Any,
) -> Any:
    """transformers' SDPA attention with DartQuant's R3 and KV-cache quantisation first.

    ``query`` [B, H, T, h] and ``key``/``value`` [B, H_kv, T, h] arrive after RoPE; the online
    Hadamard rotates Q and K alike (so Q K^T is unchanged), then K and V are fake-quantised per
    token and KV head (asymmetric, ``kv_clip``), as the KV cache would be stored.
    """
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    if getattr(module, "dartquant_hadamard", False):
        query, key = online_hadamard_core(query), online_hadamard_core(key)
    bits = getattr(module, "dartquant_kv_bits", None)
    if bits is not None:
        clip = module.dartquant_kv_clip
        key = fake_quantize_core(key, bits, False, clip)[0]
        value = fake_quantize_core(value, bits, False, clip)[0]
    return sdpa_attention_forward(module, query, key, value, attention_mask, **kwargs)


def _r4_hook(module: nn.Module, args: tuple[Any, ...]) -> Any:
    """R4: the online Hadamard on down_proj's input, when switched on."""
    if getattr(module, "dartquant_hadamard", False):
        return (online_hadamard_core(args[0]), *args[1:])
    return None


def _use_dartquant_attention(model: nn.Module) -> None:
    from transformers import AttentionInterface

    if ATTENTION not in AttentionInterface._global_mapping:
        AttentionInterface.register(ATTENTION, _attention)
    if model.config._attn_implementation != ATTENTION:
        model.set_attn_implementation(ATTENTION)
    for layer in model.model.layers:
        down = layer.mlp.down_proj
        if _r4_hook not in down._forward_pre_hooks.values():
            down.register_forward_pre_hook(_r4_hook)


def set_online_hadamard(model: nn.Module, enabled: bool) -> nn.Module:
    """Switch the R3 (Q/K) and R4 (before ``down_proj``) online Hadamards on or off, in place.

    They need power-of-2 ``head_dim`` and ``ffn_dim``; switching them on for another model is
    refused. Returns the model.
    """
    owner = "set_online_hadamard"
    check_model(model, owner)
    if check_bool("enabled", owner, enabled) and not geometry(model).hadamard_ready():
        g = geometry(model)
        raise param_error(
            "enabled",
            owner,
            "False for a model whose head_dim and ffn_dim are not both powers of 2",
            Described(f"True for head_dim={g.head_dim}, ffn_dim={g.ffn_dim}"),
        )
    _use_dartquant_attention(model)
    for layer in model.model.layers:
        layer.self_attn.dartquant_hadamard = enabled
        layer.mlp.down_proj.dartquant_hadamard = enabled
    return model


def set_kv_bits(model: nn.Module, bits: int | None, clip_ratio: float = 1.0) -> nn.Module:
    """Fake-quantise the KV cache to ``bits`` (an int in [2, 16]; None: full precision) with
    clip ratio in (0, 1], in place. Returns the model."""
    owner = "set_kv_bits"
    check_model(model, owner)
    bits = bit_width("bits", owner, bits, allow_none=True)
    clip_ratio = clip_ratio_arg(owner, "clip_ratio", clip_ratio)
    _use_dartquant_attention(model)
    for layer in model.model.layers:
        layer.self_attn.dartquant_kv_bits = bits
        layer.self_attn.dartquant_kv_clip = clip_ratio
    return model


def runtime_state(model: nn.Module) -> dict[str, Any]:
    """The run-time switches of a model (what a checkpoint's weights do not carry)."""
    attn = model.model.layers[0].self_attn
    return {
        "online_hadamard": bool(getattr(attn, "dartquant_hadamard", False)),
        "kv_bits": getattr(attn, "dartquant_kv_bits", None),
        "kv_clip": getattr(attn, "dartquant_kv_clip", 1.0),
    }


@torch.no_grad()
def perplexity(model: nn.Module, tokens: torch.Tensor, seq_len: int = 64, batch: int = 32) -> float:
    """exp(mean next-token cross-entropy) over non-overlapping windows of ``seq_len + 1`` tokens.

    ``model``: a Llama-family causal LM (full precision or quantised); ``tokens``: a 1-D integer
    stream of at least ``seq_len + 1`` ids in ``[0, vocab)`` (other ids are refused), e.g. from
    :func:`dartquant.read_token_file`.
    """
    owner = "perplexity"
    check_model(model, owner)
    tokens = token_ids("tokens", owner, tokens, geometry(model).vocab, ndim=1)
    seq_len = check_int("seq_len", owner, seq_len, low=1)
    batch = check_int("batch", owner, batch, low=1)
    n = (len(tokens) - 1) // seq_len
    if n < 1:
        raise param_error(
            "tokens", owner, f"at least seq_len + 1 = {seq_len + 1} tokens", len(tokens)
        )
    windows = torch.stack([tokens[i * seq_len : i * seq_len + seq_len + 1] for i in range(n)])
    total, count = 0.0, 0
    for i in range(0, n, batch):
        w = windows[i : i + batch]
        logits = model(w[:, :-1]).logits
        total += F.cross_entropy(logits.flatten(0, 1), w[:, 1:].flatten(), reduction="sum").item()
        count += w[:, 1:].numel()
    return float(torch.exp(torch.tensor(total / count)))
