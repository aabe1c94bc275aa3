"""The kernels gate of the fused FlashBias kernels: Triton's offline compile for sm_90 (Hopper)
of every launch configuration the launcher can pick, without a GPU, held to sm_90's shared memory
per block and to no register spills (:mod:`paperkit.kernel_gate`).

The configurations are every input dtype (fp16, bf16, fp32) times every (padded head size D,
padded rank RP) the launcher can pick (:func:`flashbias.kernels.launch.gated_pads`; RP = 32 only
for fp16/bf16 at D = 128), with a bias and without one (``HAS_BIAS=False``: no factor loads, no
bias dot), times the three kernels (forward, dK/dV, dQ), each with the tile sizes, warps and
stages that :func:`flashbias.kernels.launch.launch_config` returns for it and with a dense mask
and the causal mask on (the flags only add code; their off variants are not compiled). The strides
are 32-bit as a launch passes them for tensors below 2³¹ elements (larger strides make 64-bit
arguments; the products with them are 64-bit either way).

``python -m flashbias.kernels.offline`` prints one table row per configuration (``--json`` for JSON
lines) and exits with status 1 when one breaks its budget. It must run without
``TRITON_INTERPRET`` (the interpreter replaces the compiler); ``uvx nox -s "kernels(flashbias)"``
runs it.
"""

from __future__ import annotations

import itertools

from flashbias.kernels.launch import KERNELS, TRITON_DTYPES, gated_pads, launch_config, pad_rank
from paperkit.kernel_gate import TritonConfig, main

__all__ = ["configurations"]

_SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
#: Pointer arguments in the inputs' dtype; the others point to fp32 (row statistics, gradients).
_IN_DTYPE = ("Q", "K", "V", "QB", "KB", "MASK", "O", "DO")
_FP32 = ("LSE", "DELTA", "DK", "DV", "DKB", "DQ", "DQB")
_CONSTEXPRS = ("HAS_MASK", "HAS_BIAS", "CAUSAL", "PREC", "D", "RP", "BLOCK_N", "BLOCK_M")


def _signature(fn, dtype: str) -> dict[str, str]:
    signature = {}
    for name in fn.arg_names:
        if name in _IN_DTYPE:
            signature[name] = "*" + _SHORT[dtype]
        elif name in _FP32:
            signature[name] = "*fp32"
        elif name == "scale":
            signature[name] = "fp32"
        elif name not in _CONSTEXPRS:
            signature[name] = "i32"
    return signature


def configurations() -> list[TritonConfig]:
    """One :class:`~paperkit.kernel_gate.TritonConfig` per (dtype, D, RP, kernel) with a bias,
    and per (dtype, D, kernel) without one (``HAS_BIAS=False``: no factor loads, no bias dot)."""
    from flashbias.kernels import triton_jit

    configs = []
    for dtype in TRITON_DTYPES:
        without_bias = {(D, pad_rank(0, dtype, D)) for D, _ in gated_pads(dtype)}
        variants = [(True, pads) for pads in gated_pads(dtype)]
        variants += [(False, pads) for pads in sorted(without_bias)]
        for (bias, (D, RP)), kernel in itertools.product(variants, KERNELS):
            fn = getattr(triton_jit, kernel)
            launch = launch_config(kernel, dtype, D, RP)
            tiles = {"BLOCK_N": launch["BLOCK_N"], "BLOCK_M": launch["BLOCK_M"]}
            precision = "ieee" if dtype == "float32" else "tf32"
            flags = {"HAS_MASK": True, "HAS_BIAS": bias, "CAUSAL": True, "PREC": precision}
            configs.append(
                TritonConfig(
                    fn,
                    _signature(fn, dtype),
                    flags | {"D": D, "RP": RP} | tiles,
                    label={"kernel": kernel.removeprefix("flash_bias_"), "dtype": dtype}
                    | {"bias": bias, "D": D, "RP": RP}
                    | tiles,
                    num_warps=launch["num_warps"],
                    num_stages=launch["num_stages"],
                )
            )
    return configs


if __name__ == "__main__":
    raise SystemExit(main(configurations))
