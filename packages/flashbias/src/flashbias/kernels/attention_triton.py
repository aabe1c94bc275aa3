r"""FlashBias as one fused FlashAttention-2-style Triton forward, with its autograd.Function.

One program per (query block, batch·head). It loads the q tile and its q-bias tile once, then for
each key block loads the k, k-bias and v tiles and forms

.. math::
    S = s\,q k^\top + \phi_q \phi_k^\top \;(+\,A)\;(+\,\text{causal } -\infty),

keeps the running row max :math:`m`, normaliser :math:`\ell` and output accumulator (online
softmax), and stores :math:`O` and the row log-sum-exp :math:`L = m + \log \ell`. The head size
and the rank are zero-padded to powers of two >= 16 (``tl.dot``'s smallest tile), which changes no
score. The backward recomputes :math:`P = e^{S - L}` from the saved LSE and applies
:math:`dV = P^\top dO`, :math:`dS = P\odot(dO\,V^\top - \mathrm{rowsum}(dO\odot O))`,
:math:`dQ = s\,dS\,K`, :math:`dK = s\,dS^\top Q`, :math:`d\phi_q = dS\,\phi_k`,
:math:`d\phi_k = dS^\top\phi_q` in torch. Triton is imported on first use only.
"""

from __future__ import annotations

import functools
import math

import torch
import torch.nn.functional as F

from paperkit import Described, param_error

__all__ = ["flash_bias_triton"]

_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@functools.cache
def _kernel():
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

    return flash_bias_fwd


def _pow2(n: int) -> int:
    return max(16, 1 << (max(n, 1) - 1).bit_length())


def _forward(q, k, v, q_bias, k_bias, mask, causal, scale):
    from paperkit import triton_interpret

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
    out = torch.empty_like(qp)
    lse = torch.empty(B, H, N, device=q.device, dtype=torch.float32)
    m = mask.expand(B, H, N, M) if mask is not None else lse
    ms = m.stride() if mask is not None else (0, 0, 0, 0)
    block = 32 if triton_interpret() else 64
    grid = (math.ceil(N / block), B * H)
    _kernel()[grid](
        qp, kp, vp, qb, kb, m, out, lse,
        N, M, H, scale,
        qp.stride(0), qp.stride(1), qp.stride(2),
        kp.stride(0), kp.stride(1), kp.stride(2),
        qb.stride(0), qb.stride(1), qb.stride(2),
        kb.stride(0), kb.stride(1), kb.stride(2),
        *ms,
        HAS_MASK=mask is not None, CAUSAL=causal,
        PREC="ieee" if q.dtype == torch.float32 else "tf32",
        D=D, RP=RP, BLOCK_N=block, BLOCK_M=block,
    )  # fmt: skip
    return out[..., :d], lse


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
        f32 = [x.float() if x is not None else None for x in (q, k, v, q_bias, k_bias, out)]
        qf, kf, vf, qbf, kbf, of = f32
        do = dout.float()
        s = ctx.scale * torch.einsum("bnhd,bmhd->bhnm", qf, kf)
        if qbf is not None:
            s = s + torch.einsum("bnhr,bmhr->bhnm", qbf, kbf)
        if mask is not None:
            s = s + mask.float()
        if ctx.causal:
            N, M = s.shape[-2:]
            s = s.masked_fill(
                ~torch.ones(N, M, dtype=torch.bool, device=s.device).tril(), -math.inf
            )
        p = torch.exp(s - lse[..., None])
        dv = torch.einsum("bhnm,bnhd->bmhd", p, do)
        delta = (do * of).sum(-1).transpose(1, 2)[..., None]  # (B, H, N, 1)
        ds = p * (torch.einsum("bnhd,bmhd->bhnm", do, vf) - delta)
        dq = ctx.scale * torch.einsum("bhnm,bmhd->bnhd", ds, kf)
        dk = ctx.scale * torch.einsum("bhnm,bnhd->bmhd", ds, qf)
        dqb = dkb = None
        if qbf is not None:
            dqb = torch.einsum("bhnm,bmhr->bnhr", ds, kbf.expand(ds.shape[0], -1, -1, -1))
            dkb = torch.einsum("bhnm,bnhr->bmhr", ds, qbf.expand(ds.shape[0], -1, -1, -1))
            dqb = dqb.sum(0, keepdim=True) if q_bias.shape[0] == 1 else dqb
            dkb = dkb.sum(0, keepdim=True) if k_bias.shape[0] == 1 else dkb
            dqb, dkb = dqb.to(q_bias.dtype), dkb.to(k_bias.dtype)
        return dq.to(q.dtype), dk.to(k.dtype), dv.to(v.dtype), dqb, dkb, None, None, None


def flash_bias_triton(q, k, v, q_bias, k_bias, mask, causal: bool, scale: float) -> torch.Tensor:
    """Run the fused kernel (differentiable in q, k, v, q_bias, k_bias); inputs as in
    :func:`flashbias.flash_bias_attention`, already validated. fp16, bf16 or fp32."""
    if q.dtype not in _DTYPES:
        raise param_error(
            "q",
            "flash_bias_attention",
            "float16, bfloat16 or float32 for the triton backend",
            Described(f"a {q.dtype} tensor"),
            cls=TypeError,
        )
    if mask is not None and mask.requires_grad:
        mask = mask.detach()
    return _FlashBias.apply(q, k, v, q_bias, k_bias, mask, causal, scale)
