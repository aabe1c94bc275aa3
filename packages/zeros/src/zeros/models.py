"""TinyLM: a small pre-LayerNorm decoder for the sequence tasks, with a choice of attention."""

from __future__ import annotations

import math
from typing import Any, Literal

import torch
from torch import nn

from paperkit import Described, check_choice, check_int, check_memory, check_tensor, param_error
from zeros.baselines import LinearAttention, SoftmaxAttention
from zeros.layers import ZeroSAttention

__all__ = ["ATTENTIONS", "TinyLM", "make_attention"]

ATTENTIONS = ("zeros", "softmax", "linear", "linear_relu")


def make_attention(
    attn: str, dim: int, heads: int, max_seq_len: int, *, first_layer: bool = False, **kwargs: Any
) -> nn.Module:
    """One attention layer by name: ``zeros``, ``softmax``, ``linear`` (elu+1), ``linear_relu``
    (``attn`` checked by the caller)."""
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

    Shapes:
        tokens: (B, T) int64 or int32 ids in [0, vocab), T <= ``max_seq_len`` with RoPE.
        Returns logits (B, T, vocab).

    Ids outside [0, vocab) are refused (ValueError), as are sizes whose parameters would not
    fit in memory.

    >>> import torch
    >>> TinyLM(vocab=10, dim=16, depth=1, heads=2)(torch.tensor([[1, 2, 3]])).shape
    torch.Size([1, 3, 10])
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
        owner = "TinyLM"
        vocab = check_int("vocab", owner, vocab, low=1)
        dim = check_int("dim", owner, dim, low=1)
        depth = check_int("depth", owner, depth, low=1)
        heads = check_int("heads", owner, heads, low=1)
        max_seq_len = check_int("max_seq_len", owner, max_seq_len, low=1)
        check_choice("attn", owner, attn, ATTENTIONS)
        check_choice("zero_order", owner, zero_order, ("first", "all", "none"))
        if dim % heads:
            raise param_error("heads", owner, f"a divisor of dim={dim}", heads)
        rope = attn in ("zeros", "softmax") and attn_kwargs.get("rope", True)
        if rope and (dim // heads) % 2:
            raise param_error("heads", owner, "such that dim/heads is even (RoPE)", heads)
        # float32 parameters: at most 13 dim^2 per block (attention and MLP), 2 vocab dim outside
        check_memory("dim", owner, dim, 4 * 13 * dim * dim)
        check_memory("vocab", owner, vocab, 4 * 2 * vocab * dim)
        check_memory("depth", owner, depth, 4 * 13 * depth * dim * dim)
        self.vocab = vocab
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
        #: the longest input the model takes (None: any length)
        self.max_positions = self.blocks[0].attn.max_positions
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
        owner = "TinyLM"
        dtypes = (torch.int64, torch.int32)
        device = self.head.weight.device
        check_tensor("tokens", owner, tokens, shape=("B", "T"), dtype=dtypes, device=device)
        low, high = int(tokens.min()), int(tokens.max())
        if low < 0 or high >= self.vocab:
            raise param_error(
                "tokens",
                owner,
                f"token ids in [0, {self.vocab}) (vocab={self.vocab})",
                Described(f"ids from {low} to {high}"),
            )
        if self.max_positions is not None and tokens.shape[1] > self.max_positions:
            raise param_error(
                "tokens",
                owner,
                f"at most max_seq_len={self.max_positions} long (RoPE is tabulated that far)",
                Described(f"a sequence of length {tokens.shape[1]}"),
            )
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))
