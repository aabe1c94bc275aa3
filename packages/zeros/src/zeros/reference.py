r"""The reference path: the explicit weights :math:`r_{t,i}` and :math:`O(T^2d)` attention.

Per batch and head, the prefix softmax :math:`p_{t,i}=e^{s_i}/\sum_{j\le t}e^{s_j}` splits into
:math:`1/t+\delta^1_{t,i}+\delta^h_{t,i}` with :math:`\delta^1_{t,i}=(s_i-\bar s_t)/t`
(:math:`\bar s_t` the mean of :math:`s_{1..t}`); ZeroS keeps
:math:`r=\sigma^1\delta^1+\sigma^h\delta^h\,(+\sigma^0/t)` and outputs
:math:`o_t=\sum_{i\le t}r_{t,i}(\hat q_t\cdot\hat k_i)v_i`. Every fast path is tested against
this module. Inputs are assumed checked (:func:`zeros.ops.zeros_attention` does it).
"""

from __future__ import annotations

import torch

from zeros.decomposition import positions

__all__ = ["attention", "weights"]


def weights(
    s: torch.Tensor,
    gate1: torch.Tensor,
    gateh: torch.Tensor,
    gate0: torch.Tensor | None,
    causal: bool,
) -> torch.Tensor:
    r"""The weights :math:`r_{t,i}`, (B, H, T, T), from logits and gates (B, T, H).

    Computed as :math:`\sigma^h p + (\sigma^1-\sigma^h)\delta^1 + (\sigma^0-\sigma^h)/t`, the same
    value as the definition with fewer cancellations; 0 above the diagonal when causal.
    """
    B, T, H = s.shape
    st = s.transpose(1, 2)  # (B, H, T)
    keys = st.unsqueeze(-2).expand(B, H, T, T)  # s_i along the last axis
    t = positions(T, causal, s).view(1, 1, T, 1)
    if causal:
        mask = torch.ones(T, T, dtype=torch.bool, device=s.device).tril()
        p = torch.softmax(keys.masked_fill(~mask, float("-inf")), dim=-1)
        mean = torch.cumsum(st, dim=-1) / t.view(1, 1, T)
    else:
        mask = None
        p = torch.softmax(keys, dim=-1)
        mean = st.mean(dim=-1, keepdim=True).expand(B, H, T)
    delta1 = (keys - mean.unsqueeze(-1)) / t

    def per_row(g: torch.Tensor) -> torch.Tensor:
        return g.transpose(1, 2).unsqueeze(-1)  # (B, H, T, 1)

    g1, gh = per_row(gate1), per_row(gateh)
    g0 = per_row(gate0) if gate0 is not None else 0.0
    r = gh * p + (g1 - gh) * delta1 + (g0 - gh) / t
    return r.masked_fill(~mask, 0.0) if mask is not None else r


def attention(q, k, v, s, gate1, gateh, gate0, causal):
    """:math:`o_t=\\sum_i r_{t,i}(q_t\\cdot k_i)v_i` for unit-length q, k (B, T, H, d)."""
    r = weights(s, gate1, gateh, gate0, causal)  # (B, H, T, T)
    cos = torch.einsum("bthd,bihd->bhti", q, k)
    return torch.einsum("bhti,bihe->bthe", r * cos, v)
