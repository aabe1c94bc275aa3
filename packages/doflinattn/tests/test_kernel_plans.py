"""The dispatch policy of the Triton kernels, without a GPU: every launch configuration the
dispatchers can pick is one the static kernel gate compiles (``doflinattn.kernels.offline``),
shapes outside it go to the reference path, and every offset the kernels form for tensors of
2^31+ elements is computed in 64 bits with grid axes within CUDA's limits."""

import inspect
import re

import pytest
import torch

from doflinattn import HedgehogFeatureMap, LinearAttention
from doflinattn.kernels import (
    BLOCK_E,
    GRID_X_MAX,
    GRID_YZ_MAX,
    feature_plan,
    hedgehog_plan,
    max_offsets,
)
from doflinattn.kernels.offline import feature_blocks, hedgehog_blocks
from paperkit.testing import requires_triton

DTYPES = (torch.float32, torch.float16, torch.bfloat16)
INT32_MAX = 2**31 - 1


def _blocks(plan):
    return {k: v for k, v in plan.items() if k != "grid"}


def test_every_feature_plan_is_gated():
    gated, gated_back = feature_blocks(), feature_blocks(backward=True)
    taken = 0
    for dtype in (*DTYPES, torch.float64):
        for m in range(1, 200):
            for e in (1, 15, 16, 17, 64, 200):
                plan = feature_plan(dtype, m, e, 6)
                back = feature_plan(dtype, m, e, 6, backward=True)
                if plan is None:
                    assert back is None
                    assert dtype == torch.float64 or m > 128
                    continue
                taken += 1
                assert _blocks(plan) in gated, (dtype, m, e)
                assert _blocks(back) in gated_back, (dtype, m, e)
                assert plan["grid"] == back["grid"] == (6, -(-e // BLOCK_E))
    assert taken == 3 * 128 * 6


def test_every_hedgehog_plan_is_gated():
    gated = hedgehog_blocks()
    for dtype in DTYPES:
        for d in (*range(1, 140, 7), 32, 64, 128):
            for half in (*range(1, 80, 7), 32, 64):
                plan = hedgehog_plan(dtype, d, half, 40, 3)
                if plan is None:
                    assert d > 64 or half > 64 or (d > 32 and half > 32)
                    continue
                assert _blocks(plan) in gated, (dtype, d, half)
                # its backward runs the feature kernels on fp32 features of width 2 * half
                back = feature_plan(torch.float32, 2 * half, 40, 3, backward=True)
                assert _blocks(back) in feature_blocks(backward=True)


@requires_triton
def test_gate_lists_each_block_for_each_kernel_and_dtype():
    from doflinattn.kernels.offline import configurations

    configs = configurations()

    def found(kernel, dtype, blocks):
        return [
            c
            for c in configs
            if c.label["kernel"] == kernel
            and c.label["dtype"] == dtype
            and blocks.items() <= c.constexprs.items()
        ]

    for dtype in ("fp32", "fp16", "bf16"):
        for kernel, backward in (("causal_fwd", False), ("causal_bwd", True)):
            for plan in feature_blocks(backward):
                hits = found(kernel, dtype, {"BM": plan["BM"], "BE": plan["BE"], "BT": plan["BT"]})
                assert [c.num_warps for c in hits] == [plan["num_warps"]], (kernel, plan)
        for plan in hedgehog_blocks():
            hits = found("causal_fwd_hedgehog", dtype, {"BD": plan["BD"], "BH": plan["BH"]})
            assert [c.num_warps for c in hits] == [plan["num_warps"]], plan
    assert len(configs) == 3 * (len(feature_blocks()) * 2 + len(hedgehog_blocks()))


@requires_triton
@pytest.mark.interpret
def test_layer_refuses_or_reroutes_shapes_outside_the_gate():
    q = k = torch.randn(1, 1, 8, 8)
    v = torch.randn(1, 1, 8, 4)
    wide = HedgehogFeatureMap(8, 144)  # m = 144 > 128: no gated configuration
    small = HedgehogFeatureMap(8, 16)
    with pytest.raises(ValueError, match="'backend'"):
        LinearAttention(wide, causal=True, backend="triton")(q, k, v)
    ref = LinearAttention(wide, causal=True, backend="reference")(q, k, v)
    auto = LinearAttention(wide, causal=True, backend="auto")(q, k, v)
    assert torch.equal(auto, ref)
    with pytest.raises(ValueError, match="'backend'"):  # fp64: not compiled
        LinearAttention(small.double(), causal=True, backend="triton")(
            q.double(), k.double(), v.double()
        )


def test_offsets_of_a_2_to_31_shape_are_64_bit():
    # B*H*N*m = 2^31 + 2^26 elements of features, values of the same size
    B, H, N, m, e, d = 33, 32, 32768, 64, 64, 64
    assert B * H * N * m > INT32_MAX
    off = max_offsets(B, H, N, m, e, d)
    # the largest offset is the last element of each buffer (no offset is out of bounds) ...
    assert off["features"] == B * H * N * m - 1
    assert off["values"] == B * H * N * e - 1
    assert off["hedgehog_inputs"] == B * H * N * d - 1
    assert off["den"] == B * H * N - 1
    assert off["keep"] == B * N - 1
    assert off["feature_shares"] == -(-e // BLOCK_E) * B * H * N * m - 1
    # ... beyond int32 (a 32-bit product would wrap) and within int64
    for name in ("features", "values", "hedgehog_inputs", "feature_shares"):
        assert INT32_MAX < off[name] < 2**63 - 1, name
    assert torch.tensor(off["feature_shares"], dtype=torch.int64).item() == off["feature_shares"]
    wrapped = torch.tensor(off["features"], dtype=torch.int64).to(torch.int32).item()
    assert wrapped != off["features"]  # what int32 offsets would have addressed


def test_max_offsets_match_the_buffers_on_a_small_shape():
    B, H, N, m, e, d = 2, 3, 20, 12, 40, 8
    off = max_offsets(B, H, N, m, e, d)
    mp = 16
    assert off["features"] == torch.zeros(B, H, N, mp).numel() - 1
    assert off["values"] == torch.zeros(B, H, N, e).numel() - 1
    assert off["feature_shares"] == torch.zeros(3, B, H, N, mp).numel() - 1


def test_kernels_cast_every_program_id_to_int64_before_use():
    from doflinattn.kernels import causal_jit

    src = inspect.getsource(causal_jit)
    calls = re.findall(r"tl\.(?:program_id|num_programs)\(\d\)(\.to\(tl\.int64\))?", src)
    assert len(calls) >= 7
    assert all(calls), "a program id used without the int64 cast"


def test_grid_axes_stay_within_cuda_limits():
    assert feature_plan(torch.bfloat16, 64, 64, GRID_X_MAX) is not None
    assert feature_plan(torch.bfloat16, 64, 64, GRID_X_MAX + 1) is None
    assert feature_plan(torch.bfloat16, 64, BLOCK_E * GRID_YZ_MAX, 1)["grid"][1] == GRID_YZ_MAX
    assert feature_plan(torch.bfloat16, 64, BLOCK_E * GRID_YZ_MAX + 1, 1) is None
    assert hedgehog_plan(torch.bfloat16, 64, 32, 64, GRID_X_MAX + 1) is None


@requires_triton
@pytest.mark.interpret
@pytest.mark.slow
def test_fused_prologue_outside_the_gate_runs_on_features():
    """d = 72: the fused hedgehog kernel does not take it (no gated block), the feature kernel
    does; same result as the reference."""
    big_d = HedgehogFeatureMap(72, 16)
    x = torch.randn(3, 1, 1, 8, 72)
    assert hedgehog_plan(torch.float32, 72, 8, 72, 1) is None
    fused = LinearAttention(big_d, causal=True, backend="triton", fused_prologue=True)
    ref = LinearAttention(big_d, causal=True, backend="reference")
    torch.testing.assert_close(fused(x[0], x[1], x[2]), ref(x[0], x[1], x[2]))
