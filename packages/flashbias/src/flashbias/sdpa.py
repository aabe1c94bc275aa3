r"""The ``sdpa`` backend: FlashBias as one call of torch's fused attention (CPU and GPU).

The bias folds into the matmul as R extra head dimensions,

.. math::
    s\,QK^\top + \phi_q\phi_k^\top = [s\,Q,\ \phi_q]\,[K,\ \phi_k]^\top,

so ``scaled_dot_product_attention`` runs on the concatenated operands with scale 1 and never sees
an N x M bias. v is zero-padded to the same d + R columns: torch's fused SDPA kernels need equal
head sizes and otherwise fall back to the math kernel, which materialises the N x M scores; the
padded columns are sliced off. A row whose every key is masked gets output 0 (torch's SDPA
convention, the same as the other backends). Inputs are validated by :mod:`flashbias.attention`.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from flashbias.reference import causal_mask

__all__ = ["flash_bias_sdpa"]


def flash_bias_sdpa(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_bias: torch.Tensor | None,
    k_bias: torch.Tensor | None,
    attn_mask: torch.Tensor | None,
    causal: bool,
    scale: float,
) -> torch.Tensor:
    """One SDPA call on [s q, q_b] and [k, k_b] with scale 1; (B, N, H, d) out."""
    B, N, H, d = q.shape
    M = k.shape[1]
    qq, kk, vv = scale * q, k, v
    if q_bias is not None:
        qq = torch.cat([qq, q_bias.expand(B, N, H, -1)], dim=-1)
        kk = torch.cat([kk, k_bias.expand(B, M, H, -1)], dim=-1)
        vv = F.pad(v, (0, q_bias.shape[3]))
    if causal and attn_mask is not None:
        attn_mask = attn_mask + causal_mask(N, M, attn_mask)
        causal = False
    out = F.scaled_dot_product_attention(
        qq.transpose(1, 2),
        kk.transpose(1, 2),
        vv.transpose(1, 2),
        attn_mask=attn_mask,
        is_causal=causal,
        scale=1.0,
    )
    return out.transpose(1, 2)[..., :d]
