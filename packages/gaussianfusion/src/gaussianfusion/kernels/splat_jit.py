r"""The source of the tile-based splatting kernel (imported on first use: it imports Triton).

One program per (tile of ``BLOCK_P`` BEV cells, batch item, block of ``BLOCK_F`` value columns)
walks the Gaussians in blocks of ``BLOCK_N`` and accumulates, in fp32,

.. math::

    B(p) = \sum_i o_i \exp\!\big(-\tfrac12 (u_i^2 + v_i^2)\big)\, v_i, \qquad
    (u_i, v_i)^\top = \operatorname{diag}(e^{-l_i}) R(\theta_i)^\top (p - \mu_i),

the weights of a block as a ``BLOCK_P x BLOCK_N`` tile and the sum as one ``tl.dot`` with the
block's values (fp32 operands, ``input_precision="ieee"``). With ``CULL`` a weight counts only
where :math:`u^2 + v^2 \le r^2`, and a block of Gaussians whose ellipse boxes
(:math:`|p_x-\mu_x|\le r\sqrt{\Sigma_{xx}}`, the same along y) miss every cell centre of the tile
is skipped. Offsets are 64-bit (program ids cast to ``int64`` before any stride).
"""

from __future__ import annotations

import triton
import triton.language as tl

__all__ = ["splat_fwd"]


@triton.jit
def splat_fwd(
    PAR,  # (B, N, 8) fp32: mean x, mean y, cos, sin, e^{-l_x}, e^{-l_y}, opacity, unused
    BOX,  # (B, N, 2) fp32: half-widths r sqrt(Sigma_xx), r sqrt(Sigma_yy) in metres (CULL only)
    VAL,  # (B, N, F) fp32
    OUT,  # (B, F, H * W) fp32
    N,
    F,
    W,
    P,
    x0,
    dx,
    y0,
    dy,
    r2,  # cutoff^2 (CULL only)
    CULL: tl.constexpr,
    BLOCK_P: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_F: tl.constexpr,
):
    pid_p = tl.program_id(0).to(tl.int64)
    b = tl.program_id(1).to(tl.int64)
    pid_f = tl.program_id(2).to(tl.int64)
    cells = pid_p * BLOCK_P + tl.arange(0, BLOCK_P).to(tl.int64)
    cell_ok = cells < P
    px = x0 + ((cells // W).to(tl.float32) + 0.5) * dx
    py = y0 + ((cells % W).to(tl.float32) + 0.5) * dy
    cols = pid_f * BLOCK_F + tl.arange(0, BLOCK_F).to(tl.int64)
    col_ok = cols < F
    if CULL:
        big = 3.0e38
        tx0 = tl.min(tl.where(cell_ok, px, big), axis=0)
        tx1 = tl.max(tl.where(cell_ok, px, -big), axis=0)
        ty0 = tl.min(tl.where(cell_ok, py, big), axis=0)
        ty1 = tl.max(tl.where(cell_ok, py, -big), axis=0)
    acc = tl.zeros((BLOCK_P, BLOCK_F), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        gauss = n0 + tl.arange(0, BLOCK_N).to(tl.int64)
        g_ok = gauss < N
        base = PAR + (b * N + gauss) * 8
        mx = tl.load(base + 0, mask=g_ok, other=0.0)
        my = tl.load(base + 1, mask=g_ok, other=0.0)
        hit = g_ok
        if CULL:
            rx = tl.load(BOX + (b * N + gauss) * 2, mask=g_ok, other=0.0)
            ry = tl.load(BOX + (b * N + gauss) * 2 + 1, mask=g_ok, other=0.0)
            hit = g_ok & (mx + rx >= tx0) & (mx - rx <= tx1) & (my + ry >= ty0) & (my - ry <= ty1)
        if tl.max(hit.to(tl.int32), axis=0) > 0:
            c = tl.load(base + 2, mask=g_ok, other=1.0)
            s = tl.load(base + 3, mask=g_ok, other=0.0)
            isx = tl.load(base + 4, mask=g_ok, other=0.0)
            isy = tl.load(base + 5, mask=g_ok, other=0.0)
            opac = tl.load(base + 6, mask=hit, other=0.0)  # 0 for Gaussians that miss the tile
            ddx = px[:, None] - mx[None, :]
            ddy = py[:, None] - my[None, :]
            u = (c[None, :] * ddx + s[None, :] * ddy) * isx[None, :]
            v = (c[None, :] * ddy - s[None, :] * ddx) * isy[None, :]
            m2 = u * u + v * v
            w = opac[None, :] * tl.exp(-0.5 * m2)
            if CULL:
                w = tl.where(m2 <= r2, w, 0.0)
            vals = tl.load(
                VAL + (b * N + gauss[:, None]) * F + cols[None, :],
                mask=g_ok[:, None] & col_ok[None, :],
                other=0.0,
            )
            acc += tl.dot(w, vals, input_precision="ieee")
    out = OUT + (b * F + cols[None, :]) * P + cells[:, None]
    tl.store(out, acc, mask=cell_ok[:, None] & col_ok[None, :])
