"""Tiny Hugging Face Llama-family causal LMs for the small-scale pre-training runs.

The architecture is the field's own: :func:`tiny_llama` builds a ``transformers.LlamaForCausalLM``
(or ``Qwen2ForCausalLM``) from a small config. Its projections are named ``q_proj``, ``k_proj``,
``v_proj``, ``o_proj``, ``gate_proj``, ``up_proj`` and ``down_proj``, as in every Llama-family
model, so :func:`subtrack.make_param_groups` finds them in any such model without a mapping.
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
    dim: int = 128,
    layers: int = 2,
    heads: int = 4,
    hidden: int | None = None,
    *,
    ctx: int = 2048,
    family: Literal["llama", "qwen2"] = "llama",
) -> PreTrainedModel:
    """A freshly initialised ``LlamaForCausalLM`` (``family="llama"``) or ``Qwen2ForCausalLM``.

    Token embedding, ``layers`` decoder blocks (RMSNorm, rotary causal attention, SwiGLU MLP of
    width ``hidden``, default ``4 * dim``), final RMSNorm and an untied ``lm_head``; weights
    N(0, 0.02^2). ``vocab``, ``dim``, ``layers``, ``heads``, ``hidden`` and ``ctx`` (the
    longest sequence) are positive integers, ``dim`` a multiple of ``2 * heads`` (rotary pairs);
    a model whose float32 weights would not fit in memory is refused before anything is built.
    Call it as any transformers model: ``model(input_ids).logits`` is (B, T, vocab).

    >>> import torch
    >>> model = tiny_llama(vocab=29, dim=16, layers=1, heads=2)
    >>> model(torch.tensor([[1, 2, 3]])).logits.shape
    torch.Size([1, 3, 29])
    """
    owner = "tiny_llama"
    vocab = check_int("vocab", owner, vocab, low=1)
    dim = check_int("dim", owner, dim, low=1)
    layers = check_int("layers", owner, layers, low=1)
    heads = check_int("heads", owner, heads, low=1)
    ctx = check_int("ctx", owner, ctx, low=1)
    hidden = 4 * dim if hidden is None else check_int("hidden", owner, hidden, low=1)
    check_choice("family", owner, family, FAMILIES)
    if dim % heads or (dim // heads) % 2:
        raise param_error("dim", owner, f"a multiple of 2 * heads = {2 * heads}", dim)
    # float32 weights: embedding and head vocab x dim each, per block 4 dim^2 + 3 dim hidden
    for name, value, numel in (
        ("dim", dim, 4 * dim * dim),
        ("hidden", hidden, 3 * dim * hidden),
        ("layers", layers, layers * (4 * dim * dim + 3 * dim * hidden)),
        ("vocab", vocab, 2 * vocab * dim),
    ):
        check_memory(name, owner, value, 4 * numel)

    return tiny_causal_lm(
        family, vocab=vocab, dim=dim, layers=layers, heads=heads, hidden=hidden, ctx=ctx
    )
