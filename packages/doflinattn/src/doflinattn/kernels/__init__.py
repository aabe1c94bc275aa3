"""The ``triton`` backend: a chunked, normalised causal linear-attention kernel (forward and
backward) and its launcher.

``causal_jit`` holds the kernel sources (on features, and with the hedgehog map fused into
the prologue), ``causal_triton`` the host side (padding of the feature
dimension to a multiple of 16, launch grid, the autograd.Function). Both are imported on first
use: importing this package never imports Triton.

This module also holds the dispatch policy, without Triton: :func:`feature_plan` and
:func:`hedgehog_plan` give the launch configuration (tile sizes, warps, stages, grid) for a
shape, or ``None`` when the shape is not one the kernels are built for; the caller then takes
the reference path. Every configuration they can return is listed by
:func:`doflinattn.kernels.offline.configurations` and compiled by the static kernel gate.
"""

from __future__ import annotations

from typing import Any

import torch

__all__ = [
    "BLOCK_E",
    "CHUNK",
    "MAX_FEATURE_BLOCK",
    "MAX_HEAD_BLOCK",
    "MAX_HEDGEHOG_BLOCK",
    "MAX_HEDGEHOG_TILE",
    "TRITON_DTYPES",
    "causal_hedgehog_attention_triton",
    "causal_linear_attention_triton",
    "feature_plan",
    "feature_warps",
    "hedgehog_plan",
    "hedgehog_warps",
    "kernel_dtype",
    "max_offsets",
    "triton_supported",
]

#: Input dtypes the kernels are compiled for (others take the reference path).
TRITON_DTYPES = (torch.float32, torch.float16, torch.bfloat16)
#: Rows per chunk.
CHUNK = 16
#: Value columns per program: the value dimension is split across the grid's second axis, so
#: the fp32 state tile a program holds is (feature block x BLOCK_E), whatever e is.
BLOCK_E = 16
#: Largest feature block (padded m) of the feature kernels: the fp32 dots (``ieee``) hold their
#: operands in registers, and at 128 the forward already takes 255 registers a thread at 8
#: warps (the backward 128 at 16); wider feature maps take the reference path.
MAX_FEATURE_BLOCK = 128
#: Largest head-dimension block (d) and half-feature block (m / 2) of the fused hedgehog kernel,
#: and the largest W tile (d block x m/2 block): the gate measured spills beyond (64 x 64 and
#: 128 x 16 spill at 8 warps, and 16 warps cap registers at 128 and spill more), so larger
#: shapes run the feature kernels on features computed in torch.
MAX_HEAD_BLOCK = 64
MAX_HEDGEHOG_BLOCK = 64
MAX_HEDGEHOG_TILE = 2048
#: Grid limits of CUDA: axis 0 below 2^31, axes 1 and 2 at most 65535.
GRID_X_MAX = 2**31 - 1
GRID_YZ_MAX = 65535


def _pow2(n: int) -> int:
    """The power of two >= max(n, 16) (Triton's ``tl.arange`` sizes; 16 for ``tl.dot``)."""
    return max(16, 1 << (max(n, 1) - 1).bit_length())


