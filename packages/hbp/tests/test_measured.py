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


@pytest.mark.slow  # torchrun and two gloo processes importing torch: ~20 s of CPU
def test_measured_epochs_run_through_torchrun():
    """``measured_epochs`` launches ``torchrun --standalone -m hbp.train`` (env:// rendezvous):
    every plan trains every sample once, the ranks' steps line up and the loss is finite."""
    from hbp import measured_epochs

    out = measured_epochs(world_size=2, n_samples=60, pack_len=64, accum=1)
    assert out["world_size"] == 2 and out["tokens"] == int(scaled_lengths(60, 64).sum())
    for plan in PLANS:
        row = out["plans"][plan]
        steps = plan_steps(plan, scaled_lengths(60, 64), 64, 2, 1, CostModel.preset("8b"))
        assert row["steps"] == len(steps)
        assert 0 <= row["mean ABR (measured)"] < 1
        assert np.isfinite(row["mean step loss"]) and row["epoch s"] > 0


def test_train_entry_point_alone(tmp_path):
    """``python -m hbp.train`` without torchrun trains the three plans in one process."""
    import json

    from hbp.train import main

    out = tmp_path / "epochs.json"
    assert main(["--n-samples", "12", "--pack-len", "32", "--accum", "1", "--out", str(out)]) == 0
    summary = json.loads(out.read_text())
    assert summary["world_size"] == 1 and set(summary["plans"]) == set(PLANS)
    assert all(row["mean ABR (measured)"] == 0 for row in summary["plans"].values())
