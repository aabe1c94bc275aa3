r"""The ``scan`` path: cumulative sums of the three prefix states, :math:`O(Td^2)` time and memory.

The states :math:`F_t=\sum_{i\le t}e^{s_i-m}\hat k_iv_i^\top`, :math:`G_t=\sum s_i\hat k_iv_i^\top`,
:math:`H_t=\sum\hat k_iv_i^\top` (B, T, H, d, e) are ``torch.cumsum``\ s, with one shift
:math:`m=\max_t s_t` per batch and head (detached: it cancels in :math:`\alpha_tF_t`), and
:math:`F, E` accumulated in float64. Early prefixes whose logits all lie far below :math:`m`
underflow even so (:math:`e^{-745}` is the smallest positive double): :func:`logit_spread` measures
how far, and the dispatcher refuses spreads over :data:`SCAN_RANGE_LIMIT`.
"""

from __future__ import annotations

import torch

from zeros.decomposition import coefficients, positions

__all__ = ["SCAN_RANGE_LIMIT", "attention", "logit_spread"]

#: Largest spread of the logits below their maximum that the single shift handles.
SCAN_RANGE_LIMIT = 700.0


def logit_spread(s: torch.Tensor, causal: bool) -> float:
    """How far below the global maximum the running maximum of ``s`` (B, T, H) starts (0 when
    non-causal, where every row sums over all keys and so includes the maximum)."""
    if not causal:
        return 0.0
    sd = s.detach()
    return float((sd.amax(dim=1, keepdim=True) - torch.cummax(sd, dim=1).values).amax())


def attention(q, k, v, s, gate1, gateh, gate0, causal):
    """ZeroS attention for unit-length q, k (B, T, H, d), v (B, T, H, e) through prefix sums."""
    T = q.shape[1]
    m = s.detach().amax(dim=1, keepdim=True)  # one shift per (batch, head)
    w = torch.exp(s.double() - m.double())  # float64 whatever the input dtype
    kv = torch.einsum("bthd,bthe->bthde", k, v)
    if causal:
        F = torch.cumsum(w[..., None, None] * kv.double(), dim=1)
        E = torch.cumsum(w, dim=1)
        G = torch.cumsum(s[..., None, None] * kv, dim=1)
        Hs = torch.cumsum(kv, dim=1)
        P = torch.cumsum(s, dim=1)
    else:
        F = (w[..., None, None] * kv.double()).sum(1, keepdim=True)
        E = w.sum(1, keepdim=True)
        G = (s[..., None, None] * kv).sum(1, keepdim=True)
        Hs = kv.sum(1, keepdim=True)
        P = s.sum(1, keepdim=True)
    t = positions(T, causal, s).double()
    g0 = None if gate0 is None else gate0.double()
    alpha, beta, gamma = coefficients(E, P.double(), gate1.double(), gateh.double(), g0, t)
    state = (
        (alpha[..., None, None] * F).to(q.dtype)
        + beta.to(q.dtype)[..., None, None] * G
        + gamma.to(q.dtype)[..., None, None] * Hs
    )
    return torch.einsum("bthd,bthde->bthe", q, state)
