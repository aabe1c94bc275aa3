"""The ``cuda_multilaunch`` backend: the GSPN-1 style baseline, one kernel launch per line.

``gspn_fwd_step`` / ``gspn_bwd_step`` of ``gspn_scan.cu`` advance every (sample x slot, channel,
pixel) by one line per launch, one thread per pixel, the previous line read back from global
memory (the backward pass keeps the adjoint state in an fp32 buffer). The same per-pixel
arithmetic as :mod:`gspn2.kernels.fused`; the baseline for its speed-up.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from gspn2.kernels.common import as_arg, kernel, scan_ints
from paperkit import on_torch_stream, to_cupy

__all__ = ["backward", "forward"]

#: Threads per block of the per-line kernels.
THREADS = 256


def _blocks(x: torch.Tensor) -> int:
    n, d, c, _, line = x.shape
    return (n * d * c * line + THREADS - 1) // THREADS


def forward(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
    reverse: Sequence[bool],
) -> torch.Tensor:
    """h on the line layout (N, D, C, L, S), one launch per line."""
    n, d, _, length, _ = x.shape
    h = torch.empty_like(x)
    ptrs = [as_arg(t) for t in (x, w_m, w_0, w_p, lam, h)]
    ints = scan_ints(x, w_m, chunk, reverse)
    step = kernel("gspn_fwd_step", x.dtype)
    with on_torch_stream():
        for t in range(length):
            step((_blocks(x),), (THREADS,), (*ptrs, np.int32(n * d), *ints, np.int32(t)))
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
    """(dx, dw_m, dw_0, dw_p, dlam), one launch per line in reverse scan order."""
    n, d, _, length, _ = x.shape
    dx, dlam = torch.empty_like(x), torch.empty_like(x)
    dws = [torch.zeros(w_m.shape, dtype=torch.float32, device=x.device) for _ in range(3)]
    ptrs = [as_arg(t) for t in (x, w_m, w_0, w_p, lam, h, grad_h, dx, dlam)]
    ptrs += [to_cupy(w) for w in dws]
    state = to_cupy(torch.empty(x.shape, dtype=torch.float32, device=x.device))
    ints = scan_ints(x, w_m, chunk, reverse)
    step = kernel("gspn_bwd_step", x.dtype)
    with on_torch_stream():
        for t in range(length - 1, -1, -1):
            args = (*ptrs, state, np.int32(n * d), *ints, np.int32(t))
            step((_blocks(x),), (THREADS,), args)
    dw_m, dw_0, dw_p = (w.to(w_m.dtype) for w in dws)
    return dx, dw_m, dw_0, dw_p, dlam
