"""The static kernel gate: budgets, the ptxas parser, and real offline compiles (nvcc for a .cu,
Triton's compiler for sm_90 in a subprocess) where the tools are installed."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

from paperkit.kernel_gate import (
    SM90_SHARED_BYTES,
    Budget,
    _nvcc,
    compile_cuda,
    parse_ptxas,
    violations,
)


def test_violations_name_each_broken_limit():
    row = {"shared_bytes": SM90_SHARED_BYTES + 1, "spill_bytes": 8, "registers": 255}
    found = violations(row, Budget())
    assert len(found) == 2 and "shared" in found[0] and "spills" in found[1]
    assert violations(row, Budget(shared_bytes=10**6, spill_bytes=8)) == []
    assert violations({**row, "registers": 256}, Budget(10**6, 8)) == ["registers 256 > 255"]


def test_parse_ptxas_sums_stores_and_loads():
    report = (
        "Used 255 registers\n0 bytes stack frame, 1024 bytes spill stores, 512 bytes spill loads"
    )
    assert parse_ptxas(report) == {
        "registers": 255,
        "spill_bytes": 1536,
        "stack_bytes": 0,
        "smem_bytes": 0,
    }


@pytest.mark.skipif(_nvcc() is None, reason="needs nvcc")
def test_compile_cuda_reports_static_shared_memory_and_catches_the_limit(tmp_path):
    source = tmp_path / "k.cu"
    source.write_text(
        textwrap.dedent(
            """
            extern "C" __global__ void tile(float *out) {
                __shared__ float buf[12288];  // 48 KiB, the static maximum
                buf[threadIdx.x] = threadIdx.x;
                __syncthreads();
                out[threadIdx.x] = buf[(threadIdx.x + 1) % blockDim.x];
            }
            """
        )
    )
    (row,) = compile_cuda(source, "sm_90", _nvcc())
    assert row["function"] == "tile" and row["shared_bytes"] == 49152
    assert violations(row, Budget()) == []
    assert violations(row, Budget(shared_bytes=40_000)) == ["shared 49,152 B > 40,000 B"]


@pytest.mark.slow  # one Triton compile in a subprocess: a few CPU seconds
def test_compile_triton_for_sm90_without_a_gpu(tmp_path):
    pytest.importorskip("triton.backends.nvidia.compiler")
    script = tmp_path / "gate.py"
    script.write_text(
        textwrap.dedent(
            """
            import json, triton, triton.language as tl
            from paperkit.kernel_gate import TritonConfig, compile_triton

            @triton.jit
            def copy(X, Y, n, BLOCK: tl.constexpr):
                offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
                tl.store(Y + offs, tl.load(X + offs, mask=offs < n), mask=offs < n)

            config = TritonConfig(copy, {"X": "*fp32", "Y": "*fp32", "n": "i32"}, {"BLOCK": 1024},
                                  label={"BLOCK": 1024})
            print(json.dumps(compile_triton(config)))
            """
        )
    )
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    run = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=600
    )
    assert run.returncode == 0, run.stderr[-3000:]
    row = json.loads(run.stdout.strip().splitlines()[-1])
    assert row["BLOCK"] == 1024 and 0 < row["registers"] <= 255
    assert row["spill_bytes"] == 0 and row["shared_bytes"] < SM90_SHARED_BYTES


def test_gate_package_refuses_an_unknown_package():
    from paperkit.kernel_gate import gate_package

    with pytest.raises(SystemExit, match="not an installed package"):
        gate_package("no_such_package_here")
