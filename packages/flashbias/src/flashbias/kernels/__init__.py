"""The ``triton`` backend: fused Triton kernels (forward and backward) and their launcher.

``triton_jit`` holds the kernel sources, ``attention_triton`` the host side (padding, launch
grids, the autograd.Function). Both are imported on first use: importing this package never
imports Triton.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_TRITON_WIDTH", "TRITON_DTYPES", "flash_bias_triton", "triton_supported"]

#: The widest padded head size d + R the kernels take (registers per program).
MAX_TRITON_WIDTH = 256
#: The dtypes the kernels take (fp32 accumulators in every case).
TRITON_DTYPES = ("float16", "bfloat16", "float32")


def triton_supported(on_cuda: bool) -> bool:
    """Whether the kernels can run on these inputs: Triton with a GPU for CUDA tensors, or
    Triton's CPU interpreter (``TRITON_INTERPRET=1``) for CPU tensors."""
    from paperkit import triton_available, triton_interpret

    return triton_available() and (on_cuda or triton_interpret())


def flash_bias_triton(*args: Any) -> Any:
    """:func:`flashbias.kernels.attention_triton.flash_bias_triton`, imported on first use."""
    from flashbias.kernels.attention_triton import flash_bias_triton as run

    return run(*args)
