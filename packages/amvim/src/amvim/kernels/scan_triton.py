r"""The selective scan on the fused Triton forward kernel of :mod:`amvim.kernels.scan_jit`: the
host side (launch grid) and the autograd.Function.

The forward launches one program per (batch, block of BLOCK_E channels); the state size is padded
to a power of two NP >= 16 inside the kernel (masked loads, so no copy) and BLOCK_E shrinks as NP
grows so that the BLOCK_E × NP state tile stays in registers (:func:`launch_config`). The
backward recomputes the forward through the ``chunked`` torch path (:mod:`amvim.chunked`) under
autograd and returns its gradients: the same gradients as the reference, at the cost of one
extra forward in torch. Triton is imported on first use only.
"""

from __future__ import annotations

import torch

from amvim.chunked import selective_scan_chunked

__all__ = ["BLOCK_E", "MAX_TILE", "launch_config", "selective_scan_triton"]

#: Channels per program for each padded state size NP: the BLOCK_E × NP state tile (at most
#: MAX_TILE entries) stays in sm_90's registers at 4 warps without spills, as the offline compile
#: of :mod:`amvim.kernels.offline` reports for every dtype (BLOCK_E = 8 at NP = 128 made ptxas
#: spill 8 bytes in bfloat16, 16 does not).
BLOCK_E = {16: 32, 32: 32, 64: 16, 128: 16, 256: 8}
MAX_TILE = 2048


def launch_config(N: int) -> dict[str, int]:
    """The constexprs the launcher picks for state size N <= 256: NP = the next power of two
    >= max(N, 16) and BLOCK_E channels per program (:data:`BLOCK_E`).

    >>> launch_config(8), launch_config(256)
    ({'BLOCK_E': 32, 'NP': 16}, {'BLOCK_E': 8, 'NP': 256})
    """
    NP = max(16, 1 << max(0, N - 1).bit_length())
    return {"BLOCK_E": BLOCK_E[NP], "NP": NP}


def _forward(u, delta, A, B, C, D, z, delta_bias, delta_softplus):
    import triton

    from amvim.kernels import scan_jit

    batch, E, L = u.shape
    N = A.shape[1]
    out = torch.empty_like(u)
    last = torch.empty(batch, E, N, device=u.device, dtype=torch.float32)
    dummy = u  # never read: the HAS_* flags switch the loads off
    zz = z if z is not None else dummy
    config = launch_config(N)
    grid = (batch, triton.cdiv(E, config["BLOCK_E"]))
    scan_jit.selective_scan_fwd[grid](
        u,
        delta,
        A,
        B,
        C,
        D if D is not None else dummy,
        zz,
        delta_bias if delta_bias is not None else dummy,
        out,
        last,
        E,
        L,
        N,
        *u.stride(),
        *delta.stride(),
        *A.stride(),
        *B.stride(),
        *C.stride(),
        *zz.stride(),
        *out.stride(),
        HAS_D=D is not None,
        HAS_Z=z is not None,
        HAS_DB=delta_bias is not None,
        SOFTPLUS=bool(delta_softplus),
        **config,
    )
    return out, last.to(u.dtype)


class _TritonScan(torch.autograd.Function):
    @staticmethod
    def forward(ctx, u, delta, A, B, C, D, z, delta_bias, delta_softplus):
        ctx.save_for_backward(u, delta, A, B, C, D, z, delta_bias)
        ctx.delta_softplus = delta_softplus
        out, last = _forward(u, delta, A, B, C, D, z, delta_bias, delta_softplus)
        ctx.mark_non_differentiable(last)
        return out, last

    @staticmethod
    def backward(ctx, grad_out, grad_last):
        saved = ctx.saved_tensors
        inputs = [
            x.detach().requires_grad_(x is not None and ctx.needs_input_grad[i])
            if x is not None
            else None
            for i, x in enumerate(saved)
        ]
        with torch.enable_grad():
            out, _ = selective_scan_chunked(*inputs, delta_softplus=ctx.delta_softplus)
        wants = [x for x in inputs if x is not None and x.requires_grad]
        grads = iter(torch.autograd.grad(out, wants, grad_out, allow_unused=True))
        result = [next(grads) if x is not None and x.requires_grad else None for x in inputs]
        return (*result, None)


def selective_scan_triton(u, delta, A, B, C, D, z, delta_bias, delta_softplus):
    """Output (B, E, L) and last state (B, E, N) from the fused Triton forward kernel."""
    return _TritonScan.apply(u, delta, A, B, C, D, z, delta_bias, delta_softplus)
