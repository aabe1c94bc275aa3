"""The launcher's choices on the CPU: every configuration the dispatcher can pick is one the static
kernel gate compiles (``flashbias.kernels.offline``), shapes without one go to SDPA, and the
offsets of a launch on tensors past 2³¹ elements are formed in 64 bits (arithmetic, no
allocation)."""

import ast
import inspect
from functools import partial

import numpy as np
import pytest
import torch

from flashbias import flash_bias_attention
from flashbias.attention import _backend
from flashbias.kernels import attention_triton, launch
from flashbias.kernels.launch import (
    INT32_MAX,
    KERNELS,
    MAX_HEAD,
    MAX_RANK,
    TRITON_DTYPES,
    gated_pads,
    largest_offsets,
    launch_config,
    pad_head,
    pad_rank,
    triton_shape_error,
)
from paperkit.testing import assert_param_error, requires_triton


def _gated():
    """(with a bias, kernel, dtype, D, RP, BLOCK_N, BLOCK_M, num_warps, num_stages) of every gated
    configuration."""
    from flashbias.kernels.offline import configurations

    return {
        (
            c.constexprs["HAS_BIAS"],
            "flash_bias_" + c.label["kernel"],
            c.label["dtype"],
            c.constexprs["D"],
            c.constexprs["RP"],
            c.constexprs["BLOCK_N"],
            c.constexprs["BLOCK_M"],
            c.num_warps,
            c.num_stages,
        )
        for c in configurations()
    }


def _key(bias, kernel, dtype, D, RP, config):
    return (bias, kernel, dtype, D, RP, config["BLOCK_N"], config["BLOCK_M"]) + (
        config["num_warps"],
        config["num_stages"],
    )


@requires_triton
def test_every_accepted_shape_has_a_gated_configuration():
    """For every dtype, head size d <= 128 and rank R <= 32 (R = 0: no bias) the dispatcher
    accepts, each kernel's configuration is one the gate compiles; d = 129 or R = 33 is not
    accepted."""
    gated = _gated()
    with_bias = sum(len(gated_pads(t)) for t in TRITON_DTYPES) * len(KERNELS)
    assert len(gated) == with_bias + 3 * len(TRITON_DTYPES) * len(KERNELS) == 75
    seen = set()
    for dtype in TRITON_DTYPES:
        for d in range(1, MAX_HEAD + 1):
            for R in range(MAX_RANK + 1):
                if d % 32 in (0, 1) or R % 16 in (0, 1):  # every pad's edges
                    assert triton_shape_error(dtype, d, R, 2, 100, 90, 4) is None
                for kernel in KERNELS:
                    D = pad_head(d)
                    RP = pad_rank(R, dtype, D)
                    config = launch_config(kernel, dtype, D, RP)
                    key = _key(R > 0, kernel, dtype, D, RP, config)
                    assert key in gated, key
                    seen.add(key)
    assert seen == gated  # and the gate compiles nothing the dispatcher never picks
    for d, R in ((MAX_HEAD + 1, 4), (64, MAX_RANK + 1)):
        assert triton_shape_error("bfloat16", d, R, 2, 100, 90, 4) is not None
    assert triton_shape_error("float64", 64, 4, 2, 100, 90, 4) is not None


@requires_triton
def test_the_launches_use_gated_configurations(monkeypatch, qkv):
    """What the host side asks of launch_config in a forward and backward (in the interpreter,
    fp32 and fp16, with and without a bias) is in the gated set."""
    from paperkit import triton_interpret

    if not triton_interpret():
        pytest.skip("needs TRITON_INTERPRET=1 on the CPU")
    gated, calls, bias = _gated(), [], [True]

    def spy(kernel, dtype, D, RP):
        config = launch_config(kernel, dtype, D, RP)
        calls.append(_key(bias[0], kernel, dtype, D, RP, config))
        return config

    monkeypatch.setattr(attention_triton, "launch_config", spy)
    for dtype, R in ((torch.float32, 3), (torch.float16, 20)):
        q, k, v, q_b, k_b = (
            x.requires_grad_() for x in qkv(B=1, N=20, H=1, d=40, R=R, dtype=dtype)
        )
        bias[0] = True
        flash_bias_attention(q, k, v, q_b, k_b, backend="triton").float().sum().backward()
        bias[0] = False
        flash_bias_attention(q, k, v, backend="triton").float().sum().backward()
    assert len(calls) == 12 and set(calls) <= gated


def test_shapes_without_a_gated_configuration_are_routed_or_refused(qkv):
    """``auto`` sends them to SDPA (on a GPU it would otherwise pick Triton); an explicit
    ``triton`` refuses them with a parameter error before any launch."""
    q, k, v, _, _ = qkv(B=1, N=8, H=1, d=MAX_HEAD + 1, R=1, dtype=torch.float32)
    assert _backend("f", "auto", q, k, 0) == "sdpa"
    wide = torch.zeros(1, 8, 1, MAX_RANK + 1)
    f = partial(flash_bias_attention, backend="triton")
    from paperkit import triton_available

    if triton_available():
        assert_param_error(f, q, k, v, param="q")
        q, k, v, _, _ = qkv(B=1, N=8, H=1, d=8, R=1, dtype=torch.float32)
        assert_param_error(f, q, k, v, wide, wide, param="q_bias")


