"""The kernels gate of the fused ZeroS kernel: Triton's offline compile for sm_90 (Hopper) of
every launch configuration the dispatcher can pick, without a GPU, held to sm_90's shared memory
per block and to no register spills (:mod:`paperkit.kernel_gate`).

The dispatcher (:func:`zeros.kernels.chunk_triton.launch_config`) picks one configuration per
(dtype, d): the dtypes of :data:`~zeros.kernels.chunk_triton.TRITON_DTYPES` times the head sizes
of :data:`~zeros.kernels.chunk_triton.LAUNCH`; the optional gate0 is a runtime flag, so it adds
no compiled variant. There is no Triton backward kernel (the backward recomputes in torch).

``python -m zeros.kernels.offline`` prints one table row per configuration (dtype, d, BLOCK,
BLOCK_E, warps, stages, registers, spill, stack and shared bytes; ``--json`` for JSON lines) and
exits with status 1 when one breaks its budget. It must run without ``TRITON_INTERPRET`` (the
interpreter replaces the compiler); ``nox -s "kernels(zeros)"`` and a ``slow`` test run it.
"""

from __future__ import annotations

from paperkit.kernel_gate import TritonConfig, main
from zeros.kernels.chunk_triton import LAUNCH, TRITON_DTYPES, launch_config

__all__ = ["configurations"]

_SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
_TENSORS = ("Q", "K", "V", "S", "G1", "GH", "G0", "O")  # all in the inputs' one dtype


def configurations() -> list[TritonConfig]:
    """One configuration per (dtype, d) the dispatcher takes, exactly as it launches them."""
    from zeros.kernels import zeros_jit

    fn = zeros_jit.zeros_chunk_fwd
    configs = []
    for dtype in TRITON_DTYPES:
        name = str(dtype).removeprefix("torch.")
        for d in sorted(LAUNCH):
            launch = launch_config(dtype, d)
            warps, stages = launch.pop("num_warps"), launch.pop("num_stages")
            signature = {
                arg: "*" + _SHORT[name] if arg in _TENSORS else "i32"
                for arg in fn.arg_names
                if arg not in launch
            }
            configs.append(
                TritonConfig(
                    fn,
                    signature,
                    launch,
                    label={"dtype": name, **launch},
                    num_warps=warps,
                    num_stages=stages,
                )
            )
    return configs


if __name__ == "__main__":
    raise SystemExit(main(configurations))