def _grid(batch_heads: int, e: int) -> tuple[int, int] | None:
    grid = (batch_heads, -(-e // BLOCK_E))
    return grid if grid[0] <= GRID_X_MAX and grid[1] <= GRID_YZ_MAX else None


def feature_warps(block_m: int, backward: bool = False) -> int:
    """Warps of the feature kernels for a feature block: 4 up to 32; from 64 on, where 4 warps
    spill, 8 (and 16 for the backward at 128, which spills at 8)."""
    if block_m <= 32:
        return 4
    return 16 if backward and block_m >= 128 else 8


def hedgehog_warps(block_d: int, block_h: int) -> int:
    """Warps of the fused hedgehog forward: 4 up to a 512-element W tile, else 8."""
    return 4 if block_d * block_h <= 512 else 8


def kernel_dtype(*dtypes: torch.dtype) -> torch.dtype:
    """The one dtype the kernel's inputs are cast to: the promotion of the inputs' dtypes (so a
    bf16 feature map under autocast meeting fp32 values runs in fp32)."""
    out = dtypes[0]
    for d in dtypes[1:]:
        out = torch.promote_types(out, d)
    return out


def feature_plan(
    dtype: torch.dtype, m: int, e: int, batch_heads: int, backward: bool = False
) -> dict[str, Any] | None:
    """Launch configuration of the feature kernels (``causal_fwd``, or ``causal_bwd`` with
    ``backward``) for features of width ``m``, values of width ``e`` and B*H (batch x heads)
    programs per value block, or ``None`` when they do not take this shape (dtype not compiled,
    m above the largest block, a grid axis over its limit).

    >>> feature_plan(torch.bfloat16, 48, 64, 8)
    {'BM': 64, 'BE': 16, 'BT': 16, 'num_warps': 8, 'num_stages': 1, 'grid': (8, 4)}
    >>> feature_plan(torch.float32, 256, 64, 8) is None
    True
    """
    block_m = _pow2(m + (-m) % 16)
    grid = _grid(batch_heads, e)
    if dtype not in TRITON_DTYPES or block_m > MAX_FEATURE_BLOCK or grid is None or m < 1:
        return None
    return {
        "BM": block_m,
        "BE": BLOCK_E,
        "BT": CHUNK,
        "num_warps": feature_warps(block_m, backward),
        "num_stages": 1,
        "grid": grid,
    }


def hedgehog_plan(
    dtype: torch.dtype, d: int, half: int, e: int, batch_heads: int
) -> dict[str, Any] | None:
    """Launch configuration of the fused hedgehog forward (head dimension ``d``, ``half`` = m/2
    rows of W), or ``None`` when it does not take this shape; its backward runs the feature
    kernel on fp32 features of width 2 * half, so that must fit too.

    >>> hedgehog_plan(torch.float16, 64, 32, 64, 8)["num_warps"]
    8
    >>> hedgehog_plan(torch.float16, 64, 64, 64, 8) is None  # 64 x 64: runs on features
    True
    """
    block_d, block_h = _pow2(d), _pow2(half)
    grid = _grid(batch_heads, e)
    if (
        dtype not in TRITON_DTYPES
        or block_d > MAX_HEAD_BLOCK
        or block_h > MAX_HEDGEHOG_BLOCK
        or block_d * block_h > MAX_HEDGEHOG_TILE
        or grid is None
        or feature_plan(torch.float32, 2 * half, e, batch_heads, backward=True) is None
    ):
        return None
    return {
        "BD": block_d,
        "BH": block_h,
        "BE": BLOCK_E,
        "BT": CHUNK,
        "num_warps": hedgehog_warps(block_d, block_h),
        "num_stages": 1,
        "grid": grid,
    }


def max_offsets(B: int, H: int, N: int, m: int, e: int, d: int | None = None) -> dict[str, int]:
    """The largest element offset each kernel forms for this shape (the kernels' own offset
    formulas, evaluated in Python integers): what must fit the offset dtype (the kernels cast
    program ids to int64 first, so every product is 64-bit).

    >>> max_offsets(1, 1, 16, 16, 16)["features"]
    255
    """
    bh, mp = B * H, m + (-m) % 16
    n_blocks = -(-e // BLOCK_E)
    last_row = (bh - 1) * N + (N - 1)
    out = {
        "features": last_row * mp + (mp - 1),
        "values": last_row * e + (e - 1),
        "den": last_row,
        # the backward's per-value-block shares of d phi_q, d phi_k
        "feature_shares": (n_blocks - 1) * bh * N * mp + last_row * mp + (mp - 1),
    }
    if d is not None:
        out["hedgehog_inputs"] = last_row * d + (d - 1)
        out["keep"] = (B - 1) * N + (N - 1)
    return out


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
