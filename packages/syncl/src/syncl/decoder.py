"""The weight-shared decoder of SynCL (the paper's Sec. 3).

One stack of DETR-style layers is run twice in training: as the standard S-decoder
(self-attention over all queries -> cross-attention to the BEV memory -> FFN) and as the parallel
C-decoder, the same layers with self-attention skipped (cross-attention -> FFN), in which every
query is processed independently of the others. Only the S-decoder runs at inference, so the
C-decoder costs no parameters and no inference time.
"""

from __future__ import annotations

import torch
from torch import nn

from paperkit import check_bool, check_int, check_tensor, param_error

__all__ = ["DecoderLayer", "SharedDecoder"]


class DecoderLayer(nn.Module):
    """Post-norm DETR decoder layer: ``x = LN(x + SA(x + pos, x + pos, x))`` (skipped when
    ``self_attn=False``), ``x = LN(x + CA(x + pos, memory, memory))``, ``x = LN(x + FFN(x))``."""

    def __init__(self, d_model: int, n_heads: int, ff: int) -> None:
        super().__init__()
        self.self_attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.cross_attn = nn.MultiheadAttention(d_model, n_heads, batch_first=True)
        self.ffn = nn.Sequential(nn.Linear(d_model, ff), nn.ReLU(), nn.Linear(ff, d_model))
        self.norm1, self.norm2, self.norm3 = (nn.LayerNorm(d_model) for _ in range(3))

    def forward(
        self,
        x: torch.Tensor,
        memory: torch.Tensor,
        pos: torch.Tensor,
        self_attn: bool,
        pad_mask: torch.Tensor | None,
    ) -> torch.Tensor:
        if self_attn:
            q = x + pos
            x = self.norm1(x + self.self_attn(q, q, x, key_padding_mask=pad_mask)[0])
        x = self.norm2(x + self.cross_attn(x + pos, memory, memory)[0])
        return self.norm3(x + self.ffn(x))


class SharedDecoder(nn.Module):
    """``n_layers`` decoder layers shared by the S-decoder (``self_attn=True``) and the
    C-decoder (``self_attn=False``); returns the output of every layer (deep supervision).

    Args:
        n_layers, d_model, n_heads, ff: depth, width, attention heads, FFN width.

    ``forward(queries (B, Q, d), memory (B, N, d), query_pos (B, Q, d) or None, self_attn,
    pad_mask (B, Q) bool or None) -> list of n_layers tensors (B, Q, d)``. ``pad_mask`` marks
    empty query slots (padding), which self-attention ignores; with ``self_attn=False`` each
    query's output depends only on itself and the memory.
    """

    def __init__(self, n_layers: int = 3, d_model: int = 64, n_heads: int = 4, ff: int = 128):
        super().__init__()
        owner = "SharedDecoder"
        check_int("n_layers", owner, n_layers, low=1, high=64)
        check_int("d_model", owner, d_model, low=1, high=8192)
        check_int("n_heads", owner, n_heads, low=1, high=256)
        check_int("ff", owner, ff, low=1, high=65536)
        if d_model % n_heads:
            raise param_error("n_heads", owner, f"a divisor of d_model={d_model}", n_heads)
        self.d_model = d_model
        self.layers = nn.ModuleList(DecoderLayer(d_model, n_heads, ff) for _ in range(n_layers))

    def forward(
        self,
        queries: torch.Tensor,
        memory: torch.Tensor,
        query_pos: torch.Tensor | None = None,
        self_attn: bool = True,
        pad_mask: torch.Tensor | None = None,
    ) -> list[torch.Tensor]:
        owner = "SharedDecoder.forward"
        dims: dict = {"d": (self.d_model, "d_model")}
        check_tensor("queries", owner, queries, shape=("B", "Q", "d"), dims=dims)
        check_tensor("memory", owner, memory, shape=("B", "N", "d"), dims=dims)
        if query_pos is not None:
            check_tensor("query_pos", owner, query_pos, shape=("B", "Q", "d"), dims=dims)
        if pad_mask is not None:
            check_tensor("pad_mask", owner, pad_mask, shape=("B", "Q"), dims=dims, dtype="bool")
        self_attn = check_bool("self_attn", owner, self_attn)
        for name, t in (("memory", memory), ("query_pos", query_pos)):
            if t is not None and t.dtype != queries.dtype:
                raise param_error(
                    name, owner, f"of dtype {queries.dtype} (as queries)", t.dtype, cls=TypeError
                )
        pos = torch.zeros_like(queries) if query_pos is None else query_pos
        outs, x = [], queries
        for layer in self.layers:
            x = layer(x, memory, pos, self_attn, pad_mask)
            outs.append(x)
        return outs
