r"""Seeded generators of realistic biases: a SwinV2 continuous position bias and an AF3-like pair
bias.

Both are seeded (the same seed gives the same tensors) and refuse sizes whose tensors would not fit
in memory before drawing anything.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch

from paperkit import check_int, check_memory

__all__ = ["PairBias", "pair_bias", "swin_cpb_bias"]


def swin_cpb_bias(window: int, heads: int, seed: int = 0, hidden: int = 512) -> torch.Tensor:
    r"""A SwinV2-style continuous position bias (heads, N, N), N = window², float64.

    Relative offsets :math:`\Delta\in[-(w-1), w-1]^2` are normalised by :math:`w-1`, scaled by 8
    and log-spaced, :math:`\hat\Delta = \mathrm{sign}(\Delta)\log_2(1+|\Delta|)/3`; a 2-layer MLP
    (2 -> hidden -> heads, ReLU, randomly initialised under ``seed``) maps them to the table, which
    is read at every pair of window positions and passed through :math:`16\,\sigma(\cdot)`.

    >>> swin_cpb_bias(window=3, heads=2).shape
    torch.Size([2, 9, 9])
    """
    owner = "swin_cpb_bias"
    window = check_int("window", owner, window, low=1)
    heads = check_int("heads", owner, heads, low=1)
    seed = check_int("seed", owner, seed, low=0)
    hidden = check_int("hidden", owner, hidden, low=1)
    N, table = window * window, (2 * window - 1) ** 2
    check_memory("window", owner, window, 8 * (3 * heads * N * N + 2 * N * N))
    check_memory("hidden", owner, hidden, 8 * 2 * hidden * (table + heads))
    g = torch.Generator().manual_seed(seed)
    r = torch.arange(-(window - 1), window, dtype=torch.float64)
    table = torch.stack(torch.meshgrid(r, r, indexing="ij"), -1)  # (2w-1, 2w-1, 2)
    table = table / max(window - 1, 1) * 8
    table = torch.sign(table) * torch.log2(table.abs() + 1.0) / math.log2(8)
    w1 = torch.randn(2, hidden, generator=g, dtype=torch.float64) / math.sqrt(2)
    b1 = 0.1 * torch.randn(hidden, generator=g, dtype=torch.float64)
    w2 = torch.randn(hidden, heads, generator=g, dtype=torch.float64) / math.sqrt(hidden)
    values = torch.relu(table @ w1 + b1) @ w2  # (2w-1, 2w-1, heads)
    coords = torch.stack(
        torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij"), -1
    ).reshape(-1, 2)
    rel = coords[:, None] - coords[None] + (window - 1)  # (N, N, 2)
    bias = values[rel[..., 0], rel[..., 1]]  # (N, N, heads)
    return 16 * torch.sigmoid(bias.permute(2, 0, 1))


class PairBias(NamedTuple):
    """An AF3-like pair representation and its linear bias head."""

    single: torch.Tensor  #: (1, n, c_s) token features
    pair: torch.Tensor  #: (1, n, n, c_z) pair representation z
    weight: torch.Tensor  #: (c_z, heads) the bias head
    bias: torch.Tensor  #: (1, heads, n, n) = z @ weight

    def row_features(self) -> torch.Tensor:
        r"""Per-row summary :math:`[\frac1n\sum_j z_{ij},\ s_i]` (1, n, c_z + c_s)."""
        return torch.cat([self.pair.mean(2), self.single], -1)

    def col_features(self) -> torch.Tensor:
        r"""Per-column summary :math:`[\frac1n\sum_i z_{ij},\ s_j]` (1, n, c_z + c_s)."""
        return torch.cat([self.pair.mean(1), self.single], -1)


def pair_bias(n: int, c_z: int, heads: int, seed: int = 0, c_s: int = 16) -> PairBias:
    r"""A synthetic pair representation and bias, float32.

    Token features :math:`s_i\sim\mathcal N(0, I)`; the pair representation mixes an outer
    product of projections with a clipped relative-position embedding,
    :math:`z_{ij} = \tanh(s_i A + s_j C + (s_iP)\odot(s_jP') + e_{\mathrm{clip}(i-j,\pm32)})`;
    the bias is :math:`b_{h,ij} = z_{ij}\cdot w_h` (the linear bias head of triangle attention).

    >>> data = pair_bias(n=5, c_z=4, heads=2)
    >>> data.pair.shape, data.bias.shape
    (torch.Size([1, 5, 5, 4]), torch.Size([1, 2, 5, 5]))
    """
    owner = "pair_bias"
    n, c_z, heads, c_s = (
        check_int(name, owner, value, low=1)
        for name, value in (("n", n), ("c_z", c_z), ("heads", heads), ("c_s", c_s))
    )
    seed = check_int("seed", owner, seed, low=0)
    check_memory("n", owner, n, 4 * n * n * (6 * c_z + 2 * heads))
    g = torch.Generator().manual_seed(seed)

    def rand(*shape: int, scale: float = 1.0) -> torch.Tensor:
        return scale * torch.randn(*shape, generator=g)

    s = rand(n, c_s)
    a, c = rand(c_s, c_z, scale=c_s**-0.5), rand(c_s, c_z, scale=c_s**-0.5)
    p, p2 = rand(c_s, c_z, scale=c_s**-0.5), rand(c_s, c_z, scale=c_s**-0.5)
    emb = rand(65, c_z, scale=0.5)
    idx = torch.arange(n)
    rel = (idx[:, None] - idx[None]).clamp(-32, 32) + 32
    z = torch.tanh((s @ a)[:, None] + (s @ c)[None] + (s @ p)[:, None] * (s @ p2)[None] + emb[rel])
    weight = rand(c_z, heads, scale=c_z**-0.5)
    bias = (z @ weight).permute(2, 0, 1)
    return PairBias(s[None], z[None], weight, bias[None])
