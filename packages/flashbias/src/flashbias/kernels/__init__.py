"""The fused Triton kernels (forward and backward), loaded lazily: importing this package never
imports Triton."""

from __future__ import annotations

from typing import Any

__all__ = ["flash_bias_triton", "triton_supported"]


def triton_supported() -> bool:
    """Whether Triton can run here (a GPU, or ``TRITON_INTERPRET=1`` on the CPU)."""
    from paperkit import triton_available

    return triton_available()


def flash_bias_triton(*args: Any) -> Any:
    """:func:`flashbias.kernels.attention_triton.flash_bias_triton`, imported on first use."""
    from flashbias.kernels.attention_triton import flash_bias_triton as run

    return run(*args)
