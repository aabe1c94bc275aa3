"""The ``triton`` backend: a chunked, normalised causal linear-attention kernel (forward and
backward) and its launcher.

``causal_jit`` holds the kernel sources (on features, and with the hedgehog map fused into
the prologue), ``causal_triton`` the host side (padding of the feature
dimension to a multiple of 16, launch grid, the autograd.Function). Both are imported on first
use: importing this package never imports Triton.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "causal_hedgehog_attention_triton",
    "causal_linear_attention_triton",
    "triton_supported",
]


def triton_supported(on_cuda: bool) -> bool:
    """Whether the kernel can run on these inputs: Triton with a GPU for CUDA tensors, or
    Triton's CPU interpreter (``TRITON_INTERPRET=1``) for CPU tensors."""
    from paperkit import triton_available, triton_interpret

    return triton_available() and (on_cuda or triton_interpret())


def causal_linear_attention_triton(*args: Any) -> Any:
    """:func:`doflinattn.kernels.causal_triton.causal_linear_attention_triton`, imported on
    first use."""
    from doflinattn.kernels.causal_triton import causal_linear_attention_triton as run

    return run(*args)


def causal_hedgehog_attention_triton(*args: Any) -> Any:
    """:func:`doflinattn.kernels.causal_triton.causal_hedgehog_attention_triton`, imported on
    first use."""
    from doflinattn.kernels.causal_triton import causal_hedgehog_attention_triton as run

    return run(*args)
