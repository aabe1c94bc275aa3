"""The kernels gate of the LION chunkwise Triton kernel: Triton's offline compile for sm_90
(Hopper) of every launch configuration the dispatcher can pick, without a GPU, held to sm_90's
shared memory per block and to no register spills (:mod:`paperkit.kernel_gate`).

The configurations are every dtype of :data:`lion.kernels.chunk_triton.TRITON_DTYPES` times every
head size the dispatcher sends to Triton (powers of two 16..128) times every tile ``BLOCK`` that
:func:`lion.kernels.chunk_triton.launch_config` can return for a chunk size (a power of two >= 16,
capped per head size), each with the ``BV``, ``num_warps`` and ``num_stages`` it comes with. The
kernel has no bias or other optional inputs, and its backward pass is the torch chunk form (no
Triton kernel to gate).

``python -m lion.kernels.offline`` prints one table row per configuration (``--json`` for JSON
lines) and exits with status 1 when one breaks its budget. It must run without
``TRITON_INTERPRET`` (the interpreter replaces the compiler); ``uvx nox -s "kernels(lion)"`` runs
it.
"""

from __future__ import annotations

import torch

from lion.kernels.chunk_triton import MAX_TRITON_HEAD_DIM, TRITON_DTYPES, launch_config
from paperkit.kernel_gate import TritonConfig, main

__all__ = ["configurations", "head_dims", "launches"]

_SHORT = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
_IN_DTYPE = ("Q", "K", "V")  # loaded in the inputs' dtype; L, NUM, DEN are float32


def head_dims() -> list[int]:
    """The head sizes the dispatcher sends to Triton: powers of two 16..MAX_TRITON_HEAD_DIM."""
    return [d for d in (16, 32, 64, 128, 256, 512) if d <= MAX_TRITON_HEAD_DIM]


def launches() -> list[tuple[torch.dtype, int, dict[str, int]]]:
    """Every distinct ``(dtype, d, launch_config(...))`` the launcher can use: chunk sizes
    16, 32, ... until the tile stops growing (it is capped, so larger chunks repeat a row)."""
    found = []
    for dtype in TRITON_DTYPES:
        for d in head_dims():
            chunk = 16
            while True:
                config = launch_config(dtype, d, chunk)
                if (dtype, d, config) in found:
                    break
                found.append((dtype, d, config))
                chunk *= 2
    return found


def configurations() -> list[TritonConfig]:
    """One :class:`paperkit.kernel_gate.TritonConfig` per entry of :func:`launches`."""
    from lion.kernels.chunk_triton import _kernel

    fn = _kernel()
    configs = []
    for dtype, d, launch in launches():
        signature = {}
        for name in fn.arg_names:
            if name in _IN_DTYPE:
                signature[name] = "*" + _SHORT[dtype]
            elif name in ("L", "NUM", "DEN"):
                signature[name] = "*fp32"
            elif name in ("N", "BH"):
                signature[name] = "i32"
        constexprs = {"D": d, "BLOCK": launch["BLOCK"], "BV": launch["BV"]}
        configs.append(
            TritonConfig(
                fn,
                signature,
                constexprs,
                label={"dtype": _SHORT[dtype], **constexprs},
                num_warps=launch["num_warps"],
                num_stages=launch["num_stages"],
            )
        )
    return configs


if __name__ == "__main__":
    raise SystemExit(main(configurations))
