"""The ``cuda`` backend: GSPN-2's fused kernels, one launch per call and pass.

``gspn_fwd`` / ``gspn_bwd`` of ``gspn_scan.cu`` scan every line of every direction slot in one
launch: a block per (channel, sample x slot), its threads covering a line, the previous line kept
in shared memory (2 x S floats). The weight gradients accumulate in fp32 with ``atomicAdd``.
``forward`` and ``backward`` follow the line layout of :mod:`gspn2.layout` (contiguous inputs of
one dtype, float32, float16 or bfloat16).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from gspn2.kernels.common import as_arg, kernel, scan_ints
from paperkit import on_torch_stream, to_cupy

__all__ = ["backward", "forward"]


def _threads(line: int) -> int:
    """Threads per block: the line rounded up to whole warps, at most 1024."""
    return min(1024, 32 * ((line + 31) // 32))


def forward(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
    reverse: Sequence[bool],
) -> torch.Tensor:
    """h on the line layout (N, D, C, L, S)."""
    n, d, c, _, line = x.shape
    h = torch.empty_like(x)
    args = (*(as_arg(t) for t in (x, w_m, w_0, w_p, lam, h)), *scan_ints(x, w_m, chunk, reverse))
    with on_torch_stream():
        kernel("gspn_fwd", x.dtype)((c, n * d), (_threads(line),), args, shared_mem=8 * line)
    return h


def backward(
    grad_h: torch.Tensor,
    h: torch.Tensor,
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
    reverse: Sequence[bool],
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dw_m, dw_0, dw_p, dlam); the weight gradients are summed in fp32."""
    n, d, c, _, line = x.shape
    dx, dlam = torch.empty_like(x), torch.empty_like(x)
    dws = [torch.zeros(w_m.shape, dtype=torch.float32, device=x.device) for _ in range(3)]
    tensors = (x, w_m, w_0, w_p, lam, h, grad_h, dx, dlam)
    args = (
        *(as_arg(t) for t in tensors),
        *(to_cupy(w) for w in dws),
        *scan_ints(x, w_m, chunk, reverse),
    )
    with on_torch_stream():
        kernel("gspn_bwd", x.dtype)((c, n * d), (_threads(line),), args, shared_mem=8 * line)
    dw_m, dw_0, dw_p = (w.to(w_m.dtype) for w in dws)
    return dx, dw_m, dw_0, dw_p, dlam
