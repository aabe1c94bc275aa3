"""Host side of the Triton causal linear-attention kernels: the feature dimension padded with
zeros to a multiple of 16 (so every layer's m_l runs through one kernel family), contiguous
(B, H, N, .) buffers in one dtype, a grid of (batch x head, value block) programs, and the
autograd.Functions. The launch configuration comes from :func:`doflinattn.kernels.feature_plan`
and :func:`doflinattn.kernels.hedgehog_plan` (the configurations the kernel gate compiles).

Two entry points: :func:`causal_linear_attention_triton` on features phi(q), phi(k), and
:func:`causal_hedgehog_attention_triton`, which takes q, k and the per-head hedgehog weights and
computes the features inside the kernel (the fused prologue); its backward recomputes the
features in fp32, as the kernel does, and reuses the feature-level backward kernel.

Inputs of several dtypes (a bf16 feature map under autocast, fp32 values) are cast to their
promoted dtype first; the kernels load that dtype and compute in fp32, forward and backward."""

from __future__ import annotations

import torch
from torch.nn import functional as F

from doflinattn.kernels import feature_plan, hedgehog_plan, kernel_dtype
from doflinattn.kernels.causal_jit import causal_bwd, causal_fwd, causal_fwd_hedgehog


def _launch(plan: dict) -> tuple[tuple[int, int], dict]:
    return plan["grid"], {k: v for k, v in plan.items() if k != "grid"}


def _feature_plan(dtype: torch.dtype, m: int, e: int, bh: int, backward: bool = False) -> dict:
    plan = feature_plan(dtype, m, e, bh, backward)
    if plan is None:
        raise ValueError(f"the Triton kernel does not take {dtype} features of width {m}")
    return plan


def _backward(pq, pk, v, o, den, do, eps):  # noqa: ANN001, ANN202
    """d phi_q, d phi_k (padded width, fp32) and dv (fp32) of the normalised causal form."""
    B, H, N, mp = pq.shape
    e = v.shape[-1]
    grid, launch = _launch(_feature_plan(pq.dtype, mp, e, B * H, backward=True))
    # c = (dO . o) / s over the whole value row (the kernel's programs each see BE columns)
    c = (do.float() * o.float()).sum(-1) / (den + eps)
    shares = torch.empty((2, grid[1], B, H, N, mp), device=pq.device, dtype=torch.float32)
    dv = torch.empty(v.shape, device=v.device, dtype=torch.float32)
    causal_bwd[grid](
        pq,
        pk,
        v,
        den,
        c.contiguous(),
        do.to(v.dtype).contiguous(),
        shares[0],
        shares[1],
        dv,
        N,
        mp,
        e,
        eps,
        -(-N // launch["BT"]),
        **launch,
    )
    dpq, dpk = shares.sum(1)
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
        grid, launch = _launch(_feature_plan(pq.dtype, mp, e, B * H))
        o = torch.empty_like(vc)
        den = torch.empty(B, H, N, device=v.device, dtype=torch.float32)
        causal_fwd[grid](pq, pk, vc, o, den, N, mp, e, eps, **launch)
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
        plan = hedgehog_plan(q.dtype, d, mh, e, B * H)
        if plan is None:
            raise ValueError(f"the fused hedgehog kernel does not take d={d}, m/2={mh}")
        grid, launch = _launch(plan)
        qc, kc, vc = q.contiguous(), k.contiguous(), v.contiguous()
        wc, bc = w.float().contiguous(), b.float().contiguous()
        keep = keep.to(torch.float32).contiguous()
        o = torch.empty_like(vc)
        den = torch.empty(B, H, N, device=v.device, dtype=torch.float32)
        causal_fwd_hedgehog[grid](qc, kc, wc, bc, keep, vc, o, den, N, H, d, mh, e, eps, **launch)
        ctx.save_for_backward(qc, kc, vc, w, b, keep, o, den)
        ctx.eps = eps
        return o

    @staticmethod
    def backward(ctx, do):  # noqa: ANN001
        q, k, v, w, b, keep, o, den = ctx.saved_tensors
        inputs = [t.detach().requires_grad_() for t in (q, k, w, b)]
        # the features in fp32, as the forward kernel computes them (whatever autocast says)
        with torch.enable_grad(), torch.autocast(q.device.type, enabled=False):
            q32, k32, w32, b32 = (t.float() for t in inputs)
            phi_q = hedgehog_features(q32, w32, b32)
            phi_k = hedgehog_features(k32, w32, b32) * keep[:, None, :, None]
            m = phi_q.shape[-1]
            pad = (-m) % 16
            pq = F.pad(phi_q.detach(), (0, pad)).contiguous()
            pk = F.pad(phi_k.detach(), (0, pad)).contiguous()
            dpq, dpk, dv = _backward(pq, pk, v.float(), o, den, do, ctx.eps)
            dq, dk, dw, db = torch.autograd.grad(
                (phi_q, phi_k), inputs, (dpq[..., :m], dpk[..., :m])
            )
        return dq, dk, dv.to(v.dtype), dw, db, None, None


def causal_linear_attention_triton(
    phi_q: torch.Tensor, phi_k: torch.Tensor, v: torch.Tensor, eps: float
) -> torch.Tensor:
    """Normalised causal linear attention on features (B, H, N, m), values (B, H, N, e); the
    three are cast to their promoted dtype (gradients flow back through the cast)."""
    dtype = kernel_dtype(phi_q.dtype, phi_k.dtype, v.dtype)
    return _CausalLinearAttention.apply(phi_q.to(dtype), phi_k.to(dtype), v.to(dtype), eps)


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
    (0 at padded keys) -> (B, H, N, e). q, k, v are cast to their promoted dtype; W and b are
    read in fp32."""
    dtype = kernel_dtype(q.dtype, k.dtype, v.dtype)
    return _CausalHedgehogAttention.apply(q.to(dtype), k.to(dtype), v.to(dtype), w, b, keep, eps)
