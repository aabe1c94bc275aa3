r"""A tiny causal LM on packed (varlen) rows, for the loss experiments, the DDP demo and timing.

Token and learned position embeddings (position ids restart in every sample), pre-LN blocks of
varlen causal attention and an MLP. :func:`varlen_attention` runs
``F.scaled_dot_product_attention`` on each sample's slice of the packed row (what flash
attention's varlen kernel does): the result equals attention under :func:`block_diagonal_mask`,
and its cost grows as :math:`\sum_s\ell_s^2`, not :math:`(\sum_s\ell_s)^2`.
"""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from hbp.collate import PackedBatch, cu_seqlens_checked
from paperkit import check_int, check_memory, check_tensor, describe, param_error

__all__ = ["Block", "TinyCausalLM", "varlen_attention"]


def varlen_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, cu_seqlens: torch.Tensor
) -> torch.Tensor:
    r"""Causal attention within each sample of a packed row.

    :math:`o_i = \sum_{j\le i,\ s(j)=s(i)} \mathrm{softmax}_j(q_i^\top k_j/\sqrt d)\,v_j`.

    Shapes:
        q, k: (B, H, T, d); v: (B, H, T, e); cu_seqlens: (n + 1,) integer offsets starting at
        0, non-decreasing, ending at T (:func:`hbp.collate.cu_seqlens_checked`); output
        (B, H, T, e).

    q, k and v share one floating dtype and device (a mismatch is refused: no silent cast).
    NaN or inf in q, k or v is refused (ValueError).

    >>> q = torch.randn(1, 2, 5, 4)
    >>> varlen_attention(q, q, q, torch.tensor([0, 2, 5])).shape
    torch.Size([1, 2, 5, 4])
    """
    bounds = checked_qkv("varlen_attention", q, k, v, cu_seqlens)
    return attend(q, k, v, bounds)


def attend(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bounds: list[int]) -> torch.Tensor:
    """:func:`varlen_attention` on checked inputs, ``bounds`` the offsets as a list."""
    # contiguous slices keep torch on its fused CPU kernel (strided ones fall back to the T^2 path)
    outs = [
        F.scaled_dot_product_attention(
            *(x[:, :, a:b].contiguous() for x in (q, k, v)), is_causal=True
        )
        for a, b in zip(bounds[:-1], bounds[1:], strict=True)
    ]
    return torch.cat(outs, dim=2)


def checked_qkv(
    owner: str, q: Any, k: Any, v: Any, cu_seqlens: Any, total: int | None = None
) -> list[int]:
    """Check q, k, v (B, H, T, d/e) of one dtype and device and their offsets, which end at
    ``total`` (default: T); return the offsets as a list."""
    dims: dict = {}
    check_tensor("q", owner, q, shape=("B", "H", "T", "d"), dims=dims)
    for name, x, shape in (("k", k, ("B", "H", "T", "d")), ("v", v, ("B", "H", "T", "e"))):
        check_tensor(name, owner, x, shape=shape, dims=dims, device=q.device)
        if x.dtype != q.dtype:
            raise param_error(
                name,
                owner,
                f"of the dtype of 'q' ({q.dtype}; no silent cast)",
                describe(x),
                cls=TypeError,
            )
    end = dims["T"][0] if total is None else total
    return cu_seqlens_checked("cu_seqlens", owner, cu_seqlens, end)


class Block(nn.Module):
    r"""Pre-LN block: :math:`x + \mathrm{Attn}(\mathrm{LN}(x))`, then the same with an MLP.

    An inner module: ``forward(x, cu_seqlens)`` trusts its caller (:class:`TinyCausalLM`, the
    calibration) to have checked the offsets.
    """

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor, cu_seqlens: torch.Tensor) -> torch.Tensor:
        B, T, D = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(B, T, 3, self.heads, D // self.heads).unbind(2)
        bounds = cu_seqlens.tolist()
        o = attend(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), bounds)
        x = x + self.proj(o.transpose(1, 2).reshape(B, T, D))
        return x + self.mlp(self.ln2(x))


class TinyCausalLM(nn.Module):
    """A causal LM of ``depth`` varlen blocks; ``forward(input_ids, position_ids, cu_seqlens)``.

    ``vocab``, ``dim``, ``depth``, ``heads`` and ``max_len`` are positive integers, ``dim`` a
    multiple of ``heads``; a model whose weights would not fit in memory is refused.
    """

    def __init__(
        self, vocab: int = 64, dim: int = 32, depth: int = 1, heads: int = 2, max_len: int = 4096
    ) -> None:
        owner = "TinyCausalLM"
        vocab = check_int("vocab", owner, vocab, low=1)
        dim = check_int("dim", owner, dim, low=1)
        depth = check_int("depth", owner, depth, low=1)
        heads = check_int("heads", owner, heads, low=1)
        max_len = check_int("max_len", owner, max_len, low=1)
        if dim % heads:
            raise param_error("dim", owner, f"a multiple of heads = {heads}", dim)
        # float32 weights: 12 dim^2 per block, vocab x dim twice (embedding, head), max_len x dim
        for name, value, numel in (
            ("dim", dim, 12 * dim * dim),
            ("depth", depth, 12 * depth * dim * dim),
            ("vocab", vocab, 2 * vocab * dim),
            ("max_len", max_len, max_len * dim),
        ):
            check_memory(name, owner, value, 4 * numel)
        super().__init__()
        self.vocab, self.max_len = vocab, max_len
        self.tok, self.pos = nn.Embedding(vocab, dim), nn.Embedding(max_len, dim)
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(depth))
        self.norm, self.head = nn.LayerNorm(dim), nn.Linear(dim, vocab)

    def forward(
        self, input_ids: torch.Tensor, position_ids: torch.Tensor, cu_seqlens: torch.Tensor
    ) -> torch.Tensor:
        """Logits (B, T, vocab) of packed rows (B, T) sharing the offsets ``cu_seqlens``.

        Token ids must lie in ``[0, vocab)`` and position ids in ``[0, max_len)`` (integer
        tensors: NaN cannot occur; floating ids are refused).
        """
        owner, dims = "TinyCausalLM", {}
        for name, x, high in (
            ("input_ids", input_ids, self.vocab),
            ("position_ids", position_ids, self.max_len),
        ):
            check_tensor(name, owner, x, shape=("B", "T"), dims=dims, dtype="int")
            lo, hi = int(x.min()), int(x.max())
            if lo < 0 or hi >= high:
                raise param_error(name, owner, f"ids in [0, {high})", lo if lo < 0 else hi)
        cu_seqlens_checked("cu_seqlens", owner, cu_seqlens, dims["T"][0])
        x = self.tok(input_ids) + self.pos(position_ids)
        for block in self.blocks:
            x = block(x, cu_seqlens)
        return self.head(self.norm(x))

    def token_loss(self, batch: PackedBatch) -> torch.Tensor:
        """Per-token cross-entropy (1, T) of a :class:`hbp.collate.PackedBatch` (0: unscored)."""
        if not isinstance(batch, PackedBatch):
            raise param_error(
                "batch", "TinyCausalLM.token_loss", "a PackedBatch", describe(batch), cls=TypeError
            )
        logits = self(batch.input_ids, batch.position_ids, batch.cu_seqlens)
        return F.cross_entropy(
            logits.transpose(1, 2), batch.labels, ignore_index=-100, reduction="none"
        )
