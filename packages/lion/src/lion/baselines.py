r"""The baselines of the reproduction, on the same backbone as LION.

- :class:`SoftmaxAttention`: multi-head softmax attention (``F.scaled_dot_product_attention``), the
  DeiT/ViT layer.
- :class:`CausalLinearAttention`: LION's features and decays with the forward mask :math:`M^F` only,
  i.e. causal decayed normalised linear attention (RetNet/GLA-style for ``"d"``/``"s"``, the causal
  linear transformer for ``"lit"``): what LION adds bidirectionality to.
"""

from __future__ import annotations

from typing import Literal

import torch
import torch.nn.functional as F
from einops import rearrange
from torch import nn

from lion import ops
from lion.attention import LionAttention
from paperkit import Described, param_error

__all__ = ["CausalLinearAttention", "SoftmaxAttention"]


class SoftmaxAttention(nn.Module):
    r"""Softmax attention :math:`\mathrm{softmax}(qk^\top/\sqrt d)v` per head,
    ``(B, N, D) -> (B, N, D)``."""

    def __init__(self, dim: int, num_heads: int, *, qkv_bias: bool = True) -> None:
        super().__init__()
        if dim % num_heads:
            raise param_error(
                "dim", "SoftmaxAttention", f"divisible by num_heads = {num_heads}", dim
            )
        self.dim, self.num_heads = dim, num_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if x.dim() != 3 or x.shape[-1] != self.dim:
            shape = Described(f"a tensor of shape {tuple(x.shape)}")
            raise param_error("x", "SoftmaxAttention", f"a 3-D tensor (B, N, {self.dim})", shape)
        q, k, v = rearrange(self.qkv(x), "b n (s h d) -> s b h n d", s=3, h=self.num_heads)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.proj(rearrange(y, "b h n d -> b n (h d)"))


class CausalLinearAttention(LionAttention):
    r"""Causal decayed normalised linear attention: :math:`A=(qk^\top)\odot M^F`, row-normalised.

    Same parameters as :class:`~lion.LionAttention` (raster order, full form only).
    """

    def __init__(
        self,
        dim: int,
        num_heads: int,
        *,
        decay: Literal["lit", "d", "s"] = "s",
        qkv_bias: bool = True,
        eps: float = 1e-6,
    ) -> None:
        super().__init__(dim, num_heads, decay=decay, qkv_bias=qkv_bias, eps=eps)

    def set_form(self, form: Literal["attention"]) -> CausalLinearAttention:
        """Only the full (attention) form is implemented for the causal baseline."""
        if form != "attention":
            raise param_error("form", type(self).__name__, "'attention'", form)
        self.form = form
        return self

    def _parts(self, q, k, v, ll) -> torch.Tensor:
        if ll is None:
            ll = q.new_zeros(q.shape[:3])
        return ops.full_parts(q, k, v, ops.forward_mask(ll))
