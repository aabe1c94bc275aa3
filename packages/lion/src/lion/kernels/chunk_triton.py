r"""The LION chunkwise form as one Triton kernel: two causal passes minus the diagonal.

The bidirectional mask splits as :math:`M=M^F+M^B-I`. Each half is a causal, scalar-decay
(RetNet/GLA-style) linear attention:

- forward pass over positions :math:`0..N-1` with gates :math:`g_t=\log\lambda_{t-1}`
  (:math:`g_0=0`), so :math:`\exp(G_i-G_j)=\lambda_j\cdots\lambda_{i-1}` with
  :math:`G=\mathrm{cumsum}(g)`;
- backward pass over :math:`N-1..0` (the flipped sequence) with the shifted, flipped gates
  :math:`g_t=\log\lambda_{t+1}`, so the weight is :math:`\lambda_{i+1}\cdots\lambda_j`.

The program axis 1 picks the direction; one program per (batch, head, direction) walks the sequence
in blocks of ``BLOCK`` positions with a :math:`d\times d` state :math:`S` and a :math:`d` state
:math:`z` (the denominator) in registers: inside a block the dense causal block
:math:`(qk^\top)\odot\exp(G_i-G_j)`, across blocks the decayed state. Every exponent is
:math:`\le 0`. The two partial numerators and denominators are summed in torch, minus the
diagonal :math:`(q_i\cdot k_i)v_i`, then normalised.

The backward pass of autograd recomputes with the pure-torch chunk form (:mod:`lion.chunk`) and
differentiates it. Triton is imported lazily: this module imports on a machine without it. This
is the ``triton`` backend of :func:`lion.lion_attention`; the launcher
:func:`lion_chunk_triton_parts` takes checked inputs.
"""

from __future__ import annotations

import functools

import torch

from paperkit import describe, param_error

__all__ = ["lion_chunk_triton_parts", "tile_size", "triton_runs"]


def tile_size(n: int) -> bool:
    """Whether ``n`` (the head size d or the chunk size) is a power of two >= 16, the sizes
    ``tl.dot`` tiles."""
    return n >= 16 and (n & (n - 1)) == 0


def triton_runs(device: torch.device) -> bool:
    """Whether Triton can run on tensors of ``device``: Triton installed, and a CUDA device or
    the interpreter on (``TRITON_INTERPRET=1``)."""
    from paperkit import triton_available, triton_interpret

    return triton_available() and (device.type == "cuda" or triton_interpret())


@functools.cache
def _kernel():
    import triton
    import triton.language as tl

    @triton.jit
    def lion_causal_chunk_fwd(
        Q,
        K,
        V,
        L,
        NUM,
        DEN,
        N,
        BH,
        D: tl.constexpr,
        BLOCK: tl.constexpr,
    ):
        bh = tl.program_id(0)
        reverse = tl.program_id(1)
        rows = tl.arange(0, BLOCK)
        cols = tl.arange(0, D)
        causal = rows[:, None] >= rows[None, :]
        S = tl.zeros((D, D), dtype=tl.float32)
        z = tl.zeros((D,), dtype=tl.float32)
        step = 1 - 2 * reverse  # +1 forward, -1 backward
        for start in range(0, N, BLOCK):
            t = start + rows
            valid = t < N
            pos = tl.where(reverse == 1, N - 1 - t, t)  # position in the original sequence
            off = bh * N * D + pos[:, None] * D + cols[None, :]
            q = tl.load(Q + off, mask=valid[:, None], other=0.0).to(tl.float32)
            k = tl.load(K + off, mask=valid[:, None], other=0.0).to(tl.float32)
            v = tl.load(V + off, mask=valid[:, None], other=0.0).to(tl.float32)
            gpos = pos - step  # lambda_{i-1} forward, lambda_{i+1} backward
            gvalid = valid & (gpos >= 0) & (gpos < N)
            g = tl.load(L + bh * N + gpos, mask=gvalid, other=0.0).to(tl.float32)
            G = tl.cumsum(g, 0)
            decay = tl.exp(tl.where(causal, G[:, None] - G[None, :], float("-inf")))
            a = tl.dot(q, tl.trans(k), input_precision="ieee") * decay
            into = tl.exp(G)  # decay from the end of the previous block to each query
            num = tl.dot(a, v, input_precision="ieee")
            num += into[:, None] * tl.dot(q, S, input_precision="ieee")
            den = tl.sum(a, axis=1) + into * tl.sum(q * z[None, :], axis=1)
            out = reverse * BH * N * D + off
            tl.store(NUM + out, num, mask=valid[:, None])
            tl.store(DEN + reverse * BH * N + bh * N + pos, den, mask=valid)
            total = tl.sum(g, axis=0)
            w = tl.where(valid, tl.exp(total - G), 0.0)  # decay from each key to the block end
            kw = k * w[:, None]
            S = tl.exp(total) * S + tl.dot(tl.trans(kw), v, input_precision="ieee")
            z = tl.exp(total) * z + tl.sum(kw, axis=0)

    return lion_causal_chunk_fwd


