"""What the two CUDA launchers share: the dtype table, the compiled module, argument packing.

Tensors stay torch tensors; CuPy sees them zero-copy through DLPack (16-bit types as int16 views,
the kernels read their raw bits). ``gspn_scan.cu`` is compiled by NVRTC on the first launch
(:func:`paperkit.load_cuda_module`), never at import.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from paperkit import load_cuda_module, to_cupy

__all__ = ["CUDA_DTYPES", "KERNEL_NAMES", "MAX_LINE", "as_arg", "kernel", "scan_ints"]

#: torch dtype -> storage type name of the kernels' template instantiations.
CUDA_DTYPES = {torch.float32: "float", torch.float16: "f16_t", torch.bfloat16: "bf16_t"}
#: The longest line the fused kernels stage in shared memory (2 x S floats <= 48 KiB).
MAX_LINE = 6144
#: Every template instantiation the launchers look up, e.g. ``"gspn_fwd<float>"``.
KERNEL_NAMES = tuple(
    f"{k}<{t}>"
    for k in ("gspn_fwd", "gspn_bwd", "gspn_fwd_step", "gspn_bwd_step")
    for t in CUDA_DTYPES.values()
)


def kernel(name: str, dtype: torch.dtype) -> Any:
    """The compiled kernel ``name`` (``"gspn_fwd"``, ...) for tensors of ``dtype``."""
    module = load_cuda_module("gspn2", "kernels/gspn_scan.cu", name_expressions=KERNEL_NAMES)
    return module.get_function(f"{name}<{CUDA_DTYPES[dtype]}>")


def as_arg(t: torch.Tensor) -> Any:
    """A CuPy view of a CUDA tensor (16-bit floats reinterpreted as int16)."""
    return to_cupy(t.view(torch.int16) if t.element_size() == 2 else t)


def scan_ints(
    x: torch.Tensor, w_m: torch.Tensor, chunk: int, reverse: Sequence[bool]
) -> list[np.int32]:
    """The integer arguments (D, C, G, L, S, chunk, reverse bit mask) of every kernel."""
    _, d, c, length, line = x.shape
    mask = sum(1 << k for k, rev in enumerate(reverse) if rev)
    return [np.int32(v) for v in (d, c, w_m.shape[2], length, line, chunk, mask)]
