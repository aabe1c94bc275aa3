r"""ZeroS causal attention through the fused Triton kernel (the ``chunk`` algorithm): the launch
table, the dispatcher's test of what the kernel takes, the grid, and the autograd.Function.

The kernel (:mod:`zeros.kernels.zeros_jit`) runs one program per (batch, head, block of
``BLOCK_E`` value columns) and walks the sequence in blocks of ``BLOCK`` positions, keeping the
three :math:`d\times` ``BLOCK_E`` states in registers. It is one unnormalised causal linear
attention over the 3d-dimensional features :math:`k'_i=[e^{s_i}\hat k_i, s_i\hat k_i, \hat k_i]`,
:math:`q'_t=[\alpha_t\hat q_t,\beta_t\hat q_t,\gamma_t\hat q_t]`, where the :math:`e^{s}` block is
kept stable with a running max :math:`m` (the carried :math:`F, E` are rescaled by
:math:`e^{m_{old}-m_{new}}` when it grows, as in flash attention). Inside a block, row :math:`t`
uses its own running max, so :math:`E_t\ge 1` and no floor is needed. Whatever the input dtype,
the kernel loads, accumulates and carries its states in fp32 and rounds only the output.

Launch configurations. :data:`LAUNCH` gives, per head size d (the same for every dtype of
:data:`TRITON_DTYPES`), the tile sizes and the warps and stages of the launch; each entry was
compiled offline for sm_90 by :mod:`zeros.kernels.offline` (``nox -s "kernels(zeros)"``) and fits
sm_90's shared memory with no register spills. Shapes outside the table (d other than 16, 32 or
64, another dtype, e != d, B·H past grid axis 0) are not sent to the kernel: :func:`supported` is
False and ``backend="auto"`` takes the torch ``chunk`` path.

The backward pass recomputes the forward with the pure-torch ``chunk`` path
(:func:`zeros.chunk.attention`) **in fp32** (the kernel's own precision, whatever the inputs'
dtype) and differentiates it; the gradients are then rounded to each input's dtype. Triton is
imported lazily: this module imports on a machine without it.
"""

from __future__ import annotations

import torch

from paperkit import triton_available, triton_interpret
from zeros import chunk

__all__ = [
    "GRID_AXIS0_MAX",
    "GRID_AXIS12_MAX",
    "LAUNCH",
    "TRITON_DTYPES",
    "attention",
    "grid",
    "launch_config",
    "supported",
]

#: The dtypes the kernel takes (fp32 loads, states and accumulators in every case).
TRITON_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Grid limits of CUDA: axis 0 below 2^31, axes 1 and 2 at most 65535.
GRID_AXIS0_MAX = 2**31 - 1
GRID_AXIS12_MAX = 65535

# (BLOCK, BLOCK_E, num_warps, num_stages) per head size d, for every dtype of TRITON_DTYPES (the
# kernel works in fp32 whatever it loads). Each entry was compiled offline for sm_90 by
# zeros.kernels.offline: within sm_90's shared memory and without register spills. The fp32 dots
# (input_precision="ieee", FMA) hold every operand row in registers, so the tiles stay small:
# d = 64 spilled with 4 warps at BLOCK = BLOCK_E = 16 (320 B); d = 32 spilled at BLOCK = 32 (bf16,
# 4 warps: 232 B; fp32, 8 warps: 24 B) and at BLOCK = 16 with 8 warps in fp32 (40 B, ptxas capped
# it at 128 registers); d = 128 spilled at every size tried (BLOCK = BLOCK_E = 16, 8 warps:
# 220 B, 16 warps: 1,200 B), so d = 128 takes the torch path.
LAUNCH: dict[int, tuple[int, int, int, int]] = {
    16: (32, 16, 4, 1),
    32: (16, 16, 4, 1),
    64: (16, 16, 8, 1),
}


