r"""Triton kernels of chunked, normalised causal linear attention.

One program per (batch, head, block of ``BE`` value columns) walks the sequence in chunks of
``BT`` rows, carrying its columns of the state :math:`S = \sum_{j<t} \phi(k_j) v_j^\top`
(m x e) and :math:`z = \sum_{j<t} \phi(k_j)` in fp32 (the value dimension split across programs,
as flash-linear-attention does, keeps the state tile small enough for registers):

.. math::
    A = \operatorname{tril}(\Phi_q \Phi_k^\top),\quad
    o = \frac{\Phi_q S + A V}{\Phi_q z + A\mathbf{1} + \varepsilon}.

Backward, with :math:`s_i` the denominator, :math:`G_i = dO_i / s_i` and
:math:`c_i = (dO_i\cdot o_i)/s_i`, the score gradient is :math:`dA_{ij} = G_i\cdot v_j - c_i`
(:math:`j \le i`), so

.. math::
    d\phi(q_i) = S_i G_i - c_i z_i,\quad
    d\phi(k_j) = R_j v_j - r_j,\quad dv_j = R_j^\top \phi(k_j),

with :math:`R_j = \sum_{i \ge j} \phi(q_i) G_i^\top`, :math:`r_j = \sum_{i\ge j} c_i \phi(q_i)`:
a forward sweep for :math:`d\phi_q` and a reverse sweep for :math:`d\phi_k, dv`. In the backward
each value block writes its share of :math:`d\phi_q, d\phi_k` (the terms in :math:`c` only from
block 0; :math:`c` is computed on the host over the whole value row) and the host sums the
shares. Program ids are cast to int64 before any multiplication, so every offset is 64-bit.
This module imports Triton; it is imported on first use.
"""

import triton
import triton.language as tl


@triton.jit
def causal_fwd(
    PQ, PK, V, O, DEN, N, MP, E, eps,
    BM: tl.constexpr, BE: tl.constexpr, BT: tl.constexpr,
):  # fmt: skip
    bh = tl.program_id(0).to(tl.int64)
    eb = tl.program_id(1).to(tl.int64)
    mcols = tl.arange(0, BM)
    ecols = eb * BE + tl.arange(0, BE)
    m_ok = mcols < MP
    e_ok = ecols < E
    S = tl.zeros((BM, BE), dtype=tl.float32)
    z = tl.zeros((BM,), dtype=tl.float32)
    for start in range(0, N, BT):
        rows = start + tl.arange(0, BT)
        r_ok = rows < N
        f_off = (bh * N + rows[:, None]) * MP + mcols[None, :]
        v_off = (bh * N + rows[:, None]) * E + ecols[None, :]
        fm = r_ok[:, None] & m_ok[None, :]
        vm = r_ok[:, None] & e_ok[None, :]
        pq = tl.load(PQ + f_off, mask=fm, other=0.0).to(tl.float32)
        pk = tl.load(PK + f_off, mask=fm, other=0.0).to(tl.float32)
        v = tl.load(V + v_off, mask=vm, other=0.0).to(tl.float32)
        a = tl.dot(pq, tl.trans(pk), input_precision="ieee")
        a = tl.where(rows[:, None] >= rows[None, :], a, 0.0)
        num = tl.dot(pq, S, input_precision="ieee") + tl.dot(a, v, input_precision="ieee")
        den = tl.sum(pq * z[None, :], axis=1) + tl.sum(a, axis=1)
        o = num / (den + eps)[:, None]
        tl.store(O + v_off, o.to(O.dtype.element_ty), mask=vm)
        tl.store(DEN + bh * N + rows, den, mask=r_ok & (rows * 0 + eb == 0))
        S += tl.dot(tl.trans(pk), v, input_precision="ieee")
        z += tl.sum(pk, axis=0)


@triton.jit
def _grad_terms(DO, DEN, C, v_off, vm, bh, N, rows, r_ok, eps, first):
    """G = dO / s for this value block and c = (dO . o) / s (precomputed over the whole row),
    kept only in value block 0 (``first``) so the host's sum over blocks counts it once."""
    do = tl.load(DO + v_off, mask=vm, other=0.0).to(tl.float32)
    s = tl.load(DEN + bh * N + rows, mask=r_ok, other=0.0) + eps
    c = tl.load(C + bh * N + rows, mask=r_ok & (rows * 0 + first > 0), other=0.0)
    return do / s[:, None], c


