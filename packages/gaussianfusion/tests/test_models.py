"""The three planners: one interface, trainable, the semantic loss through splatting."""

import pytest
import torch

from gaussianfusion.data import make_driving_scenes
from gaussianfusion.models import (
    BEVFusionPlanner,
    FlattenFusionPlanner,
    GaussianFusionPlanner,
    sem_targets,
)

SCENES = make_driving_scenes(24, seed=11)
BATCH = {k: SCENES[k][:8] for k in ("lidar", "camera", "ego", "command", "expert", "bev_sem")}


@pytest.mark.parametrize(
    "make",
    # one stage: with several, each stage starts from the previous stage's trajectories with
    # the gradient stopped (Sec. 3.4), so the summed loss is not what its gradient descends
    [lambda: GaussianFusionPlanner(n_stages=1), BEVFusionPlanner, FlattenFusionPlanner],
    ids=["gaussianfusion", "bev", "flatten"],
)
def test_planner_trains_on_one_batch(make):
    # one small gradient step lowers the loss on the batch (a plain descent step: the first
    # torch.optim step would import torch._dynamo, tens of seconds on a loaded machine)
    torch.manual_seed(0)
    model = make()
    if hasattr(model, "set_anchors"):
        model.set_anchors(SCENES["expert"])
    out = model(BATCH)
    before, _ = model.loss(BATCH, out)
    before.backward()
    with torch.no_grad():
        for p in model.parameters():
            if p.grad is not None:
                p -= 1e-4 * p.grad
        after, _ = model.loss(BATCH, model(BATCH))
    assert out["traj"].shape == (8, 8, 2)
    assert after.item() < before.item()


def test_semantic_loss_reaches_the_gaussian_properties():
    torch.manual_seed(0)
    model = GaussianFusionPlanner()
    out = model(BATCH)
    probs = model.semantic_map(out["gaussians"])
    assert probs.shape == (8, 5, 32, 32)
    assert torch.allclose(probs.sum(1), torch.ones(8, 32, 32), atol=1e-5)
    loss, parts = model.loss(BATCH, out)
    loss.backward()
    refine = model.encoder.layers[-1].refine[-1].weight.grad
    assert refine is not None and float(refine.abs().sum()) > 0


def test_majority_vote_downsampling():
    sem = torch.tensor([[[3, 3, 1, 2], [3, 0, 2, 2], [0, 0, 4, 4], [0, 1, 4, 1]]])
    assert sem_targets(sem, (2, 2)).tolist() == [[[3, 2], [0, 4]]]


@pytest.mark.slow  # the first FlopCounterMode imports torch._dynamo (tens of seconds here)
def test_gaussianfusion_costs_fewer_flops_than_dense_bev():
    from torch.utils.flop_counter import FlopCounterMode

    one = {k: v[:1] for k, v in BATCH.items()}
    flops = {}
    for make in (GaussianFusionPlanner, BEVFusionPlanner):
        model = make()
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            model(one)
        flops[make.__name__] = counter.get_total_flops()
    assert flops["GaussianFusionPlanner"] < 0.6 * flops["BEVFusionPlanner"]


def test_planners_run_under_autocast():
    model = GaussianFusionPlanner()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(BATCH)
    assert torch.isfinite(out["traj"].float()).all()
