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

from lion.attention import LionAttention, layer_input
from lion.reference import full_parts, half_mask
from paperkit import check_bool, check_int, param_error

__all__ = ["CausalLinearAttention", "SoftmaxAttention"]


class SoftmaxAttention(nn.Module):
    r"""Softmax attention :math:`\mathrm{softmax}(qk^\top/\sqrt d)v` per head.

    Shapes:
        x: ``(B, N, D)`` with ``D = dim``, of the layer's dtype and device.
        returns: ``(B, N, D)``.

    NaN or inf in ``x`` is refused (``ValueError``).
    """

    def __init__(self, dim: int, num_heads: int, *, qkv_bias: bool = True) -> None:
        super().__init__()
        owner = "SoftmaxAttention"
        dim = check_int("dim", owner, dim, low=1)
        num_heads = check_int("num_heads", owner, num_heads, low=1)
        if dim % num_heads:
            raise param_error("dim", owner, f"divisible by num_heads = {num_heads}", dim)
        check_bool("qkv_bias", owner, qkv_bias)
        self.dim, self.num_heads = dim, num_heads
        self.qkv = nn.Linear(dim, 3 * dim, bias=qkv_bias)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        layer_input("SoftmaxAttention", x, self.qkv.weight)
        q, k, v = rearrange(self.qkv(x), "b n (s h d) -> s b h n d", s=3, h=self.num_heads)
        y = F.scaled_dot_product_attention(q, k, v)
        return self.proj(rearrange(y, "b h n d -> b n (h d)"))


class CausalLinearAttention(LionAttention):
    r"""Causal decayed normalised linear attention: :math:`A=(qk^\top)\odot M^F`, row-normalised.

    Same parameters as :class:`~lion.LionAttention` (raster order, the reference backend only).

    Shapes:
        x: ``(B, N, D)`` with ``D = dim``, of the layer's dtype and device.
        returns: ``(B, N, D)``.

    NaN or inf in ``x`` is refused (``ValueError``).
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

    def set_backend(self, backend: Literal["reference"]) -> CausalLinearAttention:
        """Only the reference (full masked) form is implemented for the causal baseline."""
        if backend != "reference":
            raise param_error("backend", type(self).__name__, "'reference'", backend)
        self.backend = backend
        return self

    def _parts(self, q, k, v, ll, backend) -> torch.Tensor:
        work = torch.promote_types(q.dtype, torch.float32)  # float32 for float16/bfloat16
        with torch.autocast(q.device.type, enabled=False):
            q, k, v = (x.to(work) for x in (q, k, v))
            ll = q.new_zeros(q.shape[:3]) if ll is None else ll.to(work)
            return full_parts(q, k, v, half_mask(ll, lower=True))
