"""Launch configurations of the Triton kernel: every shape the dispatcher sends to Triton has a
configuration the static kernel gate compiles (lion.kernels.offline), shapes that do not fit go
to the torch chunk form, offsets are 64-bit where they pass 2**31, and the grid stays within
CUDA's limits. The slow tests compile for sm_90 offline (no GPU)."""

import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest
import torch

import lion.ops
from lion import LionAttention, lion_attention
from lion.kernels import chunk_triton
from lion.kernels.chunk_triton import (
    MAX_GRID_X,
    MAX_GRID_YZ,
    MAX_TRITON_HEAD_DIM,
    grid,
    kernel_dtype,
    largest_offsets,
    launch_config,
)
from lion.kernels.offline import launches
from lion.ops import pick_backend
from paperkit.testing import assert_param_error

INT32_MAX = 2**31 - 1
DTYPES = (torch.float64, torch.float32, torch.float16, torch.bfloat16)
CHUNKS = (1, 3, 8, 12, 16, 24, 32, 48, 64, 128, 256, 1024, 4096)


def test_every_accepted_shape_has_a_gated_configuration(monkeypatch):
    """For every dtype, head size 1..300 and chunk size that pick_backend accepts for
    'triton' (Triton assumed to run), the launcher's configuration is one the gate compiles;
    'auto' sends every other shape to 'chunk'."""
    monkeypatch.setattr(lion.ops, "triton_runs", lambda device: True)
    gated = launches()
    cpu = torch.device("cpu")
    accepted = set()
    for d in range(1, 301):
        for chunk in CHUNKS:
            try:
                pick_backend("t", "triton", d, cpu, chunk)
            except ValueError:
                assert pick_backend("t", "auto", d, cpu, chunk) == "chunk"
                continue
            assert pick_backend("t", "auto", d, cpu, chunk) == "triton"
            accepted.add(d)
            for dtype in DTYPES:
                entry = (kernel_dtype(dtype), d, launch_config(dtype, d, chunk))
                assert entry in gated, entry
    assert accepted == {16, 32, 64, 128}
    # and nothing is gated that the dispatcher cannot pick
    assert {d for _, d, _ in gated} == accepted


