r"""FlashBias on the fused Triton kernels of :mod:`flashbias.kernels.triton_jit`: the host side
(padding, launch grids) and the autograd.Function.

The forward runs one program per (query block, batch·head) and stores :math:`O` and the row
log-sum-exp :math:`L`. The backward computes :math:`D = \mathrm{rowsum}(dO\odot O)` in torch, then
runs one kernel per key block (:math:`dK, dV, d\phi_k`, query blocks streamed) and one per query
block (:math:`dQ, d\phi_q`, key blocks streamed), recomputing :math:`P = e^{S - L}` tile by tile,
as FlashAttention-2 does; no :math:`N\times M` array is materialised. The head size is zero-padded
to D in (32, 64, 128) and the rank to RP in (16, 32) (:mod:`flashbias.kernels.launch`), which
changes no score and no gradient of the unpadded columns; tile sizes, warps and stages come from
:func:`~flashbias.kernels.launch.launch_config`, the configurations the static kernel gate
compiles, and every grid is one axis of blocks · B · H programs. Triton is imported on first use
only.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from flashbias.kernels.launch import grid, launch_config, pad_head, pad_rank

__all__ = ["flash_bias_triton"]


def _config(kernel: str, q: torch.Tensor, D: int, RP: int) -> dict[str, int]:
    """:func:`flashbias.kernels.launch.launch_config` for these inputs (the interpreter runs the
    same tiles as a GPU)."""
    return launch_config(kernel, str(q.dtype).removeprefix("torch."), D, RP)


def _operands(q, k, v, q_bias, k_bias):
    """q, k, v zero-padded to D and the factors to RP columns (:mod:`flashbias.kernels.launch`),
    contiguous, the factors in q's dtype, broadcast to the batch (stride 0 where given once); and
    RP. Without factors, qp and kp stand in for them (told HAS_BIAS=False, kernels read none)."""
    B, N, H, d = q.shape
    M = k.shape[1]
    D = pad_head(d)
    qp, kp, vp = (F.pad(x, (0, D - d)).contiguous() for x in (q, k, v))
    if q_bias is None:  # HAS_BIAS=False: the kernels read no factor, qp and kp stand in
        return qp, kp, vp, qp, kp, pad_rank(0, str(q.dtype).removeprefix("torch."), D)
    RP = pad_rank(q_bias.shape[3], str(q.dtype).removeprefix("torch."), D)
    qb = F.pad(q_bias.to(q.dtype), (0, RP - q_bias.shape[3])).contiguous().expand(B, N, H, RP)
    kb = F.pad(k_bias.to(k.dtype), (0, RP - k_bias.shape[3])).contiguous().expand(B, M, H, RP)
    return qp, kp, vp, qb, kb, RP


def _mask_args(mask, B, H, N, M, dummy):
    """The mask broadcast to (B, H, N, M) (stride 0 where broadcast) and its strides."""
    if mask is None:
        return dummy, (0, 0, 0, 0)
    m = mask.expand(B, H, N, M)
    return m, m.stride()


def _forward(q, k, v, q_bias, k_bias, mask, causal, scale):
    from flashbias.kernels import triton_jit

    B, N, H, d = q.shape
    M = k.shape[1]
    qp, kp, vp, qb, kb, RP = _operands(q, k, v, q_bias, k_bias)
    out = torch.empty_like(qp)
    lse = torch.empty(B, H, N, device=q.device, dtype=torch.float32)
    m, ms = _mask_args(mask, B, H, N, M, lse)
    config = _config("flash_bias_fwd", q, qp.shape[3], RP)
    triton_jit.flash_bias_fwd[grid(N, config["BLOCK_N"], B, H)](
        qp, kp, vp, qb, kb, m, out, lse,
        N, M, H, scale,
        qp.stride(0), qp.stride(1), qp.stride(2),
        kp.stride(0), kp.stride(1), kp.stride(2),
        qb.stride(0), qb.stride(1), qb.stride(2),
        kb.stride(0), kb.stride(1), kb.stride(2),
        *ms,
        HAS_MASK=mask is not None, HAS_BIAS=q_bias is not None, CAUSAL=causal,
        PREC="ieee" if q.dtype == torch.float32 else "tf32",
        D=qp.shape[3], RP=RP, **config,
    )  # fmt: skip
    return out[..., :d], lse


def _backward(q, k, v, q_bias, k_bias, mask, out, lse, dout, causal, scale):
    """The fused backward: D = rowsum(dO ⊙ O) in torch, then one kernel over key blocks (dK, dV,
    dφ_k) and one over query blocks (dQ, dφ_q); fp32 accumulators and outputs, cast at the end.
    Factors given once for the batch get their per-batch gradients summed."""
    from flashbias.kernels import triton_jit

    B, N, H, d = q.shape
    M = k.shape[1]
    qp, kp, vp, qb, kb, RP = _operands(q, k, v, q_bias, k_bias)
    D = qp.shape[3]
    dop = F.pad(dout.to(q.dtype), (0, D - d)).contiguous()
    delta = (dout.float() * out.float()).sum(-1).transpose(1, 2).contiguous()  # (B, H, N)
    # a row with every key masked has LSE = -inf; +inf makes its P = 0 instead of nan
    lse = lse.masked_fill(lse == -math.inf, math.inf)
    f32 = dict(device=q.device, dtype=torch.float32)
    # contiguous like qp / kp, so the kernels address dq with q's strides and dk, dv with k's
    dq, dk, dv = (torch.empty(B, L, H, D, **f32) for L in (N, M, M))
    if q_bias is None:  # HAS_BIAS=False: never written, lse stands in
        dqb = dkb = lse
    else:
        dqb, dkb = torch.empty(B, N, H, RP, **f32), torch.empty(B, M, H, RP, **f32)
    m, ms = _mask_args(mask, B, H, N, M, lse)
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
        HAS_BIAS=q_bias is not None,
        CAUSAL=causal,
        PREC="ieee" if q.dtype == torch.float32 else "tf32",
        D=D,
        RP=RP,
    )
    config = _config("flash_bias_bwd_dkdv", q, D, RP)
    triton_jit.flash_bias_bwd_dkdv[grid(M, config["BLOCK_M"], B, H)](
        qp, kp, vp, qb, kb, m, dop, lse, delta, dk, dv, dkb, *common, **meta, **config
    )
    config = _config("flash_bias_bwd_dq", q, D, RP)
    triton_jit.flash_bias_bwd_dq[grid(N, config["BLOCK_N"], B, H)](
        qp, kp, vp, qb, kb, m, dop, lse, delta, dq, dqb, *common, **meta, **config
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
    fp16, bf16 or fp32, factors and mask in q's dtype, d <= 128 and R <= 32."""
    if mask is not None and mask.requires_grad:
        mask = mask.detach()
    return _FlashBias.apply(q, k, v, q_bias, k_bias, mask, causal, scale)
