"""Launching the CUDA kernels of ``kernels/gspn_scan.cu`` through CuPy (loaded lazily).

Tensors stay torch tensors; CuPy sees them zero-copy through DLPack (16-bit types as int16 views,
the kernels read their raw bits). ``cuda`` runs the fused kernels: one launch scans every line of
every direction slot of the call, a block per (slot, channel) keeping the previous line in shared
memory. ``cuda_multilaunch`` is the GSPN-1 style baseline: one launch per line, the previous line
read back from global memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from paperkit import load_cuda_module, on_torch_stream, to_cupy

__all__ = ["CUDA_DTYPES", "MAX_LINE", "scan_backward_cuda", "scan_forward_cuda"]

#: torch dtype -> storage type name of the kernels' template instantiations.
CUDA_DTYPES = {torch.float32: "float", torch.float16: "f16_t", torch.bfloat16: "bf16_t"}
#: The longest line the fused kernels stage in shared memory (2 x S floats <= 48 KiB).
MAX_LINE = 6144
_KERNELS = ("gspn_fwd", "gspn_bwd", "gspn_fwd_step", "gspn_bwd_step")
_NAMES = tuple(f"{k}<{t}>" for k in _KERNELS for t in CUDA_DTYPES.values())
_STEP_THREADS = 256


def _kernel(name: str, dtype: torch.dtype) -> Any:
    module = load_cuda_module("gspn2", "kernels/gspn_scan.cu", name_expressions=_NAMES)
    return module.get_function(f"{name}<{CUDA_DTYPES[dtype]}>")


def _arg(t: torch.Tensor) -> Any:
    return to_cupy(t.view(torch.int16) if t.element_size() == 2 else t)


def _rev_mask(reverse: Sequence[bool]) -> int:
    return sum(1 << d for d, rev in enumerate(reverse) if rev)


def _line_threads(line: int) -> int:
    return min(1024, 32 * ((line + 31) // 32))


def scan_forward_cuda(
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
    reverse: Sequence[bool],
    *,
    multilaunch: bool = False,
) -> torch.Tensor:
    """h on the kernel layout (N, D, C, L, S); every input contiguous, of one dtype."""
    n, d, c, length, line = x.shape
    h = torch.empty_like(x)
    ptrs = [_arg(t) for t in (x, w_m, w_0, w_p, lam, h)]
    ints = [np.int32(v) for v in (d, c, w_m.shape[2], length, line, chunk, _rev_mask(reverse))]
    with on_torch_stream():
        if multilaunch:
            kernel = _kernel("gspn_fwd_step", x.dtype)
            blocks = (n * d * c * line + _STEP_THREADS - 1) // _STEP_THREADS
            for t in range(length):
                kernel((blocks,), (_STEP_THREADS,), (*ptrs, np.int32(n * d), *ints, np.int32(t)))
        else:
            kernel = _kernel("gspn_fwd", x.dtype)
            kernel((c, n * d), (_line_threads(line),), (*ptrs, *ints), shared_mem=8 * line)
    return h


def scan_backward_cuda(
    grad_h: torch.Tensor,
    h: torch.Tensor,
    x: torch.Tensor,
    w_m: torch.Tensor,
    w_0: torch.Tensor,
    w_p: torch.Tensor,
    lam: torch.Tensor,
    chunk: int,
    reverse: Sequence[bool],
    *,
    multilaunch: bool = False,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dw_m, dw_0, dw_p, dlam); the weight gradients accumulate in fp32 (atomicAdd)."""
    n, d, c, length, line = x.shape
    dx, dlam = torch.empty_like(x), torch.empty_like(x)
    dws = [torch.zeros(w_m.shape, dtype=torch.float32, device=x.device) for _ in range(3)]
    ptrs = [_arg(t) for t in (x, w_m, w_0, w_p, lam, h, grad_h, dx, dlam)] + [
        to_cupy(w) for w in dws
    ]
    ints = [np.int32(v) for v in (d, c, w_m.shape[2], length, line, chunk, _rev_mask(reverse))]
    with on_torch_stream():
        if multilaunch:
            kernel = _kernel("gspn_bwd_step", x.dtype)
            gbuf = to_cupy(torch.empty(x.shape, dtype=torch.float32, device=x.device))
            blocks = (n * d * c * line + _STEP_THREADS - 1) // _STEP_THREADS
            for t in range(length - 1, -1, -1):
                args = (*ptrs, gbuf, np.int32(n * d), *ints, np.int32(t))
                kernel((blocks,), (_STEP_THREADS,), args)
        else:
            kernel = _kernel("gspn_bwd", x.dtype)
            kernel((c, n * d), (_line_threads(line),), (*ptrs, *ints), shared_mem=8 * line)
    dw_m, dw_0, dw_p = (w.to(w_m.dtype) for w in dws)
    return dx, dw_m, dw_0, dw_p, dlam