def launch_config(dtype: torch.dtype, d: int) -> dict[str, int] | None:
    """The constexprs and launch options the launcher uses for inputs of ``dtype`` and head size
    ``d``, or None when the kernel does not take them (the dispatcher then picks ``chunk``).

    >>> launch_config(torch.bfloat16, 64)["D"], launch_config(torch.float32, 256)
    (64, None)
    """
    entry = LAUNCH.get(d)
    if dtype not in TRITON_DTYPES or entry is None:
        return None
    block, block_e, warps, stages = entry
    return {"D": d, "BLOCK": block, "BLOCK_E": block_e, "num_warps": warps, "num_stages": stages}


def grid(B: int, H: int, d: int, block_e: int) -> tuple[int, int]:
    """The launch grid: (B·H programs, d / BLOCK_E column blocks), axis 0 below 2^31 and axis 1
    within 65535 (checked by :func:`supported` before a launch)."""
    return (B * H, -(-d // block_e))


def supported(q: torch.Tensor, v: torch.Tensor) -> bool:
    """Whether the kernel runs on these inputs: Triton present, q on a CUDA device (or Triton's
    CPU interpreter on), v as wide as q, a dtype of :data:`TRITON_DTYPES`, d a key of
    :data:`LAUNCH`, and a grid within CUDA's limits."""
    B, _, H, d = q.shape
    config = launch_config(q.dtype, d)
    if config is None or v.shape[-1] != d or v.dtype != q.dtype:
        return False
    rows, cols = grid(B, H, d, config["BLOCK_E"])
    return (
        rows <= GRID_AXIS0_MAX
        and cols <= GRID_AXIS12_MAX
        and (q.is_cuda or triton_interpret())
        and triton_available()
    )


def _forward(q, k, v, s, g1, gh, g0):
    from zeros.kernels import zeros_jit

    B, T, H, D = q.shape
    q, k, v = (x.contiguous() for x in (q, k, v))
    s, g1, gh = (x.contiguous() for x in (s, g1, gh))
    g0c = g0.contiguous() if g0 is not None else s  # times has_g0 = 0: no effect
    out = torch.empty_like(q)
    config = launch_config(q.dtype, D)
    warps, stages = config.pop("num_warps"), config.pop("num_stages")
    zeros_jit.zeros_chunk_fwd[grid(B, H, D, config["BLOCK_E"])](
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
        int(g0 is not None),
        **config,
        num_warps=warps,
        num_stages=stages,
    )
    return out


class _ZeroSTriton(torch.autograd.Function):
    @staticmethod
    def forward(ctx, q, k, v, s, g1, gh, g0, chunk_size):
        ctx.save_for_backward(q, k, v, s, g1, gh, *(() if g0 is None else (g0,)))
        ctx.has_g0 = g0 is not None
        ctx.chunk_size = chunk_size
        return _forward(q, k, v, s, g1, gh, g0)

    @staticmethod
    def backward(ctx, grad):
        saved = ctx.saved_tensors
        # recompute in fp32, as the kernel computes, whatever the inputs' dtype
        inputs = [x.detach().float().requires_grad_(x.requires_grad) for x in saved]
        q, k, v, s, g1, gh = inputs[:6]
        g0 = inputs[6] if ctx.has_g0 else None
        with torch.enable_grad(), torch.autocast(grad.device.type, enabled=False):
            out = chunk.attention(q, k, v, s, g1, gh, g0, True, ctx.chunk_size)
        needs = [x for x in inputs if x.requires_grad]
        grads = iter(torch.autograd.grad(out, needs, grad.float(), allow_unused=True))
        result = [
            (g.to(x.dtype) if (g := next(grads)) is not None else None) if x.requires_grad else None
            for x in saved
        ]
        if not ctx.has_g0:
            result.append(None)
        return (*result, None)


def attention(q, k, v, s, gate1, gateh, gate0, chunk_size):
    """Causal ZeroS attention for unit-length q, k (B, T, H, d) through the fused kernel; the
    caller checks :func:`supported` first. ``chunk_size`` is the block length of the backward's
    torch recompute; the kernel's own tiles come from :data:`LAUNCH`."""
    return _ZeroSTriton.apply(q, k, v, s, gate1, gateh, gate0, chunk_size)
