"""Host side of the Triton causal linear-attention kernels: the feature dimension padded with
zeros to a multiple of 16 (so every layer's m_l runs through one kernel family), contiguous
(B, H, N, .) buffers, one program per (batch, head), and the autograd.Functions.

Two entry points: :func:`causal_linear_attention_triton` on features phi(q), phi(k), and
:func:`causal_hedgehog_attention_triton`, which takes q, k and the per-head hedgehog weights and
computes the features inside the kernel (the fused prologue); its backward recomputes the
features in torch and reuses the feature-level backward kernel."""

from __future__ import annotations

import torch
import triton
from torch.nn import functional as F

from doflinattn.kernels.causal_jit import causal_bwd, causal_fwd, causal_fwd_hedgehog

#: Rows per chunk.
CHUNK = 16


def _pow2(n: int) -> int:
    return max(16, triton.next_power_of_2(n))


def _backward(pq, pk, v, o, den, do, eps):  # noqa: ANN001, ANN202
    """d phi_q, d phi_k (padded width, fp32) and dv (fp32) of the normalised causal form."""
    B, H, N, mp = pq.shape
    e = v.shape[-1]
    dpq = torch.empty(pq.shape, device=pq.device, dtype=torch.float32)
    dpk = torch.empty_like(dpq)
    dv = torch.empty(v.shape, device=v.device, dtype=torch.float32)
    causal_bwd[(B * H,)](
        pq,
        pk,
        v,
        o,
        den,
        do.contiguous(),
        dpq,
        dpk,
        dv,
        N,
        mp,
        e,
        eps,
        triton.cdiv(N, CHUNK),
        BM=_pow2(mp),
        BE=_pow2(e),
        BT=CHUNK,
    )
    return dpq, dpk, dv


class _CausalLinearAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, phi_q, phi_k, v, eps):  # noqa: ANN001 - autograd signature
        B, H, N, m = phi_q.shape
        e = v.shape[-1]
        pad = (-m) % 16
        pq = F.pad(phi_q, (0, pad)).contiguous()
        pk = F.pad(phi_k, (0, pad)).contiguous()
        vc = v.contiguous()
        mp = m + pad
        o = torch.empty_like(vc)
        den = torch.empty(B, H, N, device=v.device, dtype=torch.float32)
        causal_fwd[(B * H,)](pq, pk, vc, o, den, N, mp, e, eps, BM=_pow2(mp), BE=_pow2(e), BT=CHUNK)
        ctx.save_for_backward(pq, pk, vc, o, den)
        ctx.eps, ctx.m = eps, m
        return o

    @staticmethod
    def backward(ctx, do):  # noqa: ANN001
        pq, pk, v, o, den = ctx.saved_tensors
        dpq, dpk, dv = _backward(pq, pk, v, o, den, do, ctx.eps)
        m = ctx.m
        return dpq[..., :m].to(pq.dtype), dpk[..., :m].to(pk.dtype), dv.to(v.dtype), None


def hedgehog_features(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """[softmax(z), softmax(-z)], z = x W_h^T + b_h per head: x (B, H, N, d), w (H, m/2, d),
    b (H, m/2) -> (B, H, N, m) (the torch form of the fused prologue)."""
    z = torch.einsum("bhnd,hmd->bhnm", x, w) + b[None, :, None, :]
    return torch.cat([z.softmax(-1), (-z).softmax(-1)], -1)


class _CausalHedgehogAttention(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, w, b, keep, eps):  # noqa: ANN001 - autograd signature
        B, H, N, d = q.shape
        mh, e = w.shape[1], v.shape[-1]
        qc, kc, vc = q.contiguous(), k.contiguous(), v.contiguous()
        wc, bc = w.contiguous(), b.contiguous()
        keep = keep.to(torch.float32).contiguous()
        o = torch.empty_like(vc)
        den = torch.empty(B, H, N, device=v.device, dtype=torch.float32)
        causal_fwd_hedgehog[(B * H,)](
            qc,
            kc,
            wc,
            bc,
            keep,
            vc,
            o,
            den,
            N,
            H,
            d,
            mh,
            e,
            eps,
            BD=_pow2(d),
            BH=_pow2(mh),
            BE=_pow2(e),
            BT=CHUNK,
        )
        ctx.save_for_backward(qc, kc, vc, wc, bc, keep, o, den)
        ctx.eps = eps
        return o

    @staticmethod
    def backward(ctx, do):  # noqa: ANN001
        q, k, v, w, b, keep, o, den = ctx.saved_tensors
        inputs = [t.detach().requires_grad_() for t in (q, k, w, b)]
        with torch.enable_grad():
            phi_q = hedgehog_features(inputs[0], inputs[2], inputs[3])
            phi_k = hedgehog_features(inputs[1], inputs[2], inputs[3]) * keep[:, None, :, None]
            m = phi_q.shape[-1]
            pad = (-m) % 16
            pq = F.pad(phi_q.detach(), (0, pad)).contiguous()
            pk = F.pad(phi_k.detach(), (0, pad)).contiguous()
            dpq, dpk, dv = _backward(pq, pk, v, o, den, do, ctx.eps)
            dq, dk, dw, db = torch.autograd.grad(
                (phi_q, phi_k),
                inputs,
                (dpq[..., :m].to(phi_q.dtype), dpk[..., :m].to(phi_k.dtype)),
            )
        return dq, dk, dv.to(v.dtype), dw, db, None, None


def causal_linear_attention_triton(
    phi_q: torch.Tensor, phi_k: torch.Tensor, v: torch.Tensor, eps: float
) -> torch.Tensor:
    """Normalised causal linear attention on features (B, H, N, m), values (B, H, N, e)."""
    return _CausalLinearAttention.apply(phi_q, phi_k, v, eps)


def causal_hedgehog_attention_triton(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    w: torch.Tensor,
    b: torch.Tensor,
    keep: torch.Tensor,
    eps: float,
) -> torch.Tensor:
    """Normalised causal linear attention with the hedgehog map of weights ``w`` (H, m/2, d) and
    ``b`` (H, m/2) fused into the kernel: q, k (B, H, N, d), v (B, H, N, e), ``keep`` (B, N)
    (0 at padded keys) -> (B, H, N, e)."""
    return _CausalHedgehogAttention.apply(q, k, v, w, b, keep, eps)
