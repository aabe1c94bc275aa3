"""The kernels gate of the Triton selective scan: Triton's offline compile for sm_90 (Hopper) of
every launch configuration the dispatcher can pick, without a GPU, with the register, spill and
shared-memory figures of the ptxas that ships with Triton.

``python -m amvim.kernels.offline`` prints one JSON line per configuration (dtype, NP, BLOCK_E,
registers, spill bytes, stack bytes, shared bytes). It must run without ``TRITON_INTERPRET`` (the
interpreter replaces the compiler); the tests call it in a subprocess.
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from amvim.kernels import MAX_TRITON_STATE, TRITON_DTYPES
from amvim.kernels.scan_triton import launch_config

__all__ = ["SM90", "compile_sm90", "configurations"]

SM90 = 90
_SHORT = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
_IN_U_DTYPE = ("U", "DELTA", "A", "BM", "CM", "DV", "Z", "DB", "OUT")  # cast to u's dtype
_FLAGS = ("HAS_D", "HAS_Z", "HAS_DB", "SOFTPLUS")


def configurations() -> list[tuple[str, int]]:
    """(dtype, N) for every dtype the kernel takes and every padding NP the launcher can pick
    for N <= MAX_TRITON_STATE (one N per NP: the constexprs depend on N only through NP)."""
    paddings = sorted({launch_config(n)["NP"] for n in range(1, MAX_TRITON_STATE + 1)})
    return [(dtype, NP) for dtype in TRITON_DTYPES for NP in paddings]


def compile_sm90(dtype: str, N: int) -> dict[str, Any]:
    """Compile the kernel for sm_90 with every optional input on (the most live registers) and
    return the resource figures of ``ptxas -v``."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.backends.nvidia.compiler import get_ptxas
    from triton.compiler import ASTSource

    from amvim.kernels import scan_jit

    fn = scan_jit.selective_scan_fwd
    config = launch_config(N)
    sig = {}
    for name in fn.arg_names:
        if name in _IN_U_DTYPE:
            sig[name] = "*" + _SHORT[dtype]
        elif name == "LAST":
            sig[name] = "*fp32"
        elif name in (*_FLAGS, *config):
            sig[name] = "constexpr"
        else:
            sig[name] = "i32"
    consts = {**dict.fromkeys(_FLAGS, True), **config}
    kernel = triton.compile(ASTSource(fn, sig, consts), target=GPUTarget("cuda", SM90, 32))
    with tempfile.TemporaryDirectory() as tmp:
        ptx = Path(tmp) / "kernel.ptx"
        ptx.write_text(kernel.asm["ptx"])
        cmd = [get_ptxas(SM90).path, "-v", "--gpu-name", "sm_90a", str(ptx)]
        report = subprocess.run(
            [*cmd, "-o", str(Path(tmp) / "kernel.cubin")],
            capture_output=True,
            text=True,
            check=True,
        ).stderr

    def bytes_of(pattern: str) -> int:
        return sum(int(x) for x in re.findall(pattern, report))

    return {
        "dtype": dtype,
        **config,
        "registers": int(re.search(r"Used (\d+) registers", report).group(1)),
        "spill_bytes": bytes_of(r"(\d+) bytes spill (?:stores|loads)"),
        "stack_bytes": bytes_of(r"(\d+) bytes (?:stack frame|cumulative stack size)"),
        "shared_bytes": int(kernel.metadata.shared),
        "num_warps": int(kernel.metadata.num_warps),
    }


if __name__ == "__main__":
    for dtype, N in configurations():
        print(json.dumps(compile_sm90(dtype, N)), flush=True)
