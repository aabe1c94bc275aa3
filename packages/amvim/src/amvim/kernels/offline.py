"""The kernels gate of the Triton selective scan: Triton's offline compile for sm_90 (Hopper) of
every launch configuration the dispatcher can pick, without a GPU, held to sm_90's shared memory
and to no register spills (:mod:`paperkit.kernel_gate`).

``python -m amvim.kernels.offline`` prints one table row per configuration (dtype, NP, BLOCK_E,
registers, spill bytes, stack bytes, shared bytes; ``--json`` for JSON lines) and exits with
status 1 when one breaks its budget. It must run without ``TRITON_INTERPRET`` (the interpreter
replaces the compiler); the ``kernels`` nox session and a ``slow`` test run it.
"""

from __future__ import annotations

from amvim.kernels import MAX_TRITON_STATE, TRITON_DTYPES
from amvim.kernels.scan_triton import launch_config
from paperkit.kernel_gate import TritonConfig, main

__all__ = ["configurations"]

_SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
_IN_U_DTYPE = ("U", "DELTA", "A", "BM", "CM", "DV", "Z", "DB", "OUT")  # cast to u's dtype
_FLAGS = ("HAS_D", "HAS_Z", "HAS_DB", "SOFTPLUS")


def configurations() -> list[TritonConfig]:
    """Every dtype the kernel takes times every padding NP the launcher can pick for
    N <= MAX_TRITON_STATE (the constexprs depend on N only through NP), each with every optional
    input on (the most live registers)."""
    from amvim.kernels import scan_jit

    fn = scan_jit.selective_scan_fwd
    configs = []
    paddings = sorted({launch_config(n)["NP"] for n in range(1, MAX_TRITON_STATE + 1)})
    for dtype in TRITON_DTYPES:
        for NP in paddings:
            launch = launch_config(NP)
            signature = {}
            for name in fn.arg_names:
                if name in _IN_U_DTYPE:
                    signature[name] = "*" + _SHORT[dtype]
                elif name == "LAST":
                    signature[name] = "*fp32"
                elif name not in (*_FLAGS, *launch):
                    signature[name] = "i32"
            configs.append(
                TritonConfig(
                    fn,
                    signature,
                    {**dict.fromkeys(_FLAGS, True), **launch},
                    label={"dtype": dtype, **launch},
                )
            )
    return configs


if __name__ == "__main__":
    raise SystemExit(main(configurations))