@triton.jit
def causal_bwd(
    PQ, PK, V, DEN, C, DO, DPQ, DPK, DV, N, MP, E, eps, NCHUNK,
    BM: tl.constexpr, BE: tl.constexpr, BT: tl.constexpr,
):  # fmt: skip
    """DPQ, DPK: (n_value_blocks, B*H, N, MP) fp32, one share per value block (summed by the
    host); DV (B*H, N, E) fp32."""
    bh = tl.program_id(0).to(tl.int64)
    eb = tl.program_id(1).to(tl.int64)
    nbh = tl.num_programs(0).to(tl.int64)
    first = (eb == 0).to(tl.int32)
    mcols = tl.arange(0, BM)
    ecols = eb * BE + tl.arange(0, BE)
    m_ok = mcols < MP
    e_ok = ecols < E
    # forward sweep: d phi_q
    S = tl.zeros((BM, BE), dtype=tl.float32)
    z = tl.zeros((BM,), dtype=tl.float32)
    for start in range(0, N, BT):
        rows = start + tl.arange(0, BT)
        r_ok = rows < N
        f_off = (bh * N + rows[:, None]) * MP + mcols[None, :]
        v_off = (bh * N + rows[:, None]) * E + ecols[None, :]
        fm = r_ok[:, None] & m_ok[None, :]
        vm = r_ok[:, None] & e_ok[None, :]
        pk = tl.load(PK + f_off, mask=fm, other=0.0).to(tl.float32)
        v = tl.load(V + v_off, mask=vm, other=0.0).to(tl.float32)
        g, c = _grad_terms(DO, DEN, C, v_off, vm, bh, N, rows, r_ok, eps, first)
        da = tl.dot(g, tl.trans(v), input_precision="ieee") - c[:, None]
        da = tl.where(rows[:, None] >= rows[None, :], da, 0.0)
        dpq = tl.dot(g, tl.trans(S), input_precision="ieee") - c[:, None] * z[None, :]
        dpq += tl.dot(da, pk, input_precision="ieee")
        tl.store(DPQ + eb * nbh * N * MP + f_off, dpq, mask=fm)
        S += tl.dot(tl.trans(pk), v, input_precision="ieee")
        z += tl.sum(pk, axis=0)
    # reverse sweep: d phi_k and dv
    R = tl.zeros((BM, BE), dtype=tl.float32)
    r = tl.zeros((BM,), dtype=tl.float32)
    for step in range(NCHUNK):
        rows = (NCHUNK - 1 - step) * BT + tl.arange(0, BT)
        r_ok = rows < N
        f_off = (bh * N + rows[:, None]) * MP + mcols[None, :]
        v_off = (bh * N + rows[:, None]) * E + ecols[None, :]
        fm = r_ok[:, None] & m_ok[None, :]
        vm = r_ok[:, None] & e_ok[None, :]
        pq = tl.load(PQ + f_off, mask=fm, other=0.0).to(tl.float32)
        pk = tl.load(PK + f_off, mask=fm, other=0.0).to(tl.float32)
        v = tl.load(V + v_off, mask=vm, other=0.0).to(tl.float32)
        g, c = _grad_terms(DO, DEN, C, v_off, vm, bh, N, rows, r_ok, eps, first)
        causal = rows[:, None] >= rows[None, :]
        da = tl.where(causal, tl.dot(g, tl.trans(v), input_precision="ieee") - c[:, None], 0.0)
        a = tl.where(causal, tl.dot(pq, tl.trans(pk), input_precision="ieee"), 0.0)
        dpk = tl.dot(tl.trans(da), pq, input_precision="ieee")
        dpk += tl.dot(v, tl.trans(R), input_precision="ieee") - r[None, :]
        dv = tl.dot(tl.trans(a), g, input_precision="ieee") + tl.dot(pk, R, input_precision="ieee")
        tl.store(DPK + eb * nbh * N * MP + f_off, dpk, mask=fm)
        tl.store(DV + v_off, dv, mask=vm)
        R += tl.dot(tl.trans(pq), g, input_precision="ieee")
        r += tl.sum(pq * c[:, None], axis=0)


