import numpy as np
import pytest

from hbp import CostModel, plan_steps
from hbp.measured import PLANS, scaled_lengths
from paperkit.testing import assert_param_error


@pytest.mark.parametrize("plan", PLANS)
def test_every_sample_is_trained_once_per_epoch(plan):
    lengths = scaled_lengths(400, 512, seed=1)
    steps = plan_steps(plan, lengths, 512, world_size=2, accum=2, cost=CostModel.preset("8b"))
    seen = [i for step in steps for rank in step for pack in rank for i in pack]
    assert sorted(seen) == list(range(400))
    assert all(len(step) == 2 for step in steps)  # one list of packs per rank
    assert all(lengths[pack].sum() <= 512 for step in steps for rank in step for pack in rank)


def test_scaled_lengths_keep_the_heavy_tail():
    ell = scaled_lengths(5000, 1024, seed=0)
    assert ell.min() >= 4 and ell.max() <= 1024
    assert np.median(ell) < 0.05 * 1024 < ell.max()  # mostly short, a few near a full pack


def test_bad_plan():
    assert_param_error(
        plan_steps, "greedy", np.array([4, 5]), 16, 2, 1, CostModel.preset("8b"), param="plan"
    )
