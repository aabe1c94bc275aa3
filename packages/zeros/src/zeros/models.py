"""TinyLM: a small pre-LayerNorm decoder for the sequence tasks, with a choice of attention."""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
from torch import nn

from paperkit import check_choice, param_error
from zeros.baselines import LinearAttention, SoftmaxAttention
from zeros.layers import ZeroSAttention

__all__ = ["ATTENTIONS", "TinyLM", "make_attention"]

ATTENTIONS = ("zeros", "softmax", "linear", "linear_relu")


def make_attention(
    attn: str, dim: int, heads: int, max_seq_len: int, *, first_layer: bool = False, **kwargs: Any
) -> nn.Module:
    """One attention layer by name: ``zeros``, ``softmax``, ``linear`` (elu+1), ``linear_relu``."""
    check_choice("attn", "make_attention", attn, ATTENTIONS)
    if attn == "zeros":
        return ZeroSAttention(
            dim, heads, max_seq_len=max_seq_len, first_layer=first_layer, **kwargs
        )
    if attn == "softmax":
        return SoftmaxAttention(dim, heads, max_seq_len=max_seq_len, **kwargs)
    feature_map = "relu" if attn == "linear_relu" else "elu1"
    return LinearAttention(dim, heads, feature_map=feature_map, max_seq_len=max_seq_len, **kwargs)


class Block(nn.Module):
    def __init__(self, attention: nn.Module, dim: int) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = attention
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyLM(nn.Module):
    """Token embedding, ``depth`` pre-LN blocks (attention + 4x GELU MLP), final LN, linear head.

    Args:
        vocab: vocabulary size.
        dim, depth, heads: width, number of blocks, heads per attention layer.
        attn: ``"zeros"``, ``"softmax"``, ``"linear"`` (elu+1) or ``"linear_relu"``.
        max_seq_len: longest input.
        zero_order: ZeroS only: where the zero-order gate is kept: ``"first"`` layer (the method),
            ``"all"`` layers or ``"none"``.
        **attn_kwargs: passed to every attention layer (e.g. ``terms="first"`` for ZeroS).

    Positions come from RoPE inside the attention (linear attention has none), so there is no
    position embedding. Initialisation as GPT-2: N(0, 0.02), output projections of the residual
    branches N(0, 0.02/sqrt(2 depth)).
    """

    def __init__(
        self,
        vocab: int,
        dim: int = 64,
        depth: int = 2,
        heads: int = 4,
        attn: str = "zeros",
        max_seq_len: int = 2048,
        *,
        zero_order: Literal["first", "all", "none"] = "first",
        **attn_kwargs: Any,
    ) -> None:
        super().__init__()
        for name, value in (("vocab", vocab), ("dim", dim), ("depth", depth), ("heads", heads)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise param_error(name, "TinyLM", "a positive integer", value)
        check_choice("zero_order", "TinyLM", zero_order, ("first", "all", "none"))
        self.embed = nn.Embedding(vocab, dim)
        self.blocks = nn.ModuleList()
        for i in range(depth):
            extra = {}
            if attn == "zeros":
                extra["first_layer"] = zero_order == "all" or (zero_order == "first" and i == 0)
            self.blocks.append(
                Block(make_attention(attn, dim, heads, max_seq_len, **extra, **attn_kwargs), dim)
            )
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, vocab)
        self._init(depth)

    def _init(self, depth: int) -> None:
        out_std = 0.02 / math.sqrt(2 * depth)
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, std=0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for block in self.blocks:
            block.attn.reset_parameters(out_std=out_std)
            nn.init.normal_(block.mlp[2].weight, std=out_std)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """Logits (B, T, vocab) for integer tokens (B, T)."""
        if tokens.dim() != 2 or tokens.dtype not in (torch.int64, torch.int32):
            raise param_error("tokens", "TinyLM", "an integer tensor (B, T)", tokens.shape)
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
