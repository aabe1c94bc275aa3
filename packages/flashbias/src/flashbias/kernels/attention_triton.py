r"""FlashBias on the fused Triton kernels of :mod:`flashbias.kernels.triton_jit`: the host side
(padding, launch grids) and the autograd.Function.

The forward runs one program per (query block, batch·head) and stores :math:`O` and the row
log-sum-exp :math:`L`. The backward computes :math:`D = \mathrm{rowsum}(dO\odot O)` in torch, then
runs one kernel per key block (:math:`dK, dV, d\phi_k`, query blocks streamed) and one per query
block (:math:`dQ, d\phi_q`, key blocks streamed), recomputing :math:`P = e^{S - L}` tile by tile,
as FlashAttention-2 does; no :math:`N\times M` array is materialised. The head size and the rank
are zero-padded to powers of two >= 16 (``tl.dot``'s smallest tile), which changes no score and
no gradient of the unpadded columns. Triton is imported on first use only.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

__all__ = ["flash_bias_triton"]


def _pow2(n: int) -> int:
    return max(16, 1 << (max(n, 1) - 1).bit_length())


def _operands(q, k, v, q_bias, k_bias):
    """q, k, v zero-padded to D and the factors to RP columns (powers of two >= 16), contiguous;
    the factors in q's dtype, broadcast to the batch (stride 0 where given once)."""
    B, N, H, d = q.shape
    M = k.shape[1]
    D = _pow2(d)
    qp, kp, vp = (F.pad(x, (0, D - d)).contiguous() for x in (q, k, v))
    if q_bias is None:
        q_bias = q.new_zeros(1, N, H, 1)
        k_bias = k.new_zeros(1, M, H, 1)
    RP = _pow2(q_bias.shape[3])
    qb = F.pad(q_bias.to(q.dtype), (0, RP - q_bias.shape[3])).contiguous().expand(B, N, H, RP)
    kb = F.pad(k_bias.to(k.dtype), (0, RP - k_bias.shape[3])).contiguous().expand(B, M, H, RP)
    return qp, kp, vp, qb, kb


def _mask_args(mask, B, H, N, M, dummy):
    """The mask broadcast to (B, H, N, M) (stride 0 where broadcast) and its strides."""
    if mask is None:
        return dummy, (0, 0, 0, 0)
    m = mask.expand(B, H, N, M)
    return m, m.stride()


def _forward(q, k, v, q_bias, k_bias, mask, causal, scale):
    from flashbias.kernels import triton_jit
    from paperkit import triton_interpret

    B, N, H, d = q.shape
    M = k.shape[1]
    qp, kp, vp, qb, kb = _operands(q, k, v, q_bias, k_bias)
    out = torch.empty_like(qp)
    lse = torch.empty(B, H, N, device=q.device, dtype=torch.float32)
    m, ms = _mask_args(mask, B, H, N, M, lse)
    block = 32 if triton_interpret() else 64
    grid = (math.ceil(N / block), B * H)
    triton_jit.flash_bias_fwd[grid](
        qp, kp, vp, qb, kb, m, out, lse,
        N, M, H, scale,
        qp.stride(0), qp.stride(1), qp.stride(2),
        kp.stride(0), kp.stride(1), kp.stride(2),
        qb.stride(0), qb.stride(1), qb.stride(2),
        kb.stride(0), kb.stride(1), kb.stride(2),
        *ms,
        HAS_MASK=mask is not None, CAUSAL=causal,
        PREC="ieee" if q.dtype == torch.float32 else "tf32",
        D=qp.shape[3], RP=qb.shape[3], BLOCK_N=block, BLOCK_M=block,
    )  # fmt: skip
    return out[..., :d], lse


