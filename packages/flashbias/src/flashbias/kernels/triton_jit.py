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

The grid is one axis of ``n_blocks · B · H`` programs (block index fastest), so no axis meets the
65,535 limit of grid axes 1 and 2. Addresses are split into a 64-bit base (batch, head and the
first row or column of a tile, each cast to ``tl.int64`` before it meets a stride) added to the
pointer, plus a 32-bit offset within the tile (at most ``BLOCK · stride``, which the launcher
checks): no product of an index and a stride is formed in 32 bits, whatever B·N·H·d or B·H·N·M
is, while the per-element offsets stay 32-bit registers.

No :math:`N\times M` array is written to memory. This module imports Triton; it is imported on
first use by :mod:`flashbias.kernels.attention_triton`.
"""

import triton
import triton.language as tl


@triton.jit
def _program(L, H, BLOCK: tl.constexpr):
    """(block index, batch·head index, b, h) of this program; b and h as int64."""
    pid = tl.program_id(0)
    n_blocks = tl.cdiv(L, BLOCK)
    pid_l = pid % n_blocks
    pid_bh = pid // n_blocks
    b = (pid_bh // H).to(tl.int64)
    h = (pid_bh % H).to(tl.int64)
    return pid_l, pid_bh, b, h


@triton.jit
def _base(b, h, first, s_b, s_h, s_l):
    """The int64 offset of row ``first`` of (batch b, head h): every product in 64 bits."""
    return b * s_b + h * s_h + tl.cast(first, tl.int64) * s_l


@triton.jit
def flash_bias_fwd(
    Q, K, V, QB, KB, MASK, O, LSE,
    N, M, H, scale,
    sq_b, sq_n, sq_h,
    sk_b, sk_m, sk_h,
    sqb_b, sqb_n, sqb_h,
    skb_b, skb_m, skb_h,
    sm_b, sm_h, sm_n, sm_m,
    HAS_MASK: tl.constexpr, HAS_BIAS: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
    D: tl.constexpr, RP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
):  # fmt: skip
    pid_n, pid_bh, b, h = _program(N, H, BLOCK_N)
    row0 = pid_n * BLOCK_N
    r = tl.arange(0, BLOCK_N)
    c = tl.arange(0, BLOCK_M)
    rows = row0 + r
    dcols = tl.arange(0, D)
    rcols = tl.arange(0, RP)
    row_ok = rows < N
    q = tl.load(
        Q + _base(b, h, row0, sq_b, sq_h, sq_n) + r[:, None] * sq_n + dcols[None, :],
        mask=row_ok[:, None],
        other=0.0,
    )
    if HAS_BIAS:
        qb = tl.load(
            QB + _base(b, h, row0, sqb_b, sqb_h, sqb_n) + r[:, None] * sqb_n + rcols[None, :],
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
        cols = start + c
        col_ok = cols < M
        k_base = _base(b, h, start, sk_b, sk_h, sk_m)
        k = tl.load(
            K + k_base + c[:, None] * sk_m + dcols[None, :], mask=col_ok[:, None], other=0.0
        )
        v = tl.load(
            V + k_base + c[:, None] * sk_m + dcols[None, :], mask=col_ok[:, None], other=0.0
        )
        s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
        if HAS_BIAS:
            kb = tl.load(
                KB + _base(b, h, start, skb_b, skb_h, skb_m) + c[:, None] * skb_m + rcols[None, :],
                mask=col_ok[:, None],
                other=0.0,
            )
            s += tl.dot(qb, tl.trans(kb), input_precision=PREC)
        valid = row_ok[:, None] & col_ok[None, :]
        if HAS_MASK:
            m_base = _base(b, h, row0, sm_b, sm_h, sm_n) + tl.cast(start, tl.int64) * sm_m
            s += tl.load(
                MASK + m_base + r[:, None] * sm_n + c[None, :] * sm_m,
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
        O + _base(b, h, row0, sq_b, sq_h, sq_n) + r[:, None] * sq_n + dcols[None, :],
        out.to(O.dtype.element_ty),
        mask=row_ok[:, None],
    )
    tl.store(LSE + pid_bh.to(tl.int64) * N + rows, m_i + tl.log(l_safe), mask=row_ok)


@triton.jit
def _scores(
    q, qb, k, kb, MASK, r, c, row0, start, row_ok, col_ok, lse, b, h, scale,
    sm_b, sm_h, sm_n, sm_m,
    HAS_MASK: tl.constexpr, HAS_BIAS: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
):  # fmt: skip
    """P = exp(S - LSE) for the tile of rows row0 + r and columns start + c, 0 outside the valid
    region."""
    s = tl.dot(q, tl.trans(k), input_precision=PREC) * scale
    if HAS_BIAS:
        s += tl.dot(qb, tl.trans(kb), input_precision=PREC)
    valid = row_ok[:, None] & col_ok[None, :]
    if HAS_MASK:
        m_base = _base(b, h, row0, sm_b, sm_h, sm_n) + tl.cast(start, tl.int64) * sm_m
        s += tl.load(
            MASK + m_base + r[:, None] * sm_n + c[None, :] * sm_m,
            mask=valid,
            other=0.0,
        ).to(tl.float32)
    if CAUSAL:
        valid = valid & ((start + c)[None, :] <= (row0 + r)[:, None])
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
    HAS_MASK: tl.constexpr, HAS_BIAS: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
    D: tl.constexpr, RP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
):  # fmt: skip
    """One program per (key block, batch·head): dK, dV, dφ_k, with the query blocks streamed."""
    pid_m, pid_bh, b, h = _program(M, H, BLOCK_M)
    col0 = pid_m * BLOCK_M
    r = tl.arange(0, BLOCK_N)
    c = tl.arange(0, BLOCK_M)
    dcols = tl.arange(0, D)
    rcols = tl.arange(0, RP)
    col_ok = col0 + c < M
    k_base = _base(b, h, col0, sk_b, sk_h, sk_m)
    k = tl.load(K + k_base + c[:, None] * sk_m + dcols[None, :], mask=col_ok[:, None], other=0.0)
    v = tl.load(V + k_base + c[:, None] * sk_m + dcols[None, :], mask=col_ok[:, None], other=0.0)
    kb = k  # not read without a bias
    if HAS_BIAS:
        kb = tl.load(
            KB + _base(b, h, col0, skb_b, skb_h, skb_m) + c[:, None] * skb_m + rcols[None, :],
            mask=col_ok[:, None],
            other=0.0,
        )
    dk = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    dv = tl.zeros((BLOCK_M, D), dtype=tl.float32)
    dkb = tl.zeros((BLOCK_M, RP), dtype=tl.float32)
    begin = 0
    if CAUSAL:
        begin = (col0 // BLOCK_N) * BLOCK_N  # rows i < j see no key j
    lse_base = pid_bh.to(tl.int64) * N
    for start in range(begin, N, BLOCK_N):
        row_ok = start + r < N
        q_base = _base(b, h, start, sq_b, sq_h, sq_n)
        q = tl.load(
            Q + q_base + r[:, None] * sq_n + dcols[None, :], mask=row_ok[:, None], other=0.0
        )
        do = tl.load(
            DO + q_base + r[:, None] * sq_n + dcols[None, :], mask=row_ok[:, None], other=0.0
        )
        qb = q  # not read without a bias
        if HAS_BIAS:
            qb = tl.load(
                QB + _base(b, h, start, sqb_b, sqb_h, sqb_n) + r[:, None] * sqb_n + rcols[None, :],
                mask=row_ok[:, None],
                other=0.0,
            )
        lse = tl.load(LSE + lse_base + start + r, mask=row_ok, other=0.0)
        delta = tl.load(DELTA + lse_base + start + r, mask=row_ok, other=0.0)
        p = _scores(
            q, qb, k, kb, MASK, r, c, start, col0, row_ok, col_ok, lse, b, h, scale,
            sm_b, sm_h, sm_n, sm_m, HAS_MASK, HAS_BIAS, CAUSAL, PREC,
        )  # fmt: skip
        dv += tl.dot(tl.trans(p.to(do.dtype)), do, input_precision=PREC)
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dk += tl.dot(tl.trans(ds.to(q.dtype)), q, input_precision=PREC)
        if HAS_BIAS:
            dkb += tl.dot(tl.trans(ds.to(qb.dtype)), qb, input_precision=PREC)
    k_base = _base(b, h, col0, sk_b, sk_h, sk_m)
    tl.store(DK + k_base + c[:, None] * sk_m + dcols[None, :], dk * scale, mask=col_ok[:, None])
    tl.store(DV + k_base + c[:, None] * sk_m + dcols[None, :], dv, mask=col_ok[:, None])
    if HAS_BIAS:
        tl.store(
            DKB + _base(b, h, col0, sgkb_b, sgkb_h, sgkb_m) + c[:, None] * sgkb_m + rcols[None, :],
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
    HAS_MASK: tl.constexpr, HAS_BIAS: tl.constexpr, CAUSAL: tl.constexpr, PREC: tl.constexpr,
    D: tl.constexpr, RP: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_M: tl.constexpr,
):  # fmt: skip
    """One program per (query block, batch·head): dQ and dφ_q, with the key blocks streamed."""
    pid_n, pid_bh, b, h = _program(N, H, BLOCK_N)
    row0 = pid_n * BLOCK_N
    r = tl.arange(0, BLOCK_N)
    c = tl.arange(0, BLOCK_M)
    dcols = tl.arange(0, D)
    rcols = tl.arange(0, RP)
    row_ok = row0 + r < N
    q_base = _base(b, h, row0, sq_b, sq_h, sq_n)
    q = tl.load(Q + q_base + r[:, None] * sq_n + dcols[None, :], mask=row_ok[:, None], other=0.0)
    do = tl.load(DO + q_base + r[:, None] * sq_n + dcols[None, :], mask=row_ok[:, None], other=0.0)
    qb = q  # not read without a bias
    if HAS_BIAS:
        qb = tl.load(
            QB + _base(b, h, row0, sqb_b, sqb_h, sqb_n) + r[:, None] * sqb_n + rcols[None, :],
            mask=row_ok[:, None],
            other=0.0,
        )
    lse_base = pid_bh.to(tl.int64) * N + row0
    lse = tl.load(LSE + lse_base + r, mask=row_ok, other=0.0)
    delta = tl.load(DELTA + lse_base + r, mask=row_ok, other=0.0)
    dq = tl.zeros((BLOCK_N, D), dtype=tl.float32)
    dqb = tl.zeros((BLOCK_N, RP), dtype=tl.float32)
    end = M
    if CAUSAL:
        end = tl.minimum(M, (pid_n + 1) * BLOCK_N)
    for start in range(0, end, BLOCK_M):
        col_ok = start + c < M
        k_base = _base(b, h, start, sk_b, sk_h, sk_m)
        k = tl.load(
            K + k_base + c[:, None] * sk_m + dcols[None, :], mask=col_ok[:, None], other=0.0
        )
        v = tl.load(
            V + k_base + c[:, None] * sk_m + dcols[None, :], mask=col_ok[:, None], other=0.0
        )
        kb = k  # not read without a bias
        if HAS_BIAS:
            kb = tl.load(
                KB + _base(b, h, start, skb_b, skb_h, skb_m) + c[:, None] * skb_m + rcols[None, :],
                mask=col_ok[:, None],
                other=0.0,
            )
        p = _scores(
            q, qb, k, kb, MASK, r, c, row0, start, row_ok, col_ok, lse, b, h, scale,
            sm_b, sm_h, sm_n, sm_m, HAS_MASK, HAS_BIAS, CAUSAL, PREC,
        )  # fmt: skip
        dp = tl.dot(do, tl.trans(v), input_precision=PREC)
        ds = p * (dp - delta[:, None])
        dq += tl.dot(ds.to(k.dtype), k, input_precision=PREC)
        if HAS_BIAS:
            dqb += tl.dot(ds.to(kb.dtype), kb, input_precision=PREC)
    q_base = _base(b, h, row0, sq_b, sq_h, sq_n)
    tl.store(DQ + q_base + r[:, None] * sq_n + dcols[None, :], dq * scale, mask=row_ok[:, None])
    if HAS_BIAS:
        tl.store(
            DQB + _base(b, h, row0, sgqb_b, sgqb_h, sgqb_n) + r[:, None] * sgqb_n + rcols[None, :],
            dqb,
            mask=row_ok[:, None],
        )
