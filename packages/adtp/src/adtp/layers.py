r"""One pre-LayerNorm transformer encoder layer whose attention takes a per-key additive bias.

:math:`x \leftarrow x + W_o\,\mathrm{softmax}(QK^\top/\sqrt{d_h} + b)\,V` on :math:`\mathrm{LN}(x)`,
then :math:`x \leftarrow x + W_2\,\mathrm{GELU}(W_1\mathrm{LN}(x))`. The key bias :math:`b_j` is 0
for a kept key, :math:`-\infty` for padding and :math:`\log(m_j + 10^{-6})` for a soft-masked key
(LTP-style soft pruning): a key with mask 0 gets weight :math:`\approx 10^{-6}` relative.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["EncoderLayer", "key_bias"]


def key_bias(
    attention_mask: torch.Tensor, soft_mask: torch.Tensor | None, dtype: torch.dtype
) -> torch.Tensor:
    """The additive key bias (B, N): 0 (or log(m + 1e-6)) on valid keys, -inf on padding."""
    bias = torch.zeros(attention_mask.shape, dtype=dtype, device=attention_mask.device)
    if soft_mask is not None:
        bias = torch.log(soft_mask.to(dtype) + 1e-6)
    return bias.masked_fill(~attention_mask, float("-inf"))


class EncoderLayer(nn.Module):
    """Pre-LN self-attention + GELU feed-forward; ``forward(x, bias, need_attn)`` returns
    ``(x, attention probabilities (B, H, N, N) or None)``. Internal building block of
    :class:`adtp.model.PrunableEncoder` (which checks the arguments)."""

    def __init__(self, dim: int, heads: int, ffn: int) -> None:
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.ff = nn.Sequential(nn.Linear(dim, ffn), nn.GELU(), nn.Linear(ffn, dim))

    def forward(
        self, x: torch.Tensor, bias: torch.Tensor, need_attn: bool = False
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        B, N, D = x.shape
        H = self.heads
        q, k, v = self.qkv(self.ln1(x)).reshape(B, N, 3, H, D // H).permute(2, 0, 3, 1, 4)
        logits = q @ k.transpose(-1, -2) * (D // H) ** -0.5 + bias[:, None, None, :].to(q.dtype)
        probs = F.softmax(logits, dim=-1)
        out = (probs @ v).transpose(1, 2).reshape(B, N, D)
        x = x + self.proj(out)
        x = x + self.ff(self.ln2(x))
        return x, (probs if need_attn else None)
