r"""The Triton selective-scan forward kernel (Mamba-1 recurrence, fused).

One program per (batch b, block of BLOCK_E channels). The state :math:`h` (BLOCK_E × NP) stays in
registers while the program walks the L time steps; each step fuses the discretisation
(:math:`\Delta = \mathrm{softplus}(\Delta^{in} + b_\Delta)`, :math:`e^{\Delta A}`), the update
:math:`h \leftarrow e^{\Delta A} h + \Delta B_t u_t`, the read-out :math:`C_t \cdot h`, the D skip
and the :math:`\mathrm{SiLU}(z)` gate, and stores one output column. Base offsets are 64-bit and
the pointers advance by one stride per step, so no offset product overflows 32 bits.
This module imports Triton; it is imported on first use by :mod:`amvim.kernels.scan_triton`.
"""

import triton
import triton.language as tl


@triton.jit
def selective_scan_fwd(
    U, DELTA, A, BM, CM, DV, Z, DB, OUT, LAST,
    E, L, N,
    su_b, su_e, su_l,
    sd_b, sd_e, sd_l,
    sa_e, sa_n,
    sb_b, sb_n, sb_l,
    sc_b, sc_n, sc_l,
    sz_b, sz_e, sz_l,
    so_b, so_e, so_l,
    HAS_D: tl.constexpr, HAS_Z: tl.constexpr, HAS_DB: tl.constexpr, SOFTPLUS: tl.constexpr,
    BLOCK_E: tl.constexpr, NP: tl.constexpr,
):  # fmt: skip
    b = tl.program_id(0).to(tl.int64)
    eb = tl.program_id(1).to(tl.int64)
    es = eb * BLOCK_E + tl.arange(0, BLOCK_E)
    ns = tl.arange(0, NP)
    e_ok = es < E
    n_ok = ns < N
    a = tl.load(
        A + es[:, None] * sa_e + ns[None, :] * sa_n, mask=e_ok[:, None] & n_ok[None, :], other=0.0
    ).to(tl.float32)
    d_skip = tl.zeros((BLOCK_E,), dtype=tl.float32)
    if HAS_D:
        d_skip = tl.load(DV + es, mask=e_ok, other=0.0).to(tl.float32)
    d_bias = tl.zeros((BLOCK_E,), dtype=tl.float32)
    if HAS_DB:
        d_bias = tl.load(DB + es, mask=e_ok, other=0.0).to(tl.float32)
    h = tl.zeros((BLOCK_E, NP), dtype=tl.float32)
    # 64-bit base offsets (b and es are int64); the pointers then advance one step per t, so no
    # t·stride product can overflow 32 bits
    u_p = U + b * su_b + es * su_e
    d_p = DELTA + b * sd_b + es * sd_e
    b_p = BM + b * sb_b + ns * sb_n
    c_p = CM + b * sc_b + ns * sc_n
    z_p = Z + b * sz_b + es * sz_e
    o_p = OUT + b * so_b + es * so_e
    for _ in range(L):
        u = tl.load(u_p, mask=e_ok, other=0.0).to(tl.float32)
        dt = tl.load(d_p, mask=e_ok, other=0.0).to(tl.float32) + d_bias
        if SOFTPLUS:
            dt = tl.where(dt <= 20.0, tl.log(1.0 + tl.exp(dt)), dt)
        bt = tl.load(b_p, mask=n_ok, other=0.0).to(tl.float32)
        ct = tl.load(c_p, mask=n_ok, other=0.0).to(tl.float32)
        h = tl.exp(dt[:, None] * a) * h + (dt * u)[:, None] * bt[None, :]
        y = tl.sum(h * ct[None, :], axis=1) + d_skip * u
        if HAS_Z:
            z = tl.load(z_p, mask=e_ok, other=0.0).to(tl.float32)
            y = y * z / (1.0 + tl.exp(-z))
        tl.store(o_p, y.to(OUT.dtype.element_ty), mask=e_ok)
        u_p += su_l
        d_p += sd_l
        b_p += sb_l
        c_p += sc_l
        z_p += sz_l
        o_p += so_l
    tl.store(
        LAST + b * E * N + es[:, None] * N + ns[None, :],
        h.to(LAST.dtype.element_ty),
        mask=e_ok[:, None] & n_ok[None, :],
    )
