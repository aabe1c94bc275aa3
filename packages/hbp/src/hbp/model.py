r"""A tiny causal LM on packed (varlen) rows, for the loss experiments, the DDP demo and timing.

Token and learned position embeddings (position ids restart in every sample), pre-LN blocks of
varlen causal attention and an MLP. :func:`varlen_attention` runs
``F.scaled_dot_product_attention`` on each sample's slice of the packed row (what flash
attention's varlen kernel does): the result equals attention under :func:`block_diagonal_mask`,
and its cost grows as :math:`\sum_s\ell_s^2`, not :math:`(\sum_s\ell_s)^2`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from hbp.collate import PackedBatch

__all__ = ["Block", "TinyCausalLM", "varlen_attention"]


def varlen_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor
) -> torch.Tensor:
    r"""Causal attention within each sample of a packed row; q, k, v are (B, H, T, d).

    :math:`o_i = \sum_{j\le i,\ s(j)=s(i)} \mathrm{softmax}_j(q_i^\top k_j/\sqrt d)\,v_j`.
    """
    bounds = cu_seqlens.tolist()
    # contiguous slices keep torch on its fused CPU kernel (strided ones fall back to the T^2 path)
    outs = [
        F.scaled_dot_product_attention(
            *(x[:, :, a:b].contiguous() for x in (q, k, v)), is_causal=True
        )
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    return torch.cat(outs, dim=2)


class Block(nn.Module):
    r"""Pre-LN block: :math:`x + \mathrm{Attn}(\mathrm{LN}(x))`, then the same with an MLP."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.heads, D // self.heads).unbind(2)
        o = varlen_attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), cu_seqlens)
        x = x + self.proj(o.transpose(1, 2).reshape(B, T, D))
        return x + self.mlp(self.ln2(x))


class TinyCausalLM(nn.Module):
    """A causal LM of ``depth`` varlen blocks; ``forward(ids, positions, cu_seqlens)``."""

    def __init__(
        self, vocab: int = 64, dim: int = 32, depth: int = 1, heads: int = 2, max_len: int = 4096
    ) -> None:
        super().__init__()
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)

    def forward(
        self, input_ids: torch.Tensor, position_ids: torch.Tensor, cu_seqlens: torch.Tensor
    ) -> torch.Tensor:
        """Logits (1, T, vocab) of one packed row."""
        x = self.tok(input_ids) + self.pos(position_ids)
        for block in self.blocks:
            x = block(x, cu_seqlens)
        return self.head(self.norm(x))

    def token_loss(self, batch: PackedBatch) -> torch.Tensor:
        """Per-token cross-entropy (1, T) of a :class:`hbp.collate.PackedBatch` (0: unscored)."""
        logits = self(batch.input_ids, batch.position_ids, batch.cu_seqlens)
        return F.cross_entropy(
            logits.transpose(1, 2), batch.labels, ignore_index=-100, reduction="none"
        )
