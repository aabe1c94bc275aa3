"""The fused kernel's launch side without a GPU: the dispatcher only picks configurations that the
static gate compiles (zeros.kernels.offline), every other shape takes the torch path, offsets are
64-bit where they pass 2^31, and the grid stays within CUDA's limits. The offline compile itself
(Triton's compiler for sm_90) runs in ``nox -s "kernels(zeros)"`` and in a slow test here."""

import inspect
import re

import numpy as np
import pytest
import torch

from paperkit.kernel_gate import run_offline
from zeros import ops
from zeros.kernels import chunk_triton
from zeros.kernels.chunk_triton import (
    GRID_AXIS0_MAX,
    GRID_AXIS12_MAX,
    LAUNCH,
    TRITON_DTYPES,
    grid,
    launch_config,
)

triton = pytest.importorskip("triton")

DTYPES = (*TRITON_DTYPES, torch.float64)


def _gated():
    from zeros.kernels.offline import configurations

    return {
        (c.label["dtype"], tuple(sorted(c.constexprs.items())), c.num_warps, c.num_stages)
        for c in configurations()
    }


@pytest.fixture
def on_triton(monkeypatch):
    """The dispatcher as on a GPU machine: Triton usable for these (meta) tensors."""
    monkeypatch.setattr(chunk_triton, "triton_interpret", lambda: True)
    monkeypatch.setattr(chunk_triton, "triton_available", lambda: True)


def _meta(B, T, H, d, dtype=torch.float32):
    return torch.empty(B, T, H, d, dtype=dtype, device="meta")


def test_every_configuration_the_dispatcher_picks_is_gated(on_triton):
    gated = _gated()
    accepted = set()
    for dtype in DTYPES:
        for d in range(1, 257):
            q = _meta(2, 5, 3, d, dtype)
            config = launch_config(dtype, d)
            assert chunk_triton.supported(q, q) == (config is not None), (dtype, d)
            if config is None:
                continue
            warps, stages = config.pop("num_warps"), config.pop("num_stages")
            key = (str(dtype).removeprefix("torch."), tuple(sorted(config.items())), warps, stages)
            assert key in gated, key
            accepted.add(key)
    assert accepted == gated  # and the gate compiles nothing the dispatcher never picks
    assert {d for d in range(1, 257) if launch_config(torch.bfloat16, d)} == set(LAUNCH)


def test_shapes_outside_the_table_take_the_torch_path(on_triton):
    # d = 128 spills in every configuration tried; e != d, float64 and d = 48 are not compiled.
    # The operator offers the kernel exactly where supported() holds (zeros.ops.attend), so
    # backend="auto" takes chunk for these and backend="triton" is refused.
    for q, v in [
        (_meta(1, 4, 2, 128), _meta(1, 4, 2, 128)),
        (_meta(1, 4, 2, 64), _meta(1, 4, 2, 32)),
        (_meta(1, 4, 2, 64, torch.float64), _meta(1, 4, 2, 64, torch.float64)),
        (_meta(1, 4, 2, 64), _meta(1, 4, 2, 64, torch.bfloat16)),
        (_meta(1, 4, 2, 48), _meta(1, 4, 2, 48)),
    ]:
        assert not chunk_triton.supported(q, v)
    src = inspect.getsource(ops._attend)
    assert '"triton": causal and chunk_triton.supported(q, v)' in src


def test_grid_axes_stay_within_cuda_limits(on_triton):
    # B * H past 65535 goes on axis 0 (limit 2^31 - 1); the column blocks on axis 1 stay small
    for B, H, d in [(70_000, 1, 64), (4096, 32, 16), (1, 1, 64)]:
        rows, cols = grid(B, H, d, launch_config(torch.float32, d)["BLOCK_E"])
        assert rows == B * H <= GRID_AXIS0_MAX and cols <= GRID_AXIS12_MAX
        assert chunk_triton.supported(_meta(B, 1, H, d), _meta(B, 1, H, d))
    # a grid axis 0 past 2^31 - 1 is refused (the torch path takes it)
    huge = _meta(2**31, 1, 1, 16)
    assert not chunk_triton.supported(huge, huge)


def test_offsets_past_2_31_are_64_bit_in_the_kernel():
    """The largest offset the kernel forms for a (B, T, H, d) input of more than 2^31 elements,
    computed as the kernel computes it: it is the last element's index, which int32 arithmetic
    (the kernel's default for program ids, positions and i32 strides) would wrap."""
    B, T, H, d = 3, 2**20 + 5, 16, 64  # 3.2e9 elements per tensor
    assert B * T * H * d > 2**31
    config = launch_config(torch.bfloat16, d)
    rows, cols = grid(B, H, d, config["BLOCK_E"])
    stride_b, stride_t, stride_h = T * H * d, H * d, d
    sstride_b, sstride_t = T * H, H
    assert max(stride_b, stride_t, stride_h) < 2**31  # the strides are i32 arguments

    def offsets(int_t):
        pid, pid_e = int_t(rows - 1), int_t(cols - 1)
        b, h = pid // int_t(H), pid % int_t(H)
        e0 = pid_e * int_t(config["BLOCK_E"])
        pos = int_t(T - 1)
        with np.errstate(over="ignore"):
            base = b * int_t(stride_b) + h * int_t(stride_h)
            qkv = base + pos * int_t(stride_t) + int_t(d - 1)  # q, k rows: all d columns
            vo = base + pos * int_t(stride_t) + e0 + int_t(config["BLOCK_E"] - 1)
            s = b * int_t(sstride_b) + h + pos * int_t(sstride_t)
        return int(qkv), int(vo), int(s)

    qkv, vo, s = offsets(np.int64)
    assert qkv == vo == B * T * H * d - 1  # the last element of q, k, v, o
    assert s == B * T * H - 1  # the last logit and gate
    assert offsets(np.int32)[:2] != (qkv, vo)  # int32 would wrap: the casts are needed

    # the kernel makes exactly those products 64-bit: program ids and positions are cast to
    # int64 before they meet a stride
    from zeros.kernels import zeros_jit

    src = inspect.getsource(zeros_jit.zeros_chunk_fwd.fn)
    assert len(re.findall(r"tl\.program_id\(\d\)\.to\(tl\.int64\)", src)) == 2
    assert src.count("tl.program_id") == 2
    assert "pos.to(tl.int64)[:, None] * stride_t" in src
    assert "pos.to(tl.int64) * sstride_t" in src
    assert "b * stride_b + h * stride_h" in src and "b * sstride_b + h" in src


@pytest.mark.slow  # 9 offline compiles: 30-90 CPU seconds, in a subprocess
def test_every_configuration_compiles_for_sm90_without_spills():
    pytest.importorskip("triton.backends.nvidia.compiler")
    from zeros.kernels.offline import configurations

    rows = run_offline("zeros.kernels.offline")
    assert [(r["dtype"], r["D"]) for r in rows] == [
        (c.label["dtype"], c.label["D"]) for c in configurations()
    ]
    for r in rows:
        assert r["violations"] == [], r
        assert r["spill_bytes"] == 0 and r["stack_bytes"] == 0, r
        assert r["shared_bytes"] <= 232_448, r
