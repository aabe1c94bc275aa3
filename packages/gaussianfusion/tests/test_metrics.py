"""Planning metrics and the PDM score (NAVSIM weights, paper Sec. 4.1)."""

import pytest
import torch

from gaussianfusion.data import make_driving_scenes
from gaussianfusion.metrics import ade, collision_rate, fde, mini_pdms, offroad_rate, scene_scores


def test_ade_fde_hand_example():
    pred = torch.tensor([[[0.0, 0.0], [3.0, 4.0]]])
    target = torch.tensor([[[0.0, 1.0], [0.0, 0.0]]])
    assert ade(pred, target).item() == pytest.approx((1.0 + 5.0) / 2)
    assert fde(pred, target).item() == pytest.approx(5.0)


def _scene(b=1):
    drivable = torch.zeros(b, 64, 64, dtype=torch.bool)
    drivable[:, :, 26:38] = True  # |y| <= 6 m
    t = 0.5 * torch.arange(1, 9)
    expert = torch.stack([5.0 * t, torch.zeros(8)], -1).expand(b, 8, 2)
    far = torch.tensor([1e4, 1e4, 0.0, 0.0, 0.0])
    return {
        "obstacles": far.expand(b, 1, 5).clone(),
        "drivable": drivable,
        "expert": expert.clone(),
        "ego": torch.tensor([[5.0, 0, 0, 0]]).expand(b, 4),
        "extent": torch.tensor(32.0),
    }


def test_trajectory_through_a_box_scores_zero():
    scene = _scene()
    scene["obstacles"][0, 0] = torch.tensor([10.0, 0.0, 1.0, 1.0, 0.0])
    traj = scene["expert"]
    assert collision_rate(traj, scene["obstacles"]).item() == 1.0
    assert mini_pdms(traj, scene).item() == 0.0
    # a moving box that keeps ahead is no collision
    scene["obstacles"][0, 0] = torch.tensor([10.0, 0.0, 1.0, 1.0, 8.0])
    assert collision_rate(traj, scene["obstacles"]).item() == 0.0


def test_perfect_and_partial_scores():
    scene = _scene()
    assert mini_pdms(scene["expert"], scene).item() == pytest.approx(1.0)
    half = scene["expert"] * torch.tensor([0.5, 1.0])  # half the progress, sudden braking
    sc = scene_scores(
        half, scene["obstacles"], scene["drivable"], 32.0, scene["expert"], scene["ego"][:, 0]
    )
    assert sc["ep"].item() == pytest.approx(0.5)
    assert sc["c"].item() == 0.0  # speed halves within 0.5 s: 5 m/s^2 > 4.89
    assert mini_pdms(half, scene).item() == pytest.approx((5 * 0.5 + 5) / 12)


def test_offroad():
    scene = _scene()
    swerve = scene["expert"] + torch.tensor([0.0, 8.0])
    assert offroad_rate(swerve, scene["drivable"]).item() == 1.0
    assert offroad_rate(scene["expert"], scene["drivable"]).item() == 0.0
    assert mini_pdms(swerve, scene).item() == 0.0


def test_expert_is_sound_on_every_generated_scene():
    s = make_driving_scenes(150, seed=3)
    sc = scene_scores(s["expert"], s["obstacles"], s["drivable"], 32.0, s["expert"], s["ego"][:, 0])
    assert bool((sc["nc"] == 1).all()) and bool((sc["dac"] == 1).all())
    # and the task is not trivial: driving straight on at constant speed collides often
    t = 0.5 * torch.arange(1, 9)
    cv = torch.stack([s["ego"][:, :1] * t, torch.zeros(150, 8)], -1)
    assert collision_rate(cv, s["obstacles"]).mean().item() > 0.1
