import pytest

from hbp.dist import run_ddp_demo
from paperkit.testing import assert_param_error


@pytest.mark.slow
def test_ddp_demo_gloo_two_processes():
    """Real DDP (gloo, 2 processes); the default suite has the single-process
    equivalent in test_loss.py."""
    out = run_ddp_demo(world_size=2)
    assert out["max_diff_between_ranks"] == 0.0
    assert out["ave_token: packing A vs B"] < 1e-12
    assert out["ave_token: vs global token mean"] < 1e-12
    assert out["mean: packing A vs B"] > 1e-4


def test_ddp_demo_bad_world_size():
    assert_param_error(run_ddp_demo, 0, param="world_size")
