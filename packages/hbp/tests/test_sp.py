import os

import pytest
import torch
import torch.distributed as dist

from hbp.model import varlen_attention
from hbp.sp import run_sp_demo, sp_attention
from paperkit.testing import assert_close, assert_param_error


@pytest.mark.slow
@pytest.mark.parametrize("world_size", [2, 4])
def test_sp_attention_matches_one_device(world_size):
    """Gloo processes, fp64: output and gradients equal single-device varlen attention."""
    diffs = run_sp_demo(world_size)
    assert max(diffs.values()) < 1e-12, diffs


def test_sp_attention_single_process_group(tmp_path):
    dist.init_process_group(
        "gloo", init_method=f"file://{os.path.join(tmp_path, 'store')}", rank=0, world_size=1
    )
    try:
        g = torch.Generator().manual_seed(0)
        q, k, v = (torch.randn(1, 2, 12, 4, generator=g, dtype=torch.float64) for _ in range(3))
        cu = torch.tensor([0, 7, 12])
        assert_close(sp_attention(q, k, v, cu), varlen_attention(q, k, v, cu), rtol=0, atol=1e-12)
        half = [x[:, :, :6] for x in (q, k, v)]  # a chunk of 6 tokens: T = 6 on one device
        assert_param_error(sp_attention, *half, cu, param="cu_seqlens")
        assert_param_error(sp_attention, q[:, :, :6], k, v, cu, param="k")
    finally:
        dist.destroy_process_group()


def test_sp_demo_bad_world_size():
    assert_param_error(run_sp_demo, 3, param="world_size")