def _backward(q, k, v, q_bias, k_bias, mask, out, lse, dout, causal, scale):
    """The fused backward: D = rowsum(dO ⊙ O) in torch, then one kernel over key blocks (dK, dV,
    dφ_k) and one over query blocks (dQ, dφ_q); fp32 accumulators and outputs, cast at the end.
    Factors given once for the batch get their per-batch gradients summed."""
    from flashbias.kernels import triton_jit
    from paperkit import triton_interpret

    B, N, H, d = q.shape
    M = k.shape[1]
    qp, kp, vp, qb, kb = _operands(q, k, v, q_bias, k_bias)
    D, RP = qp.shape[3], qb.shape[3]
    dop = F.pad(dout.to(q.dtype), (0, D - d)).contiguous()
    delta = (dout.float() * out.float()).sum(-1).transpose(1, 2).contiguous()  # (B, H, N)
    # a row with every key masked has LSE = -inf; +inf makes its P = 0 instead of nan
    lse = lse.masked_fill(lse == -math.inf, math.inf)
    f32 = dict(device=q.device, dtype=torch.float32)
    # contiguous like qp / kp, so the kernels address dq with q's strides and dk, dv with k's
    dq, dk, dv = (torch.empty(B, L, H, D, **f32) for L in (N, M, M))
    dqb, dkb = torch.empty(B, N, H, RP, **f32), torch.empty(B, M, H, RP, **f32)
    m, ms = _mask_args(mask, B, H, N, M, lse)
    block = 32 if triton_interpret() or D > 64 else 64
    common = (
        N, M, H, scale,
        qp.stride(0), qp.stride(1), qp.stride(2),
        kp.stride(0), kp.stride(1), kp.stride(2),
        qb.stride(0), qb.stride(1), qb.stride(2),
        kb.stride(0), kb.stride(1), kb.stride(2),
        *ms,
        *dqb.stride()[:3], *dkb.stride()[:3],
    )  # fmt: skip
    meta = dict(
        HAS_MASK=mask is not None,
        CAUSAL=causal,
        PREC="ieee" if q.dtype == torch.float32 else "tf32",
        D=D,
        RP=RP,
        BLOCK_N=block,
        BLOCK_M=block,
    )
    triton_jit.flash_bias_bwd_dkdv[(math.ceil(M / block), B * H)](
        qp, kp, vp, qb, kb, m, dop, lse, delta, dk, dv, dkb, *common, **meta
    )
    triton_jit.flash_bias_bwd_dq[(math.ceil(N / block), B * H)](
        qp, kp, vp, qb, kb, m, dop, lse, delta, dq, dqb, *common, **meta
    )
    grads = [dq[..., :d].to(q.dtype), dk[..., :d].to(k.dtype), dv[..., :d].to(v.dtype)]
    if q_bias is None:
        return (*grads, None, None)
    factor_grads = []
    for g, f in ((dqb, q_bias), (dkb, k_bias)):
        g = g[..., : f.shape[3]]
        factor_grads.append((g.sum(0, keepdim=True) if f.shape[0] == 1 else g).to(f.dtype))
    return (*grads, *factor_grads)


class _FlashBias(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, q_bias, k_bias, mask, causal, scale):
        out, lse = _forward(q, k, v, q_bias, k_bias, mask, causal, scale)
        ctx.save_for_backward(q, k, v, q_bias, k_bias, mask, out, lse)
        ctx.causal, ctx.scale = causal, scale
        return out

    @staticmethod
    def backward(ctx, dout):
        q, k, v, q_bias, k_bias, mask, out, lse = ctx.saved_tensors
        dq, dk, dv, dqb, dkb = _backward(
            q, k, v, q_bias, k_bias, mask, out, lse, dout, ctx.causal, ctx.scale
        )
        return dq, dk, dv, dqb, dkb, None, None, None


def flash_bias_triton(q, k, v, q_bias, k_bias, mask, causal: bool, scale: float) -> torch.Tensor:
    """Run the fused kernels (differentiable in q, k, v, q_bias, k_bias; the mask gets no
    gradient). Inputs as in :func:`flashbias.flash_bias_attention`, already validated there:
    fp16, bf16 or fp32, factors and mask in q's dtype, d + R within the kernels' width."""
    if mask is not None and mask.requires_grad:
        mask = mask.detach()
    return _FlashBias.apply(q, k, v, q_bias, k_bias, mask, causal, scale)
