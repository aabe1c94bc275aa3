"""The ``triton`` backend: fused Triton kernels (forward and backward) and their launcher.

``triton_jit`` holds the kernel sources, ``attention_triton`` the host side (padding, launch
grids, the autograd.Function), ``launch`` the launch configurations (tile sizes, warps, stages
per dtype, head size and rank) and ``offline`` the static kernel gate that compiles each of them
for sm_90. Triton is imported on first use: importing this package never imports it.
"""

from __future__ import annotations

from typing import Any

from flashbias.kernels.launch import MAX_HEAD, MAX_RANK, TRITON_DTYPES, triton_shape_error

__all__ = [
    "MAX_HEAD",
    "MAX_RANK",
    "TRITON_DTYPES",
    "flash_bias_triton",
    "triton_shape_error",
    "triton_supported",
]


def triton_supported(on_cuda: bool) -> bool:
    """Whether the kernels can run on these inputs: Triton with a GPU for CUDA tensors, or
    Triton's CPU interpreter (``TRITON_INTERPRET=1``) for CPU tensors."""
    from paperkit import triton_available, triton_interpret

    return triton_available() and (on_cuda or triton_interpret())


def flash_bias_triton(*args: Any) -> Any:
    """:func:`flashbias.kernels.attention_triton.flash_bias_triton`, imported on first use."""
    from flashbias.kernels.attention_triton import flash_bias_triton as run

    return run(*args)
