r"""The source of the fused ZeroS Triton kernel (imported on first use: it imports Triton).

One program per (batch, head, block of ``BLOCK_E`` value columns) walks the sequence in blocks of
``BLOCK`` positions and keeps the three :math:`d\times` ``BLOCK_E`` states in registers. The value
columns of causal linear attention are independent, so splitting them over programs changes no
arithmetic: each program recomputes the same scalars (running max, :math:`E_t`, :math:`P_t`,
the gates' coefficients) and the same :math:`q k^\top` block, and writes its own output columns.

Offsets are 64-bit: the program ids and positions are cast to ``int64`` before they multiply a
stride, so no product overflows when the tensors hold more than :math:`2^{31}` elements.
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["zeros_chunk_fwd"]


@triton.jit(do_not_specialize=["has_g0"])
def zeros_chunk_fwd(
    Q,
    K,
    V,
    S,
    G1,
    GH,
    G0,
    O,
    T,
    H,
    stride_b,
    stride_t,
    stride_h,  # q, k, v, o share strides: (B, T, H, D) contiguous
    sstride_b,
    sstride_t,  # s and gates: (B, T, H) contiguous
    has_g0,  # 1: add gate0 / t to gamma; 0: no gate0
    D: tl.constexpr,
    BLOCK: tl.constexpr,
    BLOCK_E: tl.constexpr,
):
    pid = tl.program_id(0).to(tl.int64)  # b * H + h, 64-bit before any stride product
    e0 = tl.program_id(1).to(tl.int64) * BLOCK_E
    b = pid // H
    h = pid % H
    base = b * stride_b + h * stride_h
    sbase = b * sstride_b + h
    rows = tl.arange(0, BLOCK)
    cols = tl.arange(0, D)
    ecols = tl.arange(0, BLOCK_E)
    causal = rows[:, None] >= rows[None, :]
    F = tl.zeros((D, BLOCK_E), dtype=tl.float32)
    G = tl.zeros((D, BLOCK_E), dtype=tl.float32)
    Hs = tl.zeros((D, BLOCK_E), dtype=tl.float32)
    E = 0.0
    P = 0.0
    m_run = -float("inf")
    for start in range(0, T, BLOCK):
        pos = start + rows
        valid = pos < T
        row_off = base + pos.to(tl.int64)[:, None] * stride_t
        qk_off = row_off + cols[None, :]
        ve_off = row_off + e0 + ecols[None, :]
        q = tl.load(Q + qk_off, mask=valid[:, None], other=0.0).to(tl.float32)
        k = tl.load(K + qk_off, mask=valid[:, None], other=0.0).to(tl.float32)
        v = tl.load(V + ve_off, mask=valid[:, None], other=0.0).to(tl.float32)
        soff = sbase + pos.to(tl.int64) * sstride_t
        s = tl.load(S + soff, mask=valid, other=0.0).to(tl.float32)
        g1 = tl.load(G1 + soff, mask=valid, other=0.0).to(tl.float32)
        gh = tl.load(GH + soff, mask=valid, other=0.0).to(tl.float32)
        s_max = tl.where(valid, s, -float("inf"))
        # running max of every logit up to each row
        m_row = tl.maximum(m_run, tl.max(tl.where(causal, s_max[None, :], -float("inf")), axis=1))
        carry = tl.exp(m_run - m_row)
        we = tl.where(causal, tl.exp(s[None, :] - m_row[:, None]), 0.0)
        e_row = carry * E + tl.sum(we, axis=1)
        p_row = P + tl.sum(tl.where(causal, s[None, :], 0.0), axis=1)
        t = (pos + 1).to(tl.float32)  # exact up to 2^24 positions
        alpha = gh / e_row
        beta = (g1 - gh) / t
        # a runtime 0/1 factor rather than a constexpr branch: one compiled kernel per shape
        # (without gate0, G0 points at the finite logits and the factor is 0)
        g0 = tl.load(G0 + soff, mask=valid, other=0.0).to(tl.float32) * has_g0
        gamma = (g0 - beta * p_row - gh) / t
        # inside the block: one weight r_tu (q_t . k_u) for u <= t
        cos = tl.dot(q, tl.trans(k), input_precision="ieee")
        r = alpha[:, None] * we + beta[:, None] * s[None, :] + gamma[:, None]
        o = tl.dot(tl.where(causal, r * cos, 0.0), v, input_precision="ieee")
        # from the earlier blocks: [alpha c q, beta q, gamma q] against the carried states
        o += tl.dot(q * (alpha * carry)[:, None], F, input_precision="ieee")
        o += tl.dot(q * beta[:, None], G, input_precision="ieee")
        o += tl.dot(q * gamma[:, None], Hs, input_precision="ieee")
        tl.store(O + ve_off, o.to(O.dtype.element_ty), mask=valid[:, None])
        # carry the states past this block
        m_new = tl.maximum(m_run, tl.max(s_max, axis=0))
        scale = tl.exp(m_run - m_new)
        w = tl.where(valid, tl.exp(s - m_new), 0.0)
        F = scale * F + tl.dot(tl.trans(k * w[:, None]), v, input_precision="ieee")
        E = scale * E + tl.sum(w, axis=0)
        G += tl.dot(tl.trans(k * s[:, None]), v, input_precision="ieee")
        Hs += tl.dot(tl.trans(k), v, input_precision="ieee")
        P += tl.sum(s, axis=0)
        m_run = m_new
