r"""The Triton kernels of FlashBias (FlashAttention-2 style, with the rank-R bias operands).

Every program works on (batch·head) ``pid_bh`` and one block of rows or columns; the tiles are

.. math::
    S = s\,q k^\top + \phi_q \phi_k^\top \;(+\,A)\;(+\,\text{causal } -\infty).

* ``flash_bias_fwd``: per query block, streams the key blocks with an online softmax and stores
  :math:`O` and the row log-sum-exp :math:`L`.
* ``flash_bias_bwd_dkdv``: per key block, streams the query blocks, recomputes
  :math:`P = e^{S - L}` and accumulates :math:`dV = P^\top dO`, :math:`dK = s\,dS^\top Q`,
  :math:`d\phi_k = dS^\top \phi_q`, with :math:`dS = P \odot (dO\,V^\top - D)` and
  :math:`D = \mathrm{rowsum}(dO \odot O)`.
* ``flash_bias_bwd_dq``: per query block, streams the key blocks and accumulates
  :math:`dQ = s\,dS\,K`, :math:`d\phi_q = dS\,\phi_k`.

No :math:`N\times M` array is written to memory. This module imports Triton; it is imported on
first use by :mod:`flashbias.kernels.attention_triton`.
"""

import triton
import triton.language as tl


@triton.jit
def flash_bias_fwd(
    Q, K, V, QB, KB, MASK, O, LSE,
    N, M, H, scale,
    sq_b, sq_n, sq_h,
    sk_b, sk_m, sk_h,
    sqb_b, sqb_n, sqb_h,
    skb_b, skb_m, skb_h,
    sm_b, sm_h, sm_n, sm_m,
    HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
    D: tl.constexpr, RP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
):  # fmt: skip
    pid_n = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dcols = tl.arange(0, D)
    rcols = tl.arange(0, RP)
    row_ok = rows < N
    q = tl.load(
        Q + b * sq_b + rows[:, None] * sq_n + h * sq_h + dcols[None, :],
        mask=row_ok[:, None],
        other=0.0,
    )
    qb = tl.load(
        QB + b * sqb_b + rows[:, None] * sqb_n + h * sqb_h + rcols[None, :],
        mask=row_ok[:, None],
        other=0.0,
    )
    m_i = tl.full((BLOCK_N,), -float("inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_N,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    end = M
    if CAUSAL:
        end = tl.minimum(M, (pid_n + 1) * BLOCK_N)
    for start in range(0, end, BLOCK_M):
        cols = start + tl.arange(0, BLOCK_M)
        col_ok = cols < M
        k = tl.load(
            K + b * sk_b + cols[:, None] * sk_m + h * sk_h + dcols[None, :],
            mask=col_ok[:, None],
            other=0.0,
        )
        v = tl.load(
            V + b * sk_b + cols[:, None] * sk_m + h * sk_h + dcols[None, :],
            mask=col_ok[:, None],
            other=0.0,
        )
        kb = tl.load(
            KB + b * skb_b + cols[:, None] * skb_m + h * skb_h + rcols[None, :],
            mask=col_ok[:, None],
            other=0.0,
        )
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        s += tl.dot(qb, tl.trans(kb), input_precision=PREC)
        valid = row_ok[:, None] & col_ok[None, :]
        if HAS_MASK:
            s += tl.load(
                MASK + b * sm_b + h * sm_h + rows[:, None] * sm_n + cols[None, :] * sm_m,
                mask=valid,
                other=0.0,
            ).to(tl.float32)
        if CAUSAL:
            valid = valid & (cols[None, :] <= rows[:, None])
        s = tl.where(valid, s, -float("inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        m_safe = tl.where(m_new == -float("inf"), 0.0, m_new)
        p = tl.exp(s - m_safe[:, None])
        alpha = tl.exp(m_i - m_safe)
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p.to(v.dtype), v, input_precision=PREC)
        m_i = m_new
    l_safe = tl.where(l_i == 0.0, 1.0, l_i)  # padded rows: nothing stored, no 0/0
    out = acc / l_safe[:, None]
    tl.store(
        O + b * sq_b + rows[:, None] * sq_n + h * sq_h + dcols[None, :],
        out.to(O.dtype.element_ty),
        mask=row_ok[:, None],
    )
    tl.store(LSE + pid_bh * N + rows, m_i + tl.log(l_safe), mask=row_ok)


@triton.jit
def _scores(
    q, qb, k, kb, MASK, rows, cols, row_ok, col_ok, lse, b, h, scale,
    sm_b, sm_h, sm_n, sm_m,
    HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
):  # fmt: skip
    """P = exp(S - LSE) for one (query block, key block) tile, 0 outside the valid region."""
    s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
    s += tl.dot(qb, tl.trans(kb), input_precision=PREC)
    valid = row_ok[:, None] & col_ok[None, :]
    if HAS_MASK:
        s += tl.load(
            MASK + b * sm_b + h * sm_h + rows[:, None] * sm_n + cols[None, :] * sm_m,
            mask=valid,
            other=0.0,
        ).to(tl.float32)
    if CAUSAL:
        valid = valid & (cols[None, :] <= rows[:, None])
    return tl.where(valid, tl.exp(s - lse[:, None]), 0.0)


@triton.jit
def flash_bias_bwd_dkdv(
    Q, K, V, QB, KB, MASK, DO, LSE, DELTA, DK, DV, DKB,
    N, M, H, scale,
    sq_b, sq_n, sq_h,
    sk_b, sk_m, sk_h,
    sqb_b, sqb_n, sqb_h,
    skb_b, skb_m, skb_h,
    sm_b, sm_h, sm_n, sm_m,
    sgqb_b, sgqb_n, sgqb_h,
    sgkb_b, sgkb_m, sgkb_h,
    HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
    D: tl.constexpr, RP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
):  # fmt: skip
    """One program per (key block, batch·head): dK, dV, dφ_k, with the query blocks streamed."""
    pid_m = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    cols = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    dcols = tl.arange(0, D)
    rcols = tl.arange(0, RP)
    col_ok = cols < M
    k_off = b * sk_b + cols[:, None] * sk_m + h * sk_h + dcols[None, :]
    kb_off = b * skb_b + cols[:, None] * skb_m + h * skb_h + rcols[None, :]
    k = tl.load(K + k_off, mask=col_ok[:, None], other=0.0)
    v = tl.load(V + k_off, mask=col_ok[:, None], other=0.0)
    kb = tl.load(KB + kb_off, mask=col_ok[:, None], other=0.0)
    dk = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    dv = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    dkb = tl.zeros((BLOCK_M, RP), dtype=tl.float32)
    begin = 0
    if CAUSAL:
        begin = (pid_m * BLOCK_M // BLOCK_N) * BLOCK_N  # rows i < j see no key j
    for start in range(begin, N, BLOCK_N):
        rows = start + tl.arange(0, BLOCK_N)
        row_ok = rows < N
        q_off = b * sq_b + rows[:, None] * sq_n + h * sq_h + dcols[None, :]
        q = tl.load(Q + q_off, mask=row_ok[:, None], other=0.0)
        do = tl.load(DO + q_off, mask=row_ok[:, None], other=0.0)
        qb = tl.load(
            QB + b * sqb_b + rows[:, None] * sqb_n + h * sqb_h + rcols[None, :],
            mask=row_ok[:, None],
            other=0.0,
        )
        lse = tl.load(LSE + pid_bh * N + rows, mask=row_ok, other=0.0)
        delta = tl.load(DELTA + pid_bh * N + rows, mask=row_ok, other=0.0)
        p = _scores(
            q, qb, k, kb, MASK, rows, cols, row_ok, col_ok, lse, b, h, scale,
            sm_b, sm_h, sm_n, sm_m, HAS_MASK, CAUSAL, PREC,
        )  # fmt: skip
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PREC)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PREC)
        dkb += tl.dot(tl.trans(ds.to(qb.dtype)), qb, input_precision=PREC)
    tl.store(DK + k_off, dk * scale, mask=col_ok[:, None])
    tl.store(DV + k_off, dv, mask=col_ok[:, None])
    tl.store(
        DKB + b * sgkb_b + cols[:, None] * sgkb_m + h * sgkb_h + rcols[None, :],
        dkb,
        mask=col_ok[:, None],
    )


@triton.jit
def flash_bias_bwd_dq(
    Q, K, V, QB, KB, MASK, DO, LSE, DELTA, DQ, DQB,
    N, M, H, scale,
    sq_b, sq_n, sq_h,
    sk_b, sk_m, sk_h,
    sqb_b, sqb_n, sqb_h,
    skb_b, skb_m, skb_h,
    sm_b, sm_h, sm_n, sm_m,
    sgqb_b, sgqb_n, sgqb_h,
    sgkb_b, sgkb_m, sgkb_h,
    HAS_MASK: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
    D: tl.constexpr, RP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
):  # fmt: skip
    """One program per (query block, batch·head): dQ and dφ_q, with the key blocks streamed."""
    pid_n = tl.program_id(0)
    pid_bh = tl.program_id(1)
    b = pid_bh // H
    h = pid_bh % H
    rows = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    dcols = tl.arange(0, D)
    rcols = tl.arange(0, RP)
    row_ok = rows < N
    q_off = b * sq_b + rows[:, None] * sq_n + h * sq_h + dcols[None, :]
    q = tl.load(Q + q_off, mask=row_ok[:, None], other=0.0)
    do = tl.load(DO + q_off, mask=row_ok[:, None], other=0.0)
    qb = tl.load(
        QB + b * sqb_b + rows[:, None] * sqb_n + h * sqb_h + rcols[None, :],
        mask=row_ok[:, None],
        other=0.0,
    )
    lse = tl.load(LSE + pid_bh * N + rows, mask=row_ok, other=0.0)
    delta = tl.load(DELTA + pid_bh * N + rows, mask=row_ok, other=0.0)
    dq = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    dqb = tl.zeros((BLOCK_N, RP), dtype=tl.float32)
    end = M
    if CAUSAL:
        end = tl.minimum(M, (pid_n + 1) * BLOCK_N)
    for start in range(0, end, BLOCK_M):
        cols = start + tl.arange(0, BLOCK_M)
        col_ok = cols < M
        k_off = b * sk_b + cols[:, None] * sk_m + h * sk_h + dcols[None, :]
        k = tl.load(K + k_off, mask=col_ok[:, None], other=0.0)
        v = tl.load(V + k_off, mask=col_ok[:, None], other=0.0)
        kb = tl.load(
            KB + b * skb_b + cols[:, None] * skb_m + h * skb_h + rcols[None, :],
            mask=col_ok[:, None],
            other=0.0,
        )
        p = _scores(
            q, qb, k, kb, MASK, rows, cols, row_ok, col_ok, lse, b, h, scale,
            sm_b, sm_h, sm_n, sm_m, HAS_MASK, CAUSAL, PREC,
        )  # fmt: skip
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PREC)
        dqb += tl.dot(ds.to(kb.dtype), kb, input_precision=PREC)
    tl.store(DQ + q_off, dq * scale, mask=row_ok[:, None])
    tl.store(
        DQB + b * sgqb_b + rows[:, None] * sgqb_n + h * sgqb_h + rcols[None, :],
        dqb,
        mask=row_ok[:, None],
    )
