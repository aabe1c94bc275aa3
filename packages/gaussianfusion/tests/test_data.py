"""The scene generator: camera geometry, fusion-relevant content, determinism."""

import math

import numpy as np
import torch

from gaussianfusion.data import COLOURS, _render_camera, make_driving_scenes
from gaussianfusion.models import GaussianFusionPlanner


def _columns_of(img, cls):
    band = img[:, 14]  # a row of the object band
    colour = np.array(COLOURS[cls])[:, None]
    return np.nonzero(np.abs(band - colour).max(0) < 0.25)[0]


def test_obstacle_ahead_is_central_and_left_is_left():
    rng = np.random.default_rng(0)
    ahead = _render_camera([(15.0, 0.0, 1.0, 1.0, 0.0, 4, 1.0)], 0.0, rng)
    cols = _columns_of(ahead, 4)
    assert cols.size > 0 and abs(cols.mean() - 63.5) < 2  # centre of 128 columns
    left = _render_camera([(0.0, 15.0, 1.0, 1.0, 0.0, 4, 1.0)], 0.0, rng)
    cols = _columns_of(left, 4)
    assert cols.size > 0 and abs(cols.mean() - 31.5) < 2  # azimuth +90 deg: a quarter in
    # the nearer of two boxes on one ray is the one seen (no depth, but occlusion)
    both = _render_camera(
        [(25.0, 0.0, 1.0, 1.0, 0.0, 4, 1.0), (10.0, 0.0, 2.2, 0.9, 0.0, 3, 1.5)], 0.0, rng
    )
    assert 63 in _columns_of(both, 3) and 63 not in _columns_of(both, 4)


def test_angular_width_shrinks_with_range_only():
    rng = np.random.default_rng(0)
    near = _columns_of(_render_camera([(8.0, 0.0, 1.0, 1.0, 0.0, 4, 1.0)], 0.0, rng), 4).size
    far = _columns_of(_render_camera([(30.0, 0.0, 1.0, 1.0, 0.0, 4, 1.0)], 0.0, rng), 4).size
    assert near > far >= 1
    assert near <= 2 * math.ceil(128 * math.atan(1 / 7) / math.pi) + 2


def test_lidar_has_geometry_but_no_class():
    s = make_driving_scenes(50, seed=1)
    occupied = s["lidar"][:, 0] > 0.5
    objects = s["bev_sem"] >= 3
    assert (occupied & objects).sum() > 0.8 * objects.sum()  # 5 % dropout, some clutter
    h_veh = s["lidar"][:, 1][(s["bev_sem"] == 3) & occupied]
    h_obs = s["lidar"][:, 1][(s["bev_sem"] == 4) & occupied]
    # heights overlap: vehicles 1.2-1.9 m, obstacles 0.8-1.8 m
    assert h_obs.max() > h_veh.min()


def test_generator_is_deterministic_under_a_seed():
    a, b = make_driving_scenes(20, seed=7), make_driving_scenes(20, seed=7)
    c = make_driving_scenes(20, seed=8)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["expert"], c["expert"])
    assert a["lidar"].shape == (20, 2, 64, 64) and a["camera"].shape == (20, 3, 32, 128)
    assert a["bev_sem"].max() <= 4 and set(a["command"].tolist()) <= {0, 1, 2}


def test_model_init_is_deterministic_under_a_seed():
    torch.manual_seed(3)
    a = GaussianFusionPlanner().state_dict()
    torch.manual_seed(3)
    b = GaussianFusionPlanner().state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
