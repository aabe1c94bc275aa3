r"""The attention layers CBSA is compared with (paper, Sec. 4): MSSA (CRATE), TSSA (ToST) and
softmax self-attention. Each maps (B, N, D) tokens to an update of the same shape.

* MSSA, multi-head subspace self-attention, one gradient step on the coding rate of all tokens
  in each subspace: :math:`\mathrm{softmax}(W_k W_k^\top / \sqrt p) W_k`, :math:`W_k = Z U_k`,
  O(N^2 p) per head.
* TSSA, token-statistics self-attention (ToST), linear in N: with :math:`\Pi` (K x N) a softmax
  over the heads of each token's (column-normalised) energy :math:`\|\tilde w_{k,i}\|^2 \tau_k`,
  the second moment :math:`\sigma_k = \sum_i \pi_{k,i} w_{k,i}^2 / \sum_i \pi_{k,i}` (per feature)
  and the update :math:`-\pi_{k,i}\, w_{k,i} \odot 1/(1 + \sigma_k)`.
* Softmax attention with separate query, key and value projections, O(N^2 p) per head.

NaN policy (every layer): NaN or inf in ``x`` is refused with a ValueError.
"""

from __future__ import annotations

import torch
from einops import rearrange
from torch import nn

from cbsa.layers import check_heads, check_tokens
from paperkit import check_bool, check_memory

__all__ = ["MSSA", "TSSA", "SoftmaxAttention"]


def _check_quadratic(x: torch.Tensor, owner: str, heads: int) -> None:
    B, N, _ = x.shape
    check_memory("x", owner, tuple(x.shape), 3.0 * x.element_size() * B * heads * N * N)


class MSSA(nn.Module):
    r"""Multi-head subspace self-attention (CRATE):
    :math:`\mathrm{Linear}(\mathrm{concat}_k\, \mathrm{softmax}(W_k W_k^\top/\sqrt p) W_k)`.

    ``forward(x, return_attn=False)``: x (B, N, D) -> (B, N, D); with ``return_attn`` the
    attention (B, H, N, N). NaN policy: NaN or inf in ``x`` is refused (ValueError).

    >>> MSSA(16, heads=2, dim_head=8)(torch.randn(1, 5, 16)).shape
    torch.Size([1, 5, 16])
    """

    def __init__(self, dim: int, heads: int, dim_head: int | None = None) -> None:
        super().__init__()
        dim, heads, dim_head = check_heads("MSSA", dim, heads, dim_head)
        self.dim, self.heads, self.dim_head, self.scale = dim, heads, dim_head, dim_head**-0.5
        self.proj = nn.Linear(dim, heads * dim_head, bias=False)
        self.to_out = nn.Linear(heads * dim_head, dim)

    def forward(self, x: torch.Tensor, return_attn: bool = False) -> torch.Tensor:
        check_tokens(x, "MSSA", self.dim, self.proj.weight)
        check_bool("return_attn", "MSSA", return_attn)
        _check_quadratic(x, "MSSA", self.heads)
        return self.update(x, return_attn=return_attn)

    def update(self, x: torch.Tensor, return_attn: bool = False) -> torch.Tensor:
        """:meth:`forward` without the input checks (for a model that checked its input)."""
        w = rearrange(self.proj(x), "b n (h p) -> b h n p", h=self.heads)
        attn = torch.softmax(w @ w.transpose(-1, -2) * self.scale, dim=-1)
        if return_attn:
            return attn
        return self.to_out(rearrange(attn @ w, "b h n p -> b n (h p)"))


class TSSA(nn.Module):
    r"""Token-statistics self-attention (ToST), linear in N:
    :math:`-\pi_{k,i}\, w_{k,i} \odot (1 + \sigma_k)^{-1}` per head (see the module docstring),
    with a learned temperature :math:`\tau_k` per head (init 1).

    ``forward(x)``: x (B, N, D) -> (B, N, D). NaN policy: NaN or inf in ``x`` is refused.

    >>> TSSA(16, heads=2, dim_head=8)(torch.randn(1, 5, 16)).shape
    torch.Size([1, 5, 16])
    """

    def __init__(self, dim: int, heads: int, dim_head: int | None = None) -> None:
        super().__init__()
        dim, heads, dim_head = check_heads("TSSA", dim, heads, dim_head)
        self.dim, self.heads, self.dim_head = dim, heads, dim_head
        self.proj = nn.Linear(dim, heads * dim_head, bias=False)
        self.temp = nn.Parameter(torch.ones(heads, 1))
        self.to_out = nn.Linear(heads * dim_head, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        check_tokens(x, "TSSA", self.dim, self.proj.weight)
        return self.update(x)

    def update(self, x: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` without the input checks (for a model that checked its input)."""
        w = rearrange(self.proj(x), "b n (h p) -> b h n p", h=self.heads)
        energy = torch.nn.functional.normalize(w, dim=-2).pow(2).sum(-1)  # (B, H, N)
        pi = torch.softmax(energy * self.temp, dim=1)  # membership of each token over heads
        weights = pi / (pi.sum(-1, keepdim=True) + 1e-8)
        sigma = weights.unsqueeze(-2) @ w.pow(2)  # (B, H, 1, p)
        out = -(w * pi.unsqueeze(-1)) / (1 + sigma)
        return self.to_out(rearrange(out, "b h n p -> b n (h p)"))


class SoftmaxAttention(nn.Module):
    r"""Standard multi-head softmax self-attention:
    :math:`\mathrm{softmax}(Q_k K_k^\top/\sqrt p) V_k` with separate projections.

    ``forward(x, return_attn=False)``: x (B, N, D) -> (B, N, D); with ``return_attn`` the
    attention (B, H, N, N). NaN policy: NaN or inf in ``x`` is refused (ValueError).

    >>> SoftmaxAttention(16, heads=2, dim_head=8)(torch.randn(1, 5, 16)).shape
    torch.Size([1, 5, 16])
    """

    def __init__(self, dim: int, heads: int, dim_head: int | None = None) -> None:
        super().__init__()
        dim, heads, dim_head = check_heads("SoftmaxAttention", dim, heads, dim_head)
        self.dim, self.heads, self.dim_head, self.scale = dim, heads, dim_head, dim_head**-0.5
        self.qkv = nn.Linear(dim, 3 * heads * dim_head, bias=False)
        self.to_out = nn.Linear(heads * dim_head, dim)

    def forward(self, x: torch.Tensor, return_attn: bool = False) -> torch.Tensor:
        check_tokens(x, "SoftmaxAttention", self.dim, self.qkv.weight)
        check_bool("return_attn", "SoftmaxAttention", return_attn)
        _check_quadratic(x, "SoftmaxAttention", self.heads)
        return self.update(x, return_attn=return_attn)

    def update(self, x: torch.Tensor, return_attn: bool = False) -> torch.Tensor:
        """:meth:`forward` without the input checks (for a model that checked its input)."""
        q, k, v = rearrange(self.qkv(x), "b n (t h p) -> t b h n p", t=3, h=self.heads)
        attn = torch.softmax(q @ k.transpose(-1, -2) * self.scale, dim=-1)
        if return_attn:
            return attn
        return self.to_out(rearrange(attn @ v, "b h n p -> b n (h p)"))
