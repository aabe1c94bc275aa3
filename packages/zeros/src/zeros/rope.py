r"""Rotary position embedding (RoPE, base 10000), rotate-half convention.

Channel pairs :math:`(x_j, x_{j+d/2})` at position :math:`t` are rotated by the angle
:math:`t\,\theta_j` with :math:`\theta_j = 10000^{-2j/d}`.
"""

from __future__ import annotations

import torch
from torch import nn

__all__ = ["RotaryEmbedding"]


class RotaryEmbedding(nn.Module):
    """Applies RoPE to (B, T, H, d) tensors; the angle table is a non-persistent buffer."""

    def __init__(self, head_dim: int, max_seq_len: int, base: float = 10000.0) -> None:
        super().__init__()
        inv_freq = base ** (-torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
        angles = torch.outer(torch.arange(max_seq_len, dtype=torch.float64), inv_freq)
        self.register_buffer("cos", angles.cos(), persistent=False)  # (max_seq_len, d/2)
        self.register_buffer("sin", angles.sin(), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        cos = self.cos[:T, None, :].to(x.dtype)
        sin = self.sin[:T, None, :].to(x.dtype)
        x1, x2 = x.chunk(2, dim=-1)
        return torch.cat((x1 * cos - x2 * sin, x1 * sin + x2 * cos), dim=-1)
