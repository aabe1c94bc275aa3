"""A tiny SwinV2-style window-attention classifier, trained here so that its bias is learned.

SwinV2 adds to every window-attention layer a *continuous position bias* (CPB): a 2-layer MLP maps
the log-spaced relative offset of two positions to one value per head, read as
:math:`B_{h,ij} = 16\\,\\sigma(\\mathrm{MLP}(\\hat\\Delta_{ij}))_h`. After training, B is static, so
FlashBias can replace it by truncated-SVD factors (:func:`flashbias.decompose.svd_factors`). The
model here has no absolute position embedding: the bias is the only position signal, so the task
(the orientation of a bar in an 8 x 8 image) can only be solved through what the CPB learns.

NaN policy: the data generator and the model take no user data with NaN; ``oriented_bars`` and
``train_tiny_swin`` check their integer and real arguments (a NaN noise is refused).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import torch
import torch.nn.functional as F
from torch import nn

from flashbias.attention import flash_bias_attention
from paperkit import check_int, check_real

__all__ = ["CPB", "TinySwin", "TrainedSwin", "oriented_bars", "train_tiny_swin"]

#: (dy, dx) steps of the four bar orientations: horizontal, vertical, diagonal, anti-diagonal.
ORIENTATIONS = ((0, 1), (1, 0), (1, 1), (1, -1))


def oriented_bars(
    n: int, window: int = 8, noise: float = 0.2, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """n images (n, window², 1) of one bar of length 3-5 (at most ``window``) at a random place,
    class = orientation (4 classes), plus Gaussian noise and 2 stray bright pixels.

    >>> x, y = oriented_bars(10, window=6)
    >>> x.shape, y.shape
    (torch.Size([10, 36, 1]), torch.Size([10]))
    """
    owner = "oriented_bars"
    n = check_int("n", owner, n, low=1)
    window = check_int("window", owner, window, low=3)
    noise = check_real("noise", owner, noise, low=0)
    seed = check_int("seed", owner, seed, low=0)
    g = torch.Generator().manual_seed(seed)
    x = noise * torch.randn(n, window, window, generator=g)
    y = torch.randint(0, len(ORIENTATIONS), (n,), generator=g)
    for i in range(n):
        dy, dx = ORIENTATIONS[int(y[i])]
        length = int(torch.randint(3, min(5, window) + 1, (1,), generator=g))
        lo_x = 0 if dx >= 0 else length - 1
        hi_x = window - (length - 1) * max(dx, 0)
        r0 = int(torch.randint(0, window - (length - 1) * dy, (1,), generator=g))
        c0 = int(torch.randint(lo_x, hi_x, (1,), generator=g))
        for s in range(length):
            x[i, r0 + s * dy, c0 + s * dx] += 1.0
        stray = torch.randint(0, window, (2, 2), generator=g)
        x[i, stray[:, 0], stray[:, 1]] += 1.0
    return x.reshape(n, window * window, 1), y


class CPB(nn.Module):
    """SwinV2's continuous position bias for a window of w x w positions: (heads, w², w²)."""

    def __init__(self, window: int, heads: int, hidden: int = 128) -> None:
        super().__init__()
        r = torch.arange(-(window - 1), window, dtype=torch.float32)
        table = torch.stack(torch.meshgrid(r, r, indexing="ij"), -1) / max(window - 1, 1) * 8
        table = torch.sign(table) * torch.log2(table.abs() + 1.0) / math.log2(8)
        coords = torch.stack(
            torch.meshgrid(torch.arange(window), torch.arange(window), indexing="ij"), -1
        ).reshape(-1, 2)
        rel = coords[:, None] - coords[None] + (window - 1)  # (N, N, 2)
        self.register_buffer("table", table.reshape(-1, 2), persistent=False)
        self.register_buffer(
            "index", rel[..., 0] * (2 * window - 1) + rel[..., 1], persistent=False
        )
        self.mlp = nn.Sequential(nn.Linear(2, hidden), nn.ReLU(), nn.Linear(hidden, heads))

    def forward(self) -> torch.Tensor:
        values = self.mlp(self.table)  # ((2w-1)², heads)
        return 16 * torch.sigmoid(values[self.index].permute(2, 0, 1))


