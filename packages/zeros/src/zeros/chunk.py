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
:math:`x_u=e^{s_u-M_b}\le1`, a rank-3 matrix, and ZeroS is one linear attention on
:math:`q'_t=[a_t\hat q_t,\beta_t\hat q_t,\gamma_t\hat q_t]` and
:math:`k'_u=[x_u\hat k_u,s_u\hat k_u,\hat k_u]`: per block, the in-block weight
:math:`(\hat q_t\cdot\hat k_u)([a_t,\beta_t,\gamma_t]\cdot[x_u,s_u,1])` (a :math:`C\times d` and
a :math:`C\times3` matmul, multiplied), plus :math:`q'_tS_b` with :math:`S_b` the prefix of
:math:`k'^\top v` over earlier blocks (its first third decayed by :math:`e^{M_c-M_b}`). No
:math:`C\times C` exponential is formed. There, :math:`a_t=\sigma^h_t/(X_t+K_b)` needs no
``logcumsumexp``: :math:`X_t` is the in-block prefix sum of :math:`x_u` and
:math:`K_b=\sum_{c<b}e^{M_c-M_b}X^{\mathrm{end}}_c`; and :math:`1/\lVert k_u\rVert` rides on the
keys' three scalars, so k is never normalised in a pass of its own. That arrangement is for calls
autograd does not record; a recorded call puts the features on the value side instead
(:func:`_factored_values`), whose backward is cheaper. The bound keeps every :math:`x_u` that
carries weight above the dtype's resolution (:math:`e^{s_u-m_t}\ge\epsilon`) a normal number, and
:math:`X_t+K_b\ge e^{-R}`, so the forms agree to rounding; beyond it the pairwise form above runs.
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
    """ZeroS attention for q, k (B, T, H, d) (unit length or not: normalised here), v (B, T, H,
    e), in blocks."""
    if not causal:
        return _global(_unit(q), _unit(k), v, s, gate1, gateh, gate0)
    B, T, H, _ = q.shape
    C = min(chunk_size, T)  # one block of T when T is shorter: no padded work
    n = -(-T // C)
    pad = n * C - T  # trailing positions; causal, so they change no earlier row

    def blocks(x: torch.Tensor) -> torch.Tensor:  # (B, T, H, *) -> (B, H, n, C, *), a view
        x = x.transpose(1, 2)
        x = nnf.pad(x, (0, 0, 0, pad) if x.dim() == 4 else (0, pad)) if pad else x
        return x.reshape(B, H, n, C, *x.shape[3:])

    sb = blocks(s)
    s_flat = sb.reshape(B, H, n * C)
    m = torch.cummax(s_flat.detach(), dim=-1).values.reshape(B, H, n, C)
    M = m[..., -1]  # (B, H, n)
    P = torch.cumsum(s_flat, dim=-1).reshape(B, H, n, C)
    t = torch.arange(1, n * C + 1, dtype=q.dtype, device=q.device).reshape(n, C)
    gates = [blocks(g) if g is not None else None for g in (gate1, gateh, gate0)]
    earlier = torch.ones(n, n, dtype=torch.bool, device=q.device).tril(-1)  # [b, c]: c < b
    spread = (M.unsqueeze(-1) - m).amax() if m.numel() else m.new_zeros(())
    recorded = torch.is_grad_enabled() and any(
        x is not None and x.requires_grad for x in (q, k, v, s, gate1, gateh, gate0)
    )
    if spread.item() <= factored_range(q.dtype):
        factored = _factored_values if recorded else _factored_keys
        o = factored(blocks, q, k, v, sb, m, M, P, gates, t, earlier)
    else:
        E = torch.exp(torch.logcumsumexp(s_flat, dim=-1).reshape(B, H, n, C) - m)
        alpha, beta, gamma = coefficients(E, P, *gates, t)
        qb, kb, vb = blocks(_unit(q)), blocks(_unit(k)), blocks(v)
        o = _pairwise(qb, kb, vb, sb, m, M, alpha, beta, gamma, earlier)
    return o.reshape(B, H, n * C, -1)[:, :, :T].transpose(1, 2)


def _unit(x: torch.Tensor) -> torch.Tensor:
    return nnf.normalize(x, dim=-1)


def _inverse_norm(x: torch.Tensor) -> torch.Tensor:
    r""":math:`1/\max(\lVert x\rVert, 10^{-12})` over the last axis (as ``F.normalize``)."""
    return torch.linalg.vector_norm(x, dim=-1).clamp_min(1e-12).reciprocal()


def _scaled(x: torch.Tensor, scales: list[torch.Tensor]) -> torch.Tensor:
    """``[c x for c in scales]`` stacked on a new axis -2, each product written straight into
    the result (no temporaries; not recorded by autograd): x (..., C, d), each c (..., C)."""
    out = x.new_empty(*x.shape[:-1], len(scales), x.shape[-1])
    for i, c in enumerate(scales):
        torch.mul(x, c.unsqueeze(-1), out=out[..., i, :])
    return out


def _future(C: int, device: torch.device) -> torch.Tensor:
    """(C, C) mask of the pairs u > t inside a block (zeroed: causal)."""
    return torch.ones(C, C, dtype=torch.bool, device=device).triu(1)


def _decay(M: torch.Tensor, earlier: torch.Tensor) -> torch.Tensor:
    r"""(B, H, n, n): :math:`e^{M_c-M_b}\le1` for every earlier block c < b, else 0."""
    return torch.where(earlier, torch.exp(M.unsqueeze(-2) - M.unsqueeze(-1)), 0.0)


def _prefixes(L: torch.Tensor, decay: torch.Tensor, earlier: torch.Tensor) -> torch.Tensor:
    """The states :math:`S_b` carried into each block: from the blocks' own sums L (B, H, 3, n,
    X) of the three parts, the sum over the earlier blocks c < b, the first part decayed by
    :math:`e^{M_c-M_b}` (two small lower-triangular matmuls over the block index)."""
    plain = earlier.to(L.dtype).expand_as(decay)
    return torch.stack([decay, plain, plain], dim=2) @ L


def _factored_keys(blocks, q, k, v, sb, m, M, P, gates, t, earlier):
    """The factored form as linear attention on (q', k', v) (module docstring), for calls that
    autograd does not record: q, k (B, T, H, d) of any length in, (B, H, n, C, e) out."""
    B, H, n, C = sb.shape
    d, e, N = q.shape[-1], v.shape[-1], B * H * n
    decay = _decay(M, earlier)
    x = torch.exp(sb - M.unsqueeze(-1))  # e^{s_u - M_b} <= 1
    X = torch.cumsum(x, dim=-1)
    a, beta, gamma = coefficients(X + decay @ X[..., -1:], P, *gates, t)
    # the unit queries in one contiguous copy; the keys' norms ride on their three scalars
    qn = torch.mul(
        blocks(q), blocks(_inverse_norm(q)).unsqueeze(-1), out=q.new_empty(B, H, n, C, d)
    )
    rk = blocks(_inverse_norm(k))
    qa = _scaled(qn, [a, beta, gamma])  # (B, H, n, C, 3, d): q'
    ka = _scaled(blocks(k), [x * rk, sb * rk, rk])  # k'
    vb = blocks(v).reshape(N, C, e)
    # in-block weights (unit q_t . unit k_u)([a_t, beta_t, gamma_t] . [x_u, s_u, 1]), for u <= t
    r = torch.stack([a, beta, gamma], dim=-1).reshape(N, C, 3) @ torch.stack(
        [x, sb, torch.ones_like(sb)], dim=-2
    ).reshape(N, 3, C)
    w = qn.reshape(N, C, d) @ ka[..., 2, :].reshape(N, C, d).transpose(1, 2)
    w = w.mul_(r).masked_fill_(_future(C, q.device), 0.0)
    # earlier blocks: S_b, the prefix of each block's own k'^T v
    L = ka.reshape(N, C, 3 * d).transpose(1, 2) @ vb  # (N, 3d, e)
    L = L.reshape(B, H, n, 3, d * e).transpose(2, 3)
    S = _prefixes(L, decay, earlier).transpose(2, 3).reshape(N, 3 * d, e)
    o = torch.baddbmm(w @ vb, qa.reshape(N, C, 3 * d), S)
    return o.reshape(B, H, n, C, e)


def _factored_values(blocks, q, k, v, sb, m, M, P, gates, t, earlier):
    r"""The factored form with the features on the value side, for calls autograd records:
    per block :math:`Y=(\text{masked }\hat Q\hat K^\top)\tilde V+\hat QS_b` on
    :math:`\tilde v_u=[x_uv_u, s_uv_u, v_u]` (3e columns), then
    :math:`o_t=a_tY^{(1)}_t+\beta_tY^{(2)}_t+\gamma_tY^{(3)}_t`. It does more multiply-adds
    than :func:`_factored_keys` but far fewer element-wise products, whose backward passes
    (a product and a reduction each) made that form's forward + backward slower. :math:`E_t`
    comes from ``logcumsumexp``: the backward through :math:`X_t+K_b` would carry
    :math:`e^{2R}`, past fp32's range for rows 45 below their block's maximum."""
    B, H, n, C = sb.shape
    e = v.shape[-1]
    E = torch.exp(torch.logcumsumexp(sb.reshape(B, H, n * C), dim=-1).reshape_as(m) - m)
    alpha, beta, gamma = coefficients(E, P, *gates, t)
    qb, kb, vb = blocks(_unit(q)), blocks(_unit(k)), blocks(v)
    d = qb.shape[-1]
    cos = (qb @ kb.transpose(-1, -2)).masked_fill_(_future(C, q.device), 0.0)
    x = torch.exp(sb - M.unsqueeze(-1))  # e^{s_u - M_b} <= 1
    a = alpha * torch.exp(M.unsqueeze(-1) - m)  # alpha_t e^{M_b - m_t} <= alpha_t e^R
    vt = torch.cat([x.unsqueeze(-1) * vb, sb.unsqueeze(-1) * vb, vb], dim=-1)  # (B, H, n, C, 3e)
    L = kb.transpose(-1, -2) @ vt  # (B, H, n, d, 3e): each block's own K^T V~
    L = L.reshape(B, H, n, d, 3, e).permute(0, 1, 4, 2, 3, 5).reshape(B, H, 3, n, d * e)
    S = _prefixes(L, _decay(M, earlier), earlier)  # (B, H, 3, n, d e)
    S = S.reshape(B, H, 3, n, d, e).permute(0, 1, 3, 4, 2, 5).reshape(-1, d, 3 * e)
    Y = torch.baddbmm((cos @ vt).reshape(-1, C, 3 * e), qb.reshape(-1, C, d), S)
    Y = Y.reshape(B, H, n, C, 3, e)
    o = Y[..., 2, :] * gamma.unsqueeze(-1)
    return o.addcmul_(Y[..., 1, :], beta.unsqueeze(-1)).addcmul_(Y[..., 0, :], a.unsqueeze(-1))


def _pairwise(qb, kb, vb, sb, m, M, alpha, beta, gamma, earlier):
    """The pairwise form (module docstring), for any logit range, on unit q, k."""
    B, H, n, C, d = qb.shape
    M_prev = torch.cat([torch.full_like(M[..., :1], float("-inf")), M[..., :-1]], dim=-1)
    future = _future(C, qb.device)
    # s_u - m_t <= 0 for u <= t; zeroing u > t only keeps exp finite where cos is already 0
    gap = (sb.unsqueeze(-2) - m.unsqueeze(-1)).masked_fill_(future, 0.0)
    decayed = alpha.unsqueeze(-1) * torch.exp(gap)
    # beta_t s_u + gamma_t as a rank-2 product, added in the same kernel
    bg = torch.stack([beta, gamma], dim=-1).reshape(-1, C, 2)
    s1 = torch.stack([sb, torch.ones_like(sb)], dim=-2).reshape(-1, 2, C)
    cos = (qb @ kb.transpose(-1, -2)).masked_fill_(future, 0.0)
    w = torch.baddbmm(decayed.reshape(-1, C, C), bg, s1).reshape(B, H, n, C, C) * cos

    wk = torch.exp(sb - M.unsqueeze(-1))  # e^{s_u - M_c} <= 1
    ka = torch.cat([wk.unsqueeze(-1) * kb, sb.unsqueeze(-1) * kb, kb], dim=-1)
    L = ka.transpose(-1, -2) @ vb  # (B, H, n, 3d, e)
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