def _forward(q, k, v, log_lambda, chunk_size):
    B, H, N, d = q.shape
    q, k, v = (x.contiguous() for x in (q, k, v))
    ll = q.new_zeros(B, H, N) if log_lambda is None else log_lambda.contiguous()
    num = torch.empty(2, B, H, N, d, device=q.device, dtype=torch.float32)
    den = torch.empty(2, B, H, N, device=q.device, dtype=torch.float32)
    _kernel()[(B * H, 2)](q, k, v, ll, num, den, N, B * H, D=d, BLOCK=chunk_size)
    qf, kf, vf = (x.float() for x in (q, k, v))
    diag = (qf * kf).sum(-1)
    parts = torch.cat([num.sum(0) - diag[..., None] * vf, (den.sum(0) - diag)[..., None]], dim=-1)
    return parts.to(q.dtype)


class _LionChunkTriton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, log_lambda, chunk_size):
        ctx.save_for_backward(q, k, v, *(() if log_lambda is None else (log_lambda,)))
        ctx.has_lambda = log_lambda is not None
        ctx.chunk_size = chunk_size
        return _forward(q, k, v, log_lambda, chunk_size)

    @staticmethod
    def backward(ctx, grad):
        from lion.chunk import chunk_parts

        inputs = [x.detach().requires_grad_(x.requires_grad) for x in ctx.saved_tensors]
        q, k, v = inputs[:3]
        ll = inputs[3] if ctx.has_lambda else None
        with torch.enable_grad():
            out = chunk_parts(q, k, v, ll, ctx.chunk_size)
        needs = [x for x in inputs if x.requires_grad]
        grads = iter(torch.autograd.grad(out, needs, grad, allow_unused=True))
        result = [next(grads) if x.requires_grad else None for x in inputs]
        if not ctx.has_lambda:
            result.append(None)
        return (*result, None)


def lion_chunk_triton_parts(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    log_lambda: torch.Tensor | None,
    chunk_size: int,
) -> torch.Tensor:
    """Unnormalised ``[num, den]`` ``(B, H, N, d + 1)`` from the Triton kernel, for checked
    ``q, k, v (B, H, N, d)`` and decays ``(B, H, N)`` (None: all ones); d and ``chunk_size``
    powers of two >= 16. Computes in float32 and returns ``q``'s dtype."""
    owner = "lion_chunk_triton_parts"
    if not tile_size(q.shape[-1]):
        expected = "of a head size d that is a power of two >= 16 (Triton's tiles)"
        raise param_error("q", owner, expected, describe(q))
    if not tile_size(chunk_size):
        raise param_error("chunk_size", owner, "a power of two >= 16 (Triton's tiles)", chunk_size)
    return _LionChunkTriton.apply(q, k, v, log_lambda, chunk_size)