class _Block(nn.Module):
    def __init__(self, dim: int, heads: int, window: int) -> None:
        super().__init__()
        self.heads = heads
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.proj = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.cpb = CPB(window, heads)

    def qkv_of(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """q, k, v (B, N, H, d) of the block's input x (B, N, dim)."""
        B, N, _ = x.shape
        q, k, v = self.qkv(self.norm1(x)).reshape(B, N, 3, self.heads, -1).unbind(2)
        return q, k, v

    def forward(self, x: torch.Tensor, factors=None) -> torch.Tensor:
        q, k, v = self.qkv_of(x)
        if factors is None:
            out = F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=self.cpb()
            ).transpose(1, 2)
        else:  # FlashBias: the bias enters as extra q/k channels
            q_b, k_b = factors
            B = x.shape[0]
            out = flash_bias_attention(
                q, k, v, q_b.expand(B, -1, -1, -1), k_b.expand(B, -1, -1, -1), backend="sdpa"
            )
        x = x + self.proj(out.reshape(x.shape))
        return x + self.mlp(self.norm2(x))


class TinySwin(nn.Module):
    """Pixel tokens (no absolute position embedding) -> ``depth`` window-attention blocks with a
    learned CPB each -> mean pool -> classes."""

    def __init__(
        self, window: int = 8, dim: int = 32, heads: int = 4, depth: int = 2, classes: int = 4
    ) -> None:
        super().__init__()
        self.embed = nn.Linear(1, dim)
        self.blocks = nn.ModuleList(_Block(dim, heads, window) for _ in range(depth))
        self.head = nn.Linear(dim, classes)

    def forward(self, x: torch.Tensor, factors=None) -> torch.Tensor:
        """Logits (B, classes) of x (B, N, 1); ``factors`` (one (q_b, k_b) per block) replaces
        every block's dense bias by FlashBias factors."""
        h = self.embed(x)
        for i, block in enumerate(self.blocks):
            h = block(h, None if factors is None else factors[i])
        return self.head(h.mean(1))

    @torch.no_grad()
    def biases(self) -> list[torch.Tensor]:
        """The learned bias of every block, (H, N, N) float64."""
        return [block.cpb().double() for block in self.blocks]

    @torch.no_grad()
    def activations(self, x: torch.Tensor) -> list[tuple[torch.Tensor, ...]]:
        """Each block's (q, k, v), float64, on input x (B, N, 1)."""
        out, h = [], self.embed(x)
        for block in self.blocks:
            out.append(tuple(t.double() for t in block.qkv_of(h)))
            h = block(h)
        return out


class TrainedSwin(NamedTuple):
    model: TinySwin
    test_x: torch.Tensor
    test_y: torch.Tensor
    accuracy: float  #: test accuracy with the dense learned bias


def train_tiny_swin(
    steps: int = 600, window: int = 8, heads: int = 4, seed: int = 0, lr: float = 1e-2
) -> TrainedSwin:
    """Train :class:`TinySwin` by Adam (batch 128) on :func:`oriented_bars` (fresh images every
    step); test on 1000 held-out images.

    >>> trained = train_tiny_swin(steps=2, window=4)
    >>> len(trained.model.biases()), trained.model.biases()[0].shape
    (2, torch.Size([4, 16, 16]))
    """
    owner = "train_tiny_swin"
    steps = check_int("steps", owner, steps, low=1)
    window = check_int("window", owner, window, low=3)
    heads = check_int("heads", owner, heads, low=1)
    seed = check_int("seed", owner, seed, low=0)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    torch.manual_seed(seed)
    model = TinySwin(window=window, heads=heads)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    schedule = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    for step in range(steps):
        x, y = oriented_bars(128, window, seed=1_000_000 * (seed + 1) + step)
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        schedule.step()
    model.eval()
    test_x, test_y = oriented_bars(1000, window, seed=seed + 7)
    with torch.no_grad():
        accuracy = float((model(test_x).argmax(1) == test_y).float().mean())
    return TrainedSwin(model, test_x, test_y, accuracy)
