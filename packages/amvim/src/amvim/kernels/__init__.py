"""The ``triton`` backend: a fused selective-scan forward kernel and its launcher.

``scan_jit`` holds the kernel source, ``scan_triton`` the host side (launch grid, the
autograd.Function whose backward recomputes through the ``chunked`` torch path), ``offline`` the
compile gate (Triton's offline compile for sm_90 of every launch configuration). Both are imported
on first use: importing this package never imports Triton.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_TRITON_STATE", "TRITON_DTYPES", "selective_scan_triton", "triton_supported"]

#: The largest state size N the kernel keeps in registers (padded to a power of two).
MAX_TRITON_STATE = 256
#: The dtypes the kernel takes (fp32 state and accumulators in every case).
TRITON_DTYPES = ("float16", "bfloat16", "float32")


def triton_supported(on_cuda: bool) -> bool:
    """Whether the kernel can run on these inputs: Triton with a GPU for CUDA tensors, or
    Triton's CPU interpreter (``TRITON_INTERPRET=1``) for CPU tensors."""
    from paperkit import triton_available, triton_interpret

    return triton_available() and (on_cuda or triton_interpret())


def selective_scan_triton(*args: Any) -> Any:
    """:func:`amvim.kernels.scan_triton.selective_scan_triton`, imported on first use."""
    from amvim.kernels.scan_triton import selective_scan_triton as run

    return run(*args)
