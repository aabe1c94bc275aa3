"""The analytic renderer (ground truth of the reproduction)."""

import numpy as np
import torch

from st360d import Scene, render_room
from st360d.geometry import erp_rays


def _empty(a=2.0):
    return Scene(
        room=np.array([[-a, -a, -a], [a, a, a]]),
        boxes=np.zeros((0, 2, 3)),
        spheres=np.zeros((0, 4)),
        colors=np.ones((1, 3)),
        light=np.array([0, 1.0, 0]),
    )


def test_empty_cube_room_distances():
    scene = _empty(2.0)
    d = np.array([[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1.0]])
    t, n, obj = scene.cast(d)
    assert np.allclose(t, 2.0) and np.all(obj == 0)
    assert np.allclose(n, -d)
    diag = np.array([[1, 1, 1]]) / np.sqrt(3)
    assert np.allclose(scene.cast(diag)[0], 2 * np.sqrt(3))  # the corner


def test_sphere_hits_match_the_closed_form():
    c, r = np.array([0.0, 0.0, 1.5]), 0.5
    scene = Scene(
        room=np.array([[-3.0] * 3, [3.0] * 3]),
        boxes=np.zeros((0, 2, 3)),
        spheres=np.r_[c, r][None],
        colors=np.ones((2, 3)),
        light=np.array([0, 1.0, 0]),
    )
    g = np.random.default_rng(0)
    ang = g.uniform(0, 0.3, 50)  # within the sphere's angular radius asin(1/3) = 0.34
    phi = g.uniform(0, 2 * np.pi, 50)
    d = np.stack([np.sin(ang) * np.cos(phi), np.sin(ang) * np.sin(phi), np.cos(ang)], 1)
    t, _, obj = scene.cast(d)
    # |t d - c|² = r²  with t the smaller root: t = d·c - sqrt((d·c)² - |c|² + r²)
    dc = d @ c
    assert np.allclose(t, dc - np.sqrt(dc**2 - c @ c + r * r)) and np.all(obj == 1)


def test_render_room_is_deterministic_and_consistent():
    a, b = render_room(3, (32, 64)), render_room(3, (32, 64))
    assert torch.equal(a["rgb"], b["rgb"]) and torch.equal(a["range"], b["range"])
    assert a["rgb"].shape == (32, 64, 3) and a["range"].shape == (32, 64)
    assert float(a["rgb"].min()) >= 0 and float(a["rgb"].max()) <= 1
    # the range map is the cast along the pixel rays
    t, _, _ = a["scene"].cast(erp_rays(32, 64).reshape(-1, 3).numpy())
    assert np.allclose(a["range"].numpy().reshape(-1), t, rtol=1e-6)
    assert not torch.equal(a["range"], render_room(4, (32, 64))["range"])
    # the camera is inside: every range positive and below the room diagonal
    room = a["scene"].room
    assert float(a["range"].min()) > 0
    assert float(a["range"].max()) <= np.linalg.norm(np.abs(room).max(0)) + 1e-5
