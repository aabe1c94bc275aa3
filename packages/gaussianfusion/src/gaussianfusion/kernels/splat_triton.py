r"""Splatting through the tile-based Triton kernel (:mod:`gaussianfusion.kernels.splat_jit`):
the launch table, the dispatcher's test of what the kernel takes, and the autograd.Function.

The kernel computes the dense map (``cutoff=None``) or the culled one (``cutoff=r``) of
:func:`gaussianfusion.gaussians.splat` with fp32 loads and accumulators whatever the input dtype,
and rounds only the output. Its memory is the output alone (no (N, H·W) weights), so ``chunk``
does not apply. The backward pass recomputes the torch path (chunked dense, or culled) in fp32
and differentiates it. Triton is imported lazily: this module imports without it.

:data:`LAUNCH` gives (BLOCK_P, BLOCK_N, num_warps, num_stages) and the value-column blocks
:data:`BLOCK_F` the launcher picks from; every combination is compiled offline for sm_90 by
:mod:`gaussianfusion.kernels.offline` (``nox -s "kernels(gaussianfusion)"``), within sm_90's
shared memory and without register spills. A batch above the grid's axis-1 limit is not sent to
the kernel.
"""

from __future__ import annotations

import torch

from paperkit import triton_available

__all__ = ["BLOCK_F", "GRID_AXIS12_MAX", "LAUNCH", "block_f", "splat", "supported"]

#: (BLOCK_P cells per tile, BLOCK_N Gaussians per step, num_warps, num_stages).
LAUNCH = (64, 32, 4, 1)
#: Value-column blocks: the smallest that holds F, else the largest with a grid axis over F.
BLOCK_F = (16, 32, 64)
#: CUDA's limit on grid axes 1 and 2.
GRID_AXIS12_MAX = 65535


def block_f(f: int) -> int:
    """The value-column block for F columns (F > 64 runs ceil(F / 64) programs per tile).

    >>> block_f(3), block_f(20), block_f(200)
    (16, 32, 64)
    """
    return next((b for b in BLOCK_F if f <= b), BLOCK_F[-1])


def supported(values: torch.Tensor) -> bool:
    """Whether the kernel takes these (B, N, F) values here: Triton on CUDA (or its interpreter),
    and B and the column blocks within the grid's limits."""
    b, _, f = values.shape
    blocks = -(-f // block_f(f))
    return triton_available() and b <= GRID_AXIS12_MAX and blocks <= GRID_AXIS12_MAX


def _params(mean, log_scale, rotation, opacity):
    """The per-Gaussian parameters the kernel reads, fp32 contiguous, (B, N, 8)."""
    c, s = torch.cos(rotation), torch.sin(rotation)
    inv = torch.exp(-log_scale)
    par = torch.stack(
        [mean[..., 0], mean[..., 1], c, s, inv[..., 0], inv[..., 1], opacity, torch.zeros_like(c)],
        -1,
    )
    return par.float().contiguous()


def _launch(par, box, values, bev_hw, extent, cutoff) -> torch.Tensor:
    from gaussianfusion.kernels.splat_jit import splat_fwd

    b, n, f = values.shape
    h, w = bev_hw
    (x0, x1), (y0, y1) = extent
    out = torch.empty(b, f, h * w, dtype=torch.float32, device=values.device)
    block_p, block_n, warps, stages = LAUNCH
    bf = block_f(f)
    grid = (-(-(h * w) // block_p), b, -(-f // bf))
    splat_fwd[grid](
        par,
        box,
        values.float().contiguous(),
        out,
        n,
        f,
        w,
        h * w,
        float(x0),
        (x1 - x0) / h,
        float(y0),
        (y1 - y0) / w,
        0.0 if cutoff is None else float(cutoff) ** 2,
        CULL=cutoff is not None,
        BLOCK_P=block_p,
        BLOCK_N=block_n,
        BLOCK_F=bf,
        num_warps=warps,
        num_stages=stages,
    )
    return out


class _Splat(torch.autograd.Function):
    @staticmethod
    def forward(
        ctx,
        mean,
        log_scale,
        rotation,
        opacity_logit,
        values,
        bev_hw,
        extent,
        cutoff,
        box,
        torch_path,
    ):
        ctx.save_for_backward(mean, log_scale, rotation, opacity_logit, values)
        ctx.args = (bev_hw, extent, cutoff, torch_path)
        par = _params(mean, log_scale, rotation, torch.sigmoid(opacity_logit))
        # the kernel reads the boxes only when culling
        box = par.new_zeros(1, 2) if box is None else box.detach().float().contiguous()
        return _launch(par, box, values, bev_hw, extent, cutoff).to(values.dtype)

    @staticmethod
    def backward(ctx, grad):
        bev_hw, extent, cutoff, torch_path = ctx.args
        inputs = [x.detach().float().requires_grad_() for x in ctx.saved_tensors]
        with torch.enable_grad():
            out = torch_path(*inputs, bev_hw, extent, cutoff)
            grads = torch.autograd.grad(out, inputs, grad.float(), allow_unused=True)
        grads = [
            None if g is None else g.to(x.dtype)
            for g, x in zip(grads, ctx.saved_tensors, strict=True)
        ]
        return (*grads, None, None, None, None, None)


def splat(
    mean, log_scale, rotation, opacity_logit, values, bev_hw, extent, cutoff, box, torch_path
):
    """(B, F, H·W) map of the kernel. ``box`` (B, N, 2): each ellipse's half-widths along x and
    y at the cut-off, in metres (None without one); ``torch_path`` (the arguments before
    ``box``) is what the backward recomputes and differentiates."""
    return _Splat.apply(
        mean, log_scale, rotation, opacity_logit, values, bev_hw, extent, cutoff, box, torch_path
    )
