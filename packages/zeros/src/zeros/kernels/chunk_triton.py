r"""ZeroS causal attention as one fused Triton kernel (the ``chunk`` algorithm), and its launcher.

One program per (batch, head) walks the sequence in blocks of ``BLOCK`` positions, keeping the
three :math:`d\times d` states in registers. It is one unnormalised causal linear attention over
the 3d-dimensional features :math:`k'_i=[e^{s_i}\hat k_i, s_i\hat k_i, \hat k_i]`,
:math:`q'_t=[\alpha_t\hat q_t,\beta_t\hat q_t,\gamma_t\hat q_t]`, where the :math:`e^{s}` block is
kept stable with a running max :math:`m` (the carried :math:`F, E` are rescaled by
:math:`e^{m_{old}-m_{new}}` when it grows, as in flash attention).

Inside a block, row :math:`t` uses its own running max, so :math:`E_t\ge 1` and no floor is needed.
The backward pass recomputes the forward with the pure-torch ``chunk`` path
(:func:`zeros.chunk.attention`) and differentiates it. Triton is imported lazily: this module
imports on a machine without it.
"""

from __future__ import annotations

import functools

import torch

from paperkit import triton_available, triton_interpret
from zeros import chunk

__all__ = ["attention", "supported"]


def supported(q: torch.Tensor, v: torch.Tensor) -> bool:
    """Whether the kernel runs on these inputs: Triton present, q on a CUDA device (or Triton's
    CPU interpreter on), v as wide as q, and d a power of two >= 16 (tl.dot's smallest tile)."""
    d = q.shape[-1]
    return (
        (q.is_cuda or triton_interpret())
        and v.shape[-1] == d
        and d >= 16
        and (d & (d - 1)) == 0
        and triton_available()
    )


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def zeros_chunk_fwd(
        Q,
        K,
        V,
        S,
        G1,
        GH,
        G0,
        O,
        T,
        H,
        stride_b,
        stride_t,
        stride_h,  # q, k, v, o share strides: (B, T, H, D) contiguous
        sstride_b,
        sstride_t,  # s and gates: (B, T, H) contiguous
        HAS_G0: tl.constexpr,
        D: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        pid = tl.program_id(0)
        b = pid // H
        h = pid % H
        rows = tl.arange(0, BLOCK)
        cols = tl.arange(0, D)
        causal = rows[:, None] >= rows[None, :]
        F = tl.zeros((D, D), dtype=tl.float32)
        G = tl.zeros((D, D), dtype=tl.float32)
        Hs = tl.zeros((D, D), dtype=tl.float32)
        E = 0.0
        P = 0.0
        m_run = -float("inf")
        for start in range(0, T, BLOCK):
            pos = start + rows
            valid = pos < T
            off = b * stride_b + pos[:, None] * stride_t + h * stride_h + cols[None, :]
            q = tl.load(Q + off, mask=valid[:, None], other=0.0).to(tl.float32)
            k = tl.load(K + off, mask=valid[:, None], other=0.0).to(tl.float32)
            v = tl.load(V + off, mask=valid[:, None], other=0.0).to(tl.float32)
            soff = b * sstride_b + pos * sstride_t + h
            s = tl.load(S + soff, mask=valid, other=0.0).to(tl.float32)
            g1 = tl.load(G1 + soff, mask=valid, other=0.0).to(tl.float32)
            gh = tl.load(GH + soff, mask=valid, other=0.0).to(tl.float32)
            s_max = tl.where(valid, s, -float("inf"))
            # running max of every logit up to each row
            m_row = tl.maximum(
                m_run, tl.max(tl.where(causal, s_max[None, :], -float("inf")), axis=1)
            )
            carry = tl.exp(m_run - m_row)
            we = tl.where(causal, tl.exp(s[None, :] - m_row[:, None]), 0.0)
            cos = tl.where(causal, tl.dot(q, tl.trans(k), input_precision="ieee"), 0.0)
            num_e = tl.dot(we * cos, v, input_precision="ieee")
            num_e += carry[:, None] * tl.dot(q, F, input_precision="ieee")
            e_row = carry * E + tl.sum(we, axis=1)
            num_g = tl.dot(s[None, :] * cos, v, input_precision="ieee")
            num_g += tl.dot(q, G, input_precision="ieee")
            num_h = tl.dot(cos, v, input_precision="ieee") + tl.dot(q, Hs, input_precision="ieee")
            p_row = P + tl.sum(tl.where(causal, s[None, :], 0.0), axis=1)
            t = (pos + 1).to(tl.float32)
            alpha = gh / e_row
            beta = (g1 - gh) / t
            gamma = -(beta * p_row + gh) / t
            if HAS_G0:
                g0 = tl.load(G0 + soff, mask=valid, other=0.0).to(tl.float32)
                gamma += g0 / t
            o = alpha[:, None] * num_e + beta[:, None] * num_g + gamma[:, None] * num_h
            tl.store(O + off, o.to(O.dtype.element_ty), mask=valid[:, None])
            # carry the states past this block
            m_new = tl.maximum(m_run, tl.max(s_max, axis=0))
            scale = tl.exp(m_run - m_new)
            w = tl.where(valid, tl.exp(s - m_new), 0.0)
            F = scale * F + tl.dot(tl.trans(k * w[:, None]), v, input_precision="ieee")
            E = scale * E + tl.sum(w, axis=0)
            G += tl.dot(tl.trans(k * s[:, None]), v, input_precision="ieee")
            Hs += tl.dot(tl.trans(k), v, input_precision="ieee")
            P += tl.sum(s, axis=0)
            m_run = m_new

    return zeros_chunk_fwd


def _forward(q, k, v, s, g1, gh, g0, chunk_size):
    B, T, H, D = q.shape
    q, k, v = (x.contiguous() for x in (q, k, v))
    s, g1, gh = (x.contiguous() for x in (s, g1, gh))
    g0c = g0.contiguous() if g0 is not None else s  # unused when HAS_G0 is False
    out = torch.empty_like(q)
    block = max(16, min(chunk_size, 64))
    block = 1 << (block.bit_length() - 1)  # a power of two for tl.arange
    _kernel()[(B * H,)](
        q,
        k,
        v,
        s,
        g1,
        gh,
        g0c,
        out,
        T,
        H,
        q.stride(0),
        q.stride(1),
        q.stride(2),
        s.stride(0),
        s.stride(1),
        HAS_G0=g0 is not None,
        D=D,
        BLOCK=block,
    )
    return out


class _ZeroSTriton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, s, g1, gh, g0, chunk_size):
        ctx.save_for_backward(q, k, v, s, g1, gh, *(() if g0 is None else (g0,)))
        ctx.has_g0 = g0 is not None
        ctx.chunk_size = chunk_size
        return _forward(q, k, v, s, g1, gh, g0, chunk_size)

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors
        inputs = [x.detach().requires_grad_(x.requires_grad) for x in saved]
        q, k, v, s, g1, gh = inputs[:6]
        g0 = inputs[6] if ctx.has_g0 else None
        with torch.enable_grad():
            out = chunk.attention(q, k, v, s, g1, gh, g0, True, ctx.chunk_size)
        needs = [x for x in inputs if x.requires_grad]
        grads = iter(torch.autograd.grad(out, needs, grad, allow_unused=True))
        result = [next(grads) if x.requires_grad else None for x in inputs]
        if not ctx.has_g0:
            result.append(None)
        return (*result, None)


def attention(q, k, v, s, gate1, gateh, gate0, chunk_size):
    """Causal ZeroS attention for unit-length q, k (B, T, H, d) through the fused kernel; the
    caller checks :func:`supported` first."""
    return _ZeroSTriton.apply(q, k, v, s, gate1, gateh, gate0, chunk_size)
