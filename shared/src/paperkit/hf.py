"""Tiny Hugging Face causal language models for tests and small-scale reproductions.

The LLM packages train and transform the field's own architecture rather than a hand-written
stand-in; this builds it from a small config. transformers is imported when called, so paperkit
does not depend on it: a package that calls this declares ``transformers`` itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from paperkit.checks import check_choice

if TYPE_CHECKING:
    import transformers

__all__ = ["FAMILIES", "tiny_causal_lm"]

#: The Llama-layout families :func:`tiny_causal_lm` builds (Qwen2 adds q/k/v biases).
FAMILIES = ("llama", "qwen2")


def tiny_causal_lm(
    family: str,
    *,
    vocab: int,
    dim: int,
    layers: int,
    heads: int,
    hidden: int,
    ctx: int,
    kv_heads: int | None = None,
    init_std: float = 0.02,
) -> transformers.PreTrainedModel:
    """A freshly initialised ``LlamaForCausalLM`` or ``Qwen2ForCausalLM`` (``family``).

    Width ``dim``, ``layers`` decoder layers of ``heads`` attention heads (``kv_heads`` key/value
    heads, default ``heads``: grouped-query attention when fewer), SwiGLU width ``hidden``,
    ``ctx`` positions (rotate-half RoPE), an untied output head, weights N(0, ``init_std``²), no
    KV cache. The caller checks the sizes (naming its own arguments) before calling.
    """
    check_choice("family", "tiny_causal_lm", family, FAMILIES)
    import transformers

    config_cls, model_cls = {
        "llama": (transformers.LlamaConfig, transformers.LlamaForCausalLM),
        "qwen2": (transformers.Qwen2Config, transformers.Qwen2ForCausalLM),
    }[family]
    config = config_cls(
        vocab_size=vocab,
        hidden_size=dim,
        intermediate_size=hidden,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads if kv_heads is None else kv_heads,
        max_position_embeddings=ctx,
        initializer_range=init_std,
        tie_word_embeddings=False,
        use_cache=False,
    )
    return model_cls(config)