def test_gate_lists_the_launches():
    """configurations() has one row per launch, with its dtype, constexprs and options."""
    pytest.importorskip("triton")
    from lion.kernels.offline import configurations

    short = {torch.float32: "fp32", torch.float16: "fp16", torch.bfloat16: "bf16"}
    rows = [
        (c.label["dtype"], c.constexprs["D"], c.constexprs["BLOCK"], c.constexprs["BV"])
        + (c.num_warps, c.num_stages)
        for c in configurations()
    ]
    expected = [
        (short[dt], d, cfg["BLOCK"], cfg["BV"], cfg["num_warps"], cfg["num_stages"])
        for dt, d, cfg in launches()
    ]
    assert rows == expected and len(rows) == 24


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(("d", "chunk"), [(16, 16), (16, 1024), (64, 64), (128, 64)])
def test_launcher_uses_the_dispatched_configuration(monkeypatch, dtype, d, chunk):
    """The launcher launches exactly launch_config(...) on grid(...), in the kernel's dtype."""
    calls = []

    class Recorder:
        def __getitem__(self, shape):
            def launch(*args, **kwargs):
                calls.append((shape, args, kwargs))

            return launch

    monkeypatch.setattr(chunk_triton, "_kernel", lambda: Recorder())
    q, k, v = torch.rand(3, 2, 3, 40, d, dtype=dtype)
    chunk_triton.lion_chunk_triton_parts(q, k, v, None, chunk)
    ((shape, args, kwargs),) = calls
    config = launch_config(dtype, d, chunk)
    assert shape == grid(2, 3, d, config["BV"]) == (6, 2, d // config["BV"])
    assert kwargs == {"D": d, **config}
    assert args[0].dtype == kernel_dtype(dtype) and args[3].dtype == torch.float32
    assert args[4].dtype == args[5].dtype == torch.float32  # numerators, denominators


def test_large_heads_are_routed_to_chunk():
    """d = 256 (a state too large for one program's registers) is refused for 'triton' and
    runs the chunk form under 'auto'."""
    q, k, v = torch.rand(3, 1, 1, 20, 256)
    assert_param_error(lion_attention, q, k, v, backend="triton", chunk_size=16, param="backend")
    auto = lion_attention(q, k, v, chunk_size=16)
    assert torch.equal(auto, lion_attention(q, k, v, backend="chunk", chunk_size=16))
    assert_param_error(LionAttention, 512, 2, backend="triton", param="backend")
    assert MAX_TRITON_HEAD_DIM == 128


def test_largest_offsets_need_int64():
    """For B*H*N*d >= 2**31 (here 2**33) every pointer's largest offset is the last element of
    its buffer, computed exactly in int64; the numerators' offset passes int32 already at
    B*H*N*d > 2**30, where q, k, v's do not. Wrapped to int32, as 32-bit index arithmetic would
    be, the offsets go negative."""
    B, H, N, d = 4, 16, 2**20, 128
    elements = B * H * N * d
    assert elements == 2**33
    off = largest_offsets(B, H, N, d)
    assert off == {
        "QKV": elements - 1,
        "L": B * H * N - 1,
        "NUM": 2 * elements - 1,
        "DEN": 2 * B * H * N - 1,
    }
    assert max(off.values()) < 2**63
    for name in ("QKV", "NUM"):
        assert int(np.array(off[name], dtype=np.int64).astype(np.int32)) != off[name]
    # the reverse pass's numerators first: just past 2**30 elements
    assert largest_offsets(1, 1, 2**23, 128)["NUM"] == INT32_MAX
    past = largest_offsets(1, 1, 2**23 + 1, 128)
    assert past["QKV"] <= INT32_MAX < past["NUM"]


def test_grid_stays_within_launch_limits():
    """(B*H, 2, d/BV): B*H on axis x (up to 2**31 - 1), the direction and the value blocks on y
    and z; B*H = 65536 (past the y/z limit) launches, 2**31 does not and is refused."""
    for d in (16, 32, 64, 128):
        bv = launch_config(torch.bfloat16, d, 64)["BV"]
        for B, H in ((1, 1), (1024, 64), (2**16, 2**14)):
            x, y, z = grid(B, H, d, bv)
            assert x == B * H <= MAX_GRID_X and y == 2 and 1 <= z <= 8 <= MAX_GRID_YZ
    with pytest.raises(ValueError, match="launch limits"):
        grid(2**16, 2**15, 64, 32)


def _subprocess_env():
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    return env


_TTIR = """
import triton
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource
from lion.kernels.offline import configurations
c = configurations()[-1]
signature = {**c.signature, **dict.fromkeys(c.constexprs, "constexpr")}
kernel = triton.compile(ASTSource(c.fn, signature, dict(c.constexprs)),
                        target=GPUTarget("cuda", 90, 32),
                        options={"num_warps": c.num_warps, "num_stages": c.num_stages})
print(kernel.asm["ttir"])
"""


@pytest.mark.slow  # one offline compile to Triton IR, in a subprocess (a few seconds)
def test_every_pointer_offset_is_int64_in_the_compiled_kernel():
    """In the kernel's Triton IR for sm_90 every pointer addition takes an i64 offset (the
    program ids are cast to int64 before they meet a stride)."""
    pytest.importorskip("triton.backends.nvidia.compiler")
    run = subprocess.run(
        [sys.executable, "-c", _TTIR], capture_output=True, text=True, env=_subprocess_env()
    )
    assert run.returncode == 0, run.stderr[-3000:]
    adds = [line for line in run.stdout.splitlines() if "tt.addptr" in line]
    assert len(adds) >= 6  # q, k, v, log-decays, numerators, denominators
    for line in adds:
        offset_type = line.split(":", 1)[1].rsplit(",", 1)[1]
        assert re.search(r"\bi64\b|xi64>", offset_type), line


@pytest.mark.slow  # 24 offline compiles: 1-3 CPU minutes, in a subprocess
def test_every_configuration_compiles_for_sm90_without_spills():
    pytest.importorskip("triton.backends.nvidia.compiler")
    run = subprocess.run(
        [sys.executable, "-m", "lion.kernels.offline", "--json"],
        capture_output=True,
        text=True,
        env=_subprocess_env(),
        timeout=1800,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    rows = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
    assert len(rows) == len(launches())
    for r in rows:
        assert r["violations"] == [] and r["spill_bytes"] == 0, r
        assert r["shared_bytes"] <= 232_448 and r["registers"] <= 255, r
