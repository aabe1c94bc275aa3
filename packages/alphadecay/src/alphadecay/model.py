r"""Tiny Hugging Face Llama-family causal LMs for small-scale pre-training.

The architecture is the field's own: :func:`tiny_llama` builds a
``transformers.LlamaForCausalLM`` (or ``Qwen2ForCausalLM``) from a small config, with token
embedding, ``n_layers`` pre-norm blocks (RMSNorm, causal attention with rotate-half rotary
position embedding, SwiGLU MLP :math:`W_{\rm down}(\mathrm{silu}(W_{\rm gate} x) \odot W_{\rm up}
x)`), final RMSNorm and an untied ``lm_head``. AlphaDecay needs no mapping for it: its tracked
modules are the model's ``nn.Linear`` layers, here ``model.layers.{i}.self_attn.{q,k,v,o}_proj``,
``model.layers.{i}.mlp.{gate,up,down}_proj`` and ``lm_head``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from paperkit import check_choice, check_int, check_memory, param_error, tiny_causal_lm

if TYPE_CHECKING:
    from transformers import PreTrainedModel

__all__ = ["FAMILIES", "tiny_llama"]

#: The Llama-family architectures :func:`tiny_llama` builds.
FAMILIES = ("llama", "qwen2")


def tiny_llama(
    vocab: int,
    d: int = 128,
    n_layers: int = 4,
    n_heads: int = 4,
    ctx: int = 64,
    hidden: int | None = None,
    *,
    family: Literal["llama", "qwen2"] = "llama",
) -> PreTrainedModel:
    """A freshly initialised ``LlamaForCausalLM`` (``family="llama"``) or ``Qwen2ForCausalLM``.

    ``hidden`` (the MLP width) defaults to Llama's ``8d/3`` rounded up to a multiple of 8;
    ``ctx`` is ``max_position_embeddings``. Weights start as N(0, 0.02^2) (transformers'
    ``initializer_range``), norms at one; the LM head is not tied to the embedding. Sizes are
    positive integers, ``d`` a multiple of ``2 * n_heads`` (the rotary pairs); sizes whose
    weights would not fit in memory are refused before anything is allocated. Call it as any
    transformers model: ``model(input_ids).logits`` has shape (B, T, vocab).

    >>> import torch
    >>> model = tiny_llama(30, d=32, n_layers=1, n_heads=2, ctx=8)
    >>> model(torch.zeros(2, 8, dtype=torch.long)).logits.shape
    torch.Size([2, 8, 30])
    """
    owner = "tiny_llama"
    vocab = check_int("vocab", owner, vocab, low=1)
    n_layers = check_int("n_layers", owner, n_layers, low=1)
    ctx = check_int("ctx", owner, ctx, low=1)
    n_heads = check_int("n_heads", owner, n_heads, low=1)
    d = check_int("d", owner, d, low=2)
    check_choice("family", owner, family, FAMILIES)
    if d % (2 * n_heads):
        raise param_error("d", owner, f"a multiple of 2 * 'n_heads' = {2 * n_heads}", d)
    hidden = (
        -(-8 * d // 3 // 8) * 8 if hidden is None else check_int("hidden", owner, hidden, low=1)
    )
    check_memory("d", owner, d, 4 * 4 * d * d)
    check_memory("vocab", owner, vocab, 4 * 2 * vocab * d)
    check_memory("hidden", owner, hidden, 4 * 3 * d * hidden)
    layer = 4 * d * d + 3 * d * hidden
    check_memory("n_layers", owner, n_layers, 4 * (2 * vocab * d + n_layers * layer))

    return tiny_causal_lm(
        family, vocab=vocab, dim=d, layers=n_layers, heads=n_heads, hidden=hidden, ctx=ctx
    )
