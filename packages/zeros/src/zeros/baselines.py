r"""The convex attentions ZeroS is compared with: same signature, input and output (B, T, D).

- :class:`SoftmaxAttention`: multi-head softmax attention with RoPE (torch SDPA).
- :class:`LinearAttention`: kernelised linear attention (Katharopoulos et al., 2020),
  :math:`o_t=\frac{\sum_{i\le t}\phi(q_t)^\top\phi(k_i)\,v_i}{\sum_{i\le t}\phi(q_t)^\top\phi(k_i)}`
  with :math:`\phi=\mathrm{elu}+1` or ReLU, and RoPE off (it would break positivity).

Both output convex combinations of the values: the weights are non-negative and sum to 1.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_choice, check_memory, check_real, describe
from zeros.layers import check_attention_args, check_input
from zeros.rope import RotaryEmbedding

__all__ = ["FEATURE_MAPS", "LinearAttention", "SoftmaxAttention"]

FEATURE_MAPS = ("elu1", "relu")


class _Projected(nn.Module):
    """q, k, v and output projections with GPT-2 initialisation, shared by both baselines."""

    def __init__(
        self,
        owner: str,
        dim: int,
        num_heads: int,
        max_seq_len: int,
        *,
        rope: bool,
        bias: bool,
        dropout: float,
        causal: bool,
    ):
        super().__init__()
        self.head_dim = check_attention_args(
            owner,
            dim,
            num_heads,
            max_seq_len,
            rope=rope,
            bias=bias,
            dropout=dropout,
            causal=causal,
            width=3,
        )
        self.dim, self.num_heads, self.max_seq_len = dim, num_heads, max_seq_len
        self.causal = causal
        #: the longest input the layer takes (None: any length, without RoPE)
        self.max_positions = max_seq_len if rope else None
        self.in_proj = nn.Linear(dim, 3 * dim, bias=bias)
        self.out_proj = nn.Linear(dim, dim, bias=bias)
        self.dropout = nn.Dropout(dropout)
        self.reset_parameters()

    def reset_parameters(self, out_std: float = 0.02) -> None:
        nn.init.normal_(self.in_proj.weight, std=0.02)
        nn.init.normal_(self.out_proj.weight, std=out_std)
        for lin in (self.in_proj, self.out_proj):
            if lin.bias is not None:
                nn.init.zeros_(lin.bias)

    def qkv(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        B, T, _ = x.shape
        return self.in_proj(x).view(B, T, 3, self.num_heads, self.head_dim).unbind(2)

    def merge(self, o: torch.Tensor) -> torch.Tensor:
        B, T = o.shape[:2]
        return self.dropout(self.out_proj(o.reshape(B, T, self.dim)))


class SoftmaxAttention(_Projected):
    """Multi-head softmax attention with RoPE, through ``F.scaled_dot_product_attention``.

    Shapes:
        x: (B, T, D) with T <= ``max_seq_len`` when ``rope``. Returns (B, T, D).

    ``x`` must have the dtype and device of the layer's parameters; NaN or inf in ``x`` is
    refused (ValueError).
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        causal: bool = True,
        max_seq_len: int = 2048,
        rope: bool = True,
        bias: bool = True,
        dropout: float = 0.0,
    ) -> None:
        super().__init__(
            "SoftmaxAttention",
            dim,
            num_heads,
            max_seq_len,
            rope=rope,
            bias=bias,
            dropout=dropout,
            causal=causal,
        )
        self.rope = RotaryEmbedding(self.head_dim, max_seq_len) if rope else None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_input("SoftmaxAttention", x, self.out_proj.weight, self.max_positions)
        q, k, v = self.qkv(x)
        if self.rope is not None:
            q, k = self.rope(q), self.rope(k)
        o = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=self.causal
        )
        return self.merge(o.transpose(1, 2))


class LinearAttention(_Projected):
    r"""Kernelised linear attention with feature map :math:`\phi` = ``"elu1"`` (elu + 1) or
    ``"relu"``; computed through the masked :math:`T\times T` form, which equals the prefix-sum
    form and is the faster of the two at the lengths of the reproduction.

    Shapes:
        x: (B, T, D), any T. Returns (B, T, D).

    ``x`` must have the dtype and device of the layer's parameters; NaN or inf in ``x`` is
    refused (ValueError), and so are lengths whose T x T scores would not fit in memory. ``eps``
    (> 0) keeps the normaliser away from 0.
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        feature_map: Literal["elu1", "relu"] = "elu1",
        causal: bool = True,
        max_seq_len: int = 2048,
        bias: bool = True,
        dropout: float = 0.0,
        eps: float = 1e-6,
    ) -> None:
        owner = "LinearAttention"
        super().__init__(
            owner,
            dim,
            num_heads,
            max_seq_len,
            rope=False,
            bias=bias,
            dropout=dropout,
            causal=causal,
        )
        self.feature_map = check_choice("feature_map", owner, feature_map, FEATURE_MAPS)
        self.eps = check_real("eps", owner, eps, low=0, low_open=True)

    def phi(self, x: torch.Tensor) -> torch.Tensor:
        return F.elu(x) + 1.0 if self.feature_map == "elu1" else F.relu(x)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        owner = "LinearAttention"
        check_input(owner, x, self.out_proj.weight, None)
        B, T, _ = x.shape
        check_memory("x", owner, describe(x), 3 * B * self.num_heads * T * T * x.dtype.itemsize)
        q, k, v = self.qkv(x)
        scores = torch.einsum("bthd,bihd->bhti", self.phi(q), self.phi(k))
        if self.causal:
            scores = scores * torch.ones(T, T, dtype=torch.bool, device=x.device).tril()
        weights = scores / (scores.sum(-1, keepdim=True) + self.eps)
        return self.merge(torch.einsum("bhti,bihd->bthd", weights, v))