def _contiguous_strides(B, N, M, H, d, R, dtype, mask=True):
    D = pad_head(d)
    RP = pad_rank(R, dtype, D)
    return {
        "q": (N * H * D, H * D, D),
        "k": (M * H * D, H * D, D),
        "q_bias": (0, H * RP, RP),  # factors given once for the batch: batch stride 0
        "k_bias": (0, H * RP, RP),
        "dq_bias": (N * H * RP, H * RP, RP),
        "dk_bias": (M * H * RP, H * RP, RP),
        "mask": (H * N * M, N * M, M, 1) if mask else None,
    }


@pytest.mark.parametrize("dtype", TRITON_DTYPES)
@pytest.mark.parametrize("kernel", KERNELS)
def test_offsets_past_int32_are_64_bit(kernel, dtype):
    """q of B·N·H·d = 2³¹ + 2²⁵ elements (B = 2, N = 2²⁰ + 2¹⁴, H = 8, d = 128) and a dense
    mask of B·H·N·M ≥ 2³¹ (N = M = 2¹³ + 1, B·H = 90,000 > 65,535): the largest base offset of
    the last program passes int32 (the kernels form it in int64; int32 arithmetic would wrap to
    a negative address), the tile offsets stay within int32 and the one-axis grid within 2³¹ - 1.
    """
    cases = [
        dict(B=2, N=2**20 + 2**14, M=2**20 + 2**14, H=8, d=128, R=16),
        dict(B=300, N=2**13 + 1, M=2**13 + 1, H=300, d=64, R=2),
    ]
    for shape in cases:
        strides = _contiguous_strides(*(shape[a] for a in ("B", "N", "M", "H", "d", "R")), dtype)
        found = largest_offsets(kernel, dtype, shape, strides)
        assert found["base"] > INT32_MAX
        wrapped = np.array([found["base"] % 2**32]).astype(np.uint32).view(np.int32)[0]
        assert wrapped != found["base"]  # what an int32 product would have addressed
        assert found["tile"] <= INT32_MAX
        assert found["programs"] <= 2**31 - 1
        B, H, N = shape["B"], shape["H"], shape["N"]
        if kernel != "flash_bias_bwd_dkdv":  # programs: query blocks x B x H, block fastest
            D = pad_head(shape["d"])
            block = launch_config(kernel, dtype, D, pad_rank(shape["R"], dtype, D))
            assert found["programs"] == -(-N // block["BLOCK_N"]) * B * H
    assert cases[1]["B"] * cases[1]["H"] > 65535  # two-axis grids could not launch this
    assert triton_shape_error(dtype, 128, 16, 2, 2**20 + 2**14, 2**20 + 2**14, 8) is None


def test_grids_and_tile_offsets_past_their_limits_are_refused():
    """The one shape class the kernels cannot address: more than 2³¹ - 1 programs, or a tile
    offset (BLOCK · row stride) past int32."""
    assert triton_shape_error("bfloat16", 64, 2, 2**16, 2**16, 2**16, 2**16) is not None
    assert triton_shape_error("bfloat16", 64, 2, 1, 64, 2**28, 1) is not None  # mask row stride


def _stride_products(fn):
    """Every ``x * s_...`` product in a kernel's source, as (left operand source, stride)."""
    tree = ast.parse(inspect.getsource(fn.fn))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
            for a, b in ((node.left, node.right), (node.right, node.left)):
                if isinstance(b, ast.Name) and b.id.startswith("s") and "_" in b.id:
                    found.append((ast.unparse(a), b.id))
    return found


@requires_triton
def test_kernels_multiply_strides_only_by_int64_indices_or_tile_offsets():
    """In the kernel sources a stride meets either an int64 index (b, h, or a block start cast
    with tl.cast(..., tl.int64)) or an in-tile index (tl.arange of a block), never a program id
    in int32; and the row statistics are addressed from pid_bh cast to int64."""
    from flashbias.kernels import triton_jit

    int64 = {"b", "h", "tl.cast(first, tl.int64)", "tl.cast(start, tl.int64)"}
    in_tile = {"r[:, None]", "c[:, None]", "c[None, :]"}
    for fn in (triton_jit._base, *(getattr(triton_jit, k) for k in KERNELS), triton_jit._scores):
        for left, stride in _stride_products(fn):
            assert left in int64 | in_tile, (fn.__name__, left, stride)
    program = inspect.getsource(triton_jit._program.fn)
    assert "b = (pid_bh // H).to(tl.int64)" in program
    assert "h = (pid_bh % H).to(tl.int64)" in program
    for kernel in KERNELS:
        source = inspect.getsource(getattr(triton_jit, kernel).fn)
        assert "pid_bh.to(tl.int64) * N" in source
        assert "tl.program_id(1)" not in source and "tl.program_id(2)" not in source
    assert launch.GRID_MAX == 2**31 - 1
