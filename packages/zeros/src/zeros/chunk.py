r"""The ``chunk`` path: blocks of C positions, :math:`O(TCd + Td^2)` time, :math:`O(d^2)` state.

Inside a block the weights are explicit (a C x C matrix); across blocks the three :math:`d\times e`
states are carried. :math:`F` and :math:`E` are kept scaled by :math:`e^{-m}` with :math:`m` the
running maximum of the logits seen so far; when a block raises it, the carried :math:`F, E` are
rescaled by :math:`e^{m_{old}-m_{new}}` (as flash attention does), and inside a block each row uses
its own running maximum, so :math:`E_t\ge1` and no floor is needed at any logit range.
Non-causal attention needs one set of states over the whole sequence.
"""

from __future__ import annotations

import torch

from zeros.decomposition import coefficients

__all__ = ["attention"]


def attention(q, k, v, s, gate1, gateh, gate0, causal, chunk_size):
    """ZeroS attention for unit-length q, k (B, T, H, d), v (B, T, H, e), in blocks."""
    if not causal:
        return _global(q, k, v, s, gate1, gateh, gate0)
    B, T, H, d = q.shape
    e = v.shape[-1]
    out = []
    F = q.new_zeros(B, H, d, e)  # carried states; F and E scaled by exp(-m_run)
    G = q.new_zeros(B, H, d, e)
    Hs = q.new_zeros(B, H, d, e)
    E = q.new_zeros(B, H)
    P = q.new_zeros(B, H)
    m_run = q.new_full((B, H), float("-inf"))
    for start in range(0, T, chunk_size):
        stop = min(start + chunk_size, T)
        C = stop - start
        qc, kc, vc = (x[:, start:stop].transpose(1, 2) for x in (q, k, v))  # (B, H, C, *)
        sc = s[:, start:stop].transpose(1, 2)  # (B, H, C)
        mask = torch.ones(C, C, dtype=torch.bool, device=q.device).tril()
        # per-row running max over everything seen so far (detached: it cancels in alpha F)
        sd = sc.detach()
        m_row = torch.maximum(m_run.unsqueeze(-1), torch.cummax(sd, dim=-1).values)  # (B, H, C)
        carry = torch.exp(m_run.unsqueeze(-1) - m_row)  # rescales carried F, E per row
        we = torch.exp(sc.unsqueeze(-2) - m_row.unsqueeze(-1)).masked_fill(~mask, 0.0)
        cos = (qc @ kc.transpose(-1, -2)).masked_fill(~mask, 0.0)
        num_e = (we * cos) @ vc + carry.unsqueeze(-1) * (qc @ F)
        E_row = carry * E.unsqueeze(-1) + we.sum(-1)
        num_g = (sc.unsqueeze(-2) * cos) @ vc + qc @ G
        num_h = cos @ vc + qc @ Hs
        P_row = P.unsqueeze(-1) + torch.cumsum(sc, dim=-1)
        t = torch.arange(start + 1, stop + 1, dtype=q.dtype, device=q.device)
        rows = (
            g[:, start:stop].transpose(1, 2) if g is not None else None
            for g in (gate1, gateh, gate0)
        )
        alpha, beta, gamma = coefficients(E_row, P_row, *rows, t)
        o = alpha.unsqueeze(-1) * num_e + beta.unsqueeze(-1) * num_g + gamma.unsqueeze(-1) * num_h
        out.append(o.transpose(1, 2))
        # carry the states past this block
        m_new = torch.maximum(m_run, sd.amax(dim=-1))
        scale = torch.exp(m_run - m_new)
        wk = torch.exp(sc - m_new.unsqueeze(-1))  # (B, H, C)
        F = scale[..., None, None] * F + (wk.unsqueeze(-1) * kc).transpose(-1, -2) @ vc
        E = scale * E + wk.sum(-1)
        G = G + (sc.unsqueeze(-1) * kc).transpose(-1, -2) @ vc
        Hs = Hs + kc.transpose(-1, -2) @ vc
        P = P + sc.sum(-1)
        m_run = m_new
    return torch.cat(out, dim=1)


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