@triton.jit
def _hedgehog_tile(X, w, bias, x_off, xm, h_ok):
    """One chunk's hedgehog features, the two halves [softmax(z), softmax(-z)] with
    z = x W^T + b (padded columns of z set to -inf, so they get weight 0)."""
    x = tl.load(X + x_off, mask=xm, other=0.0).to(tl.float32)
    z = tl.dot(x, tl.trans(w), input_precision="ieee") + bias[None, :]
    zp = tl.where(h_ok[None, :], z, -float("inf"))
    zn = tl.where(h_ok[None, :], -z, -float("inf"))
    ep = tl.exp(zp - tl.max(zp, axis=1)[:, None])
    en = tl.exp(zn - tl.max(zn, axis=1)[:, None])
    return ep / tl.sum(ep, axis=1)[:, None], en / tl.sum(en, axis=1)[:, None]


@triton.jit
def causal_fwd_hedgehog(
    Q, K, W, BIAS, KEEP, V, O, DEN, N, H, D, MH, E, eps,
    BD: tl.constexpr, BH: tl.constexpr, BE: tl.constexpr, BT: tl.constexpr,
):  # fmt: skip
    """``causal_fwd`` with the hedgehog map fused into the prologue: q, k (B, H, N, D) go in,
    phi = [softmax(xW^T + b), softmax(-(xW^T + b))] (W: (H, MH, D) per head) is computed per
    chunk in registers and never written (each value block recomputes them); KEEP (B, N) zeroes
    padded keys. The state is held as two halves S = [S+; S-], z = [z+; z-]."""
    bh = tl.program_id(0).to(tl.int64)
    eb = tl.program_id(1).to(tl.int64)
    h = bh % H
    b = bh // H
    dcols = tl.arange(0, BD)
    hcols = tl.arange(0, BH)
    ecols = eb * BE + tl.arange(0, BE)
    d_ok = dcols < D
    h_ok = hcols < MH
    e_ok = ecols < E
    w = tl.load(
        W + (h * MH + hcols[:, None]) * D + dcols[None, :],
        mask=h_ok[:, None] & d_ok[None, :],
        other=0.0,
    ).to(tl.float32)
    bias = tl.load(BIAS + h * MH + hcols, mask=h_ok, other=0.0).to(tl.float32)
    S1 = tl.zeros((BH, BE), dtype=tl.float32)
    S2 = tl.zeros((BH, BE), dtype=tl.float32)
    z1 = tl.zeros((BH,), dtype=tl.float32)
    z2 = tl.zeros((BH,), dtype=tl.float32)
    for start in range(0, N, BT):
        rows = start + tl.arange(0, BT)
        r_ok = rows < N
        x_off = (bh * N + rows[:, None]) * D + dcols[None, :]
        v_off = (bh * N + rows[:, None]) * E + ecols[None, :]
        xm = r_ok[:, None] & d_ok[None, :]
        vm = r_ok[:, None] & e_ok[None, :]
        q1, q2 = _hedgehog_tile(Q, w, bias, x_off, xm, h_ok)
        k1, k2 = _hedgehog_tile(K, w, bias, x_off, xm, h_ok)
        keep = tl.load(KEEP + b * N + rows, mask=r_ok, other=0.0)
        k1 = k1 * keep[:, None]
        k2 = k2 * keep[:, None]
        v = tl.load(V + v_off, mask=vm, other=0.0).to(tl.float32)
        a = tl.dot(q1, tl.trans(k1), input_precision="ieee")
        a += tl.dot(q2, tl.trans(k2), input_precision="ieee")
        a = tl.where(rows[:, None] >= rows[None, :], a, 0.0)
        num = tl.dot(q1, S1, input_precision="ieee") + tl.dot(q2, S2, input_precision="ieee")
        num += tl.dot(a, v, input_precision="ieee")
        den = tl.sum(q1 * z1[None, :], axis=1) + tl.sum(q2 * z2[None, :], axis=1)
        den += tl.sum(a, axis=1)
        o = num / (den + eps)[:, None]
        tl.store(O + v_off, o.to(O.dtype.element_ty), mask=vm)
        tl.store(DEN + bh * N + rows, den, mask=r_ok & (rows * 0 + eb == 0))
        S1 += tl.dot(tl.trans(k1), v, input_precision="ieee")
        S2 += tl.dot(tl.trans(k2), v, input_precision="ieee")
        z1 += tl.sum(k1, axis=0)
        z2 += tl.sum(k2, axis=0)
