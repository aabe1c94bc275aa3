r"""The ``chunk`` path: blocks of C positions, :math:`O(TCd + Td^2)` time, all blocks at once.

Write :math:`m_t=\max_{u\le t}s_u` (the running maximum, a ``cummax``), :math:`M_b` its value
at the end of block :math:`b`, and for a row :math:`t` of block :math:`b` the three sums of the
decomposition :math:`r_{tu}=\alpha_t e^{s_u-m_t}+\beta_t s_u+\gamma_t` over :math:`u\le t`:

* inside the block, one explicit :math:`C\times C` weight
  :math:`w_{tu}=(\alpha_t e^{s_u-m_t}+\beta_t s_u+\gamma_t)\,q_t\cdot k_u` for :math:`u\le t`;
* from the earlier blocks, :math:`q'_t S_b` with :math:`q'_t=[\alpha_t c_t q_t,\beta_t q_t,
  \gamma_t q_t]`, :math:`c_t=e^{M_{b-1}-m_t}` and :math:`S_b=[F_b; G_b; H_b]`, where
  :math:`L_c=\sum_{u\in c}[e^{s_u-M_c}k_u;\, s_uk_u;\, k_u]\,v_u^\top` are the blocks' own
  sums, :math:`F_b=\sum_{c<b}e^{M_c-M_{b-1}}L^F_c` and :math:`G_b, H_b` the plain sums over
  :math:`c<b` (two small lower-triangular matmuls over the block index).

Every exponent is :math:`\le 0` (:math:`m_t\ge s_u` and :math:`m_t\ge M_{b-1}\ge M_c`), and
:math:`E_t=\sum_{u\le t}e^{s_u-m_t}=\exp(\mathrm{logcumsumexp}(s)_t-m_t)\ge1`, so no floor is
needed at any logit range. Written as batched operations over all blocks (no loop over blocks),
so that torch spreads each operation over its threads. The maxima are detached: they cancel in
:math:`\alpha_t c_t F_b` and in :math:`e^{s_u-m_t}/E_t`. Non-causal attention needs one set of
states over the whole sequence.

**Factored form.** When no row lies far below its block's maximum,
:math:`R=\max_t(M_b-m_t)\le` :func:`factored_range` (61.4 in fp32), the weight splits as
:math:`r_{tu}=a_tx_u+\beta_ts_u+\gamma_t` with :math:`a_t=\alpha_te^{M_b-m_t}\le\alpha_te^R` and
:math:`x_u=e^{s_u-M_b}\le1`, a rank-3 matrix. Then both sums are one linear attention on the
values :math:`\tilde v_u=[x_uv_u,\ s_uv_u,\ v_u]` (3e columns): per block
:math:`Y=(\text{masked }QK^\top)\tilde V+QS_b` with :math:`S_b` the prefix of
:math:`K^\top\tilde V` over earlier blocks (its first third decayed by :math:`e^{M_c-M_b}`), and
:math:`o_t=a_tY^{(1)}_t+\beta_tY^{(2)}_t+\gamma_tY^{(3)}_t`. No :math:`C\times C` exponential is
formed. The bound keeps every :math:`x_u` that carries weight above the dtype's resolution
(:math:`e^{s_u-m_t}\ge\epsilon`) a normal number, so the two forms agree to rounding;
beyond it the pairwise form above runs.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as nnf

from zeros.decomposition import coefficients

__all__ = ["attention", "factored_range"]


def factored_range(dtype: torch.dtype) -> float:
    r"""The largest in-block spread :math:`R=\max_t(M_b-m_t)` of the factored form:
    :math:`-\ln(\text{tiny})+\ln\epsilon-10` (61.4 in fp32, 662 in float64), so that
    :math:`x_u=e^{s_u-M_b}\ge e^{-R}\epsilon` stays 10 e-folds above the smallest normal number
    for every key whose weight :math:`e^{s_u-m_t}` is at least the resolution :math:`\epsilon`,
    and :math:`a_t\le\alpha_te^R` stays finite."""
    info = torch.finfo(dtype)
    return -math.log(info.tiny) + math.log(info.eps) - 10.0


def attention(q, k, v, s, gate1, gateh, gate0, causal, chunk_size):
    """ZeroS attention for unit-length q, k (B, T, H, d), v (B, T, H, e), in blocks."""
    if not causal:
        return _global(q, k, v, s, gate1, gateh, gate0)
    B, T, H, d = q.shape
    e = v.shape[-1]
    C = chunk_size
    n = -(-T // C)
    pad = n * C - T  # trailing positions; causal, so they change no earlier row

    def blocks(x: torch.Tensor) -> torch.Tensor:  # (B, T, H, *) -> (B, H, n, C, *)
        x = x.transpose(1, 2)
        x = nnf.pad(x, (0, 0, 0, pad) if x.dim() == 4 else (0, pad)) if pad else x
        return x.reshape(B, H, n, C, *x.shape[3:])

    qb, kb, vb, sb = blocks(q), blocks(k), blocks(v), blocks(s)
    s_flat = sb.reshape(B, H, n * C)
    m = torch.cummax(s_flat.detach(), dim=-1).values.reshape(B, H, n, C)
    M = m[..., -1]  # (B, H, n)
    E = torch.exp(torch.logcumsumexp(s_flat, dim=-1).reshape(B, H, n, C) - m)
    P = torch.cumsum(s_flat, dim=-1).reshape(B, H, n, C)
    t = torch.arange(1, n * C + 1, dtype=q.dtype, device=q.device).reshape(n, C)
    gates = (blocks(g) if g is not None else None for g in (gate1, gateh, gate0))
    alpha, beta, gamma = coefficients(E, P, *gates, t)

    future = torch.ones(C, C, dtype=torch.bool, device=q.device).triu(1)  # u > t in a block
    cos = (qb @ kb.transpose(-1, -2)).masked_fill_(future, 0.0)
    spread = (M.unsqueeze(-1) - m).amax() if m.numel() else m.new_zeros(())
    if spread.item() <= factored_range(q.dtype):
        o = _factored(qb, kb, vb, sb, m, M, alpha, beta, gamma, cos)
    else:
        o = _pairwise(qb, kb, vb, sb, m, M, alpha, beta, gamma, cos)
    return o.reshape(B, H, n * C, e)[:, :, :T].transpose(1, 2)


def _factored(qb, kb, vb, sb, m, M, alpha, beta, gamma, cos):
    """The rank-3 form (module docstring), blocks (B, H, n, C, *) in, (B, H, n, C, e) out."""
    B, H, n, C, d = qb.shape
    e = vb.shape[-1]
    x = torch.exp(sb - M.unsqueeze(-1))  # e^{s_u - M_b} <= 1
    a = alpha * torch.exp(M.unsqueeze(-1) - m)  # alpha_t e^{M_b - m_t} <= alpha_t e^R
    vt = torch.cat([x.unsqueeze(-1) * vb, sb.unsqueeze(-1) * vb, vb], dim=-1)  # (B, H, n, C, 3e)
    L = kb.transpose(-1, -2) @ vt  # (B, H, n, d, 3e): each block's own K^T V~
    L = L.reshape(B, H, n, d, 3, e).permute(0, 1, 4, 2, 3, 5).reshape(B, H, 3, n, d * e)
    earlier = torch.ones(n, n, dtype=torch.bool, device=qb.device).tril(-1)  # [b, c]: c < b
    decay = torch.where(earlier, torch.exp(M.unsqueeze(-2) - M.unsqueeze(-1)), 0.0)
    plain = earlier.to(qb.dtype).expand_as(decay)
    S = torch.stack([decay, plain, plain], dim=2) @ L  # (B, H, 3, n, d e): the prefixes S_b
    S = S.reshape(B, H, 3, n, d, e).permute(0, 1, 3, 4, 2, 5).reshape(-1, d, 3 * e)
    Y = torch.baddbmm((cos @ vt).reshape(-1, C, 3 * e), qb.reshape(-1, C, d), S)
    Y = Y.reshape(B, H, n, C, 3, e)
    o = Y[..., 2, :] * gamma.unsqueeze(-1)
    return o.addcmul_(Y[..., 1, :], beta.unsqueeze(-1)).addcmul_(Y[..., 0, :], a.unsqueeze(-1))


def _pairwise(qb, kb, vb, sb, m, M, alpha, beta, gamma, cos):
    """The pairwise form (module docstring), for any logit range."""
    B, H, n, C, d = qb.shape
    M_prev = torch.cat([torch.full_like(M[..., :1], float("-inf")), M[..., :-1]], dim=-1)
    future = torch.ones(C, C, dtype=torch.bool, device=qb.device).triu(1)
    # s_u - m_t <= 0 for u <= t; zeroing u > t only keeps exp finite where cos is already 0
    gap = (sb.unsqueeze(-2) - m.unsqueeze(-1)).masked_fill_(future, 0.0)
    decayed = alpha.unsqueeze(-1) * torch.exp(gap)
    # beta_t s_u + gamma_t as a rank-2 product, added in the same kernel
    bg = torch.stack([beta, gamma], dim=-1).reshape(-1, C, 2)
    s1 = torch.stack([sb, torch.ones_like(sb)], dim=-2).reshape(-1, 2, C)
    w = torch.baddbmm(decayed.reshape(-1, C, C), bg, s1).reshape(B, H, n, C, C) * cos

    wk = torch.exp(sb - M.unsqueeze(-1))  # e^{s_u - M_c} <= 1
    ka = torch.cat([wk.unsqueeze(-1) * kb, sb.unsqueeze(-1) * kb, kb], dim=-1)
    L = ka.transpose(-1, -2) @ vb  # (B, H, n, 3d, e)
    earlier = torch.ones(n, n, dtype=torch.bool, device=qb.device).tril(-1)  # [b, c]: c < b
    decay = torch.where(earlier, torch.exp(M.unsqueeze(-2) - M_prev.unsqueeze(-1)), 0.0)
    F = decay @ L[..., :d, :].reshape(B, H, n, -1)
    GH = earlier.to(qb.dtype) @ L[..., d:, :].reshape(B, H, n, -1)
    S = torch.cat([F.reshape(B, H, n, d, -1), GH.reshape(B, H, n, 2 * d, -1)], dim=-2)
    carry = torch.exp(M_prev.unsqueeze(-1) - m)  # 0 in the first block
    qa = torch.cat(
        [(alpha * carry).unsqueeze(-1) * qb, beta.unsqueeze(-1) * qb, gamma.unsqueeze(-1) * qb],
        dim=-1,
    )
    return w @ vb + qa @ S


def _global(q, k, v, s, gate1, gateh, gate0):
    """Non-causal: one set of states over the whole sequence, shifted by the global max."""
    T = q.shape[1]
    m = s.detach().amax(dim=1, keepdim=True)
    w = torch.exp(s - m)
    F = torch.einsum("bth,bthd,bthe->bhde", w, k, v)
    G = torch.einsum("bth,bthd,bthe->bhde", s, k, v)
    Hs = torch.einsum("bthd,bthe->bhde", k, v)
    alpha, beta, gamma = coefficients(
        w.sum(1, keepdim=True), s.sum(1, keepdim=True), gate1, gateh, gate0, float(T)
    )
    return (
        alpha.unsqueeze(-1) * torch.einsum("bthd,bhde->bthe", q, F)
        + beta.unsqueeze(-1) * torch.einsum("bthd,bhde->bthe", q, G)
        + gamma.unsqueeze(-1) * torch.einsum("bthd,bhde->bthe", q, Hs)
    )
