"""Spherical-uniform sampling and latitude-guided scanning (Sec. 3)."""

import numpy as np
import pytest
import torch

from st360d import lgs_order, perspective_to_erp, sus_views
from st360d.sampling import latlon_grid_views


@pytest.mark.parametrize(("fov", "count"), [(90.0, 22), (60.0, 48), (120.0, 14)])
def test_view_counts(fov, count):
    # 90°: rings 0, ±45, ±90 with 8, 6, 1 views; 60°: 12 + 2·11 + 2·6 + 2·1; 120°: 6 + 2·3 + 2·1
    assert len(sus_views(fov)) == count


def test_ring_tolerance_keeps_twelve_cos_sixty_at_six():
    v = sus_views(60.0)
    assert int(np.sum(np.isclose(v[:, 1], 60.0))) == 6  # 12 cos 60° = 6.000000000000001


@pytest.mark.parametrize("fov", [60.0, 90.0, 120.0])
def test_every_erp_pixel_is_covered(fov):
    views = torch.from_numpy(sus_views(fov))
    _, mask = perspective_to_erp(
        torch.ones(len(views), 8, 8, dtype=torch.float64), views, fov, (256, 512)
    )
    assert bool(mask.all())


@pytest.mark.parametrize("fov", [60.0, 90.0])
def test_ring_sizes_fall_with_latitude_and_beat_the_grid(fov):
    v = sus_views(fov)
    lats = np.unique(np.abs(v[:, 1]))
    sizes = [int(np.sum(np.isclose(np.abs(v[:, 1]), a))) // (1 if a == 0 else 2) for a in lats]
    assert sizes == sorted(sizes, reverse=True)
    grid = latlon_grid_views(fov)
    assert len(v) < len(grid)  # 22 < 26 at 90°, 48 < 74 at 60°


def test_longitudes_are_even_and_odd_rings_offset():
    v = sus_views(90.0)
    eq = np.sort(v[v[:, 1] == 0, 0])
    assert np.allclose(np.diff(eq), 45.0) and np.isclose(eq[0], -157.5)
    ring = np.sort(v[v[:, 1] == 45, 0])
    assert np.allclose(np.diff(ring), 60.0) and np.isclose(ring[0], -180.0)


@pytest.mark.parametrize("fov", [60.0, 90.0, 120.0])
def test_lgs_clips(fov):
    v = sus_views(fov)
    clips = lgs_order(v, "lgs")
    assert len(clips) == 2
    equator = np.flatnonzero(v[:, 1] == 0)
    for clip in clips:
        n = len(equator)
        assert sorted(clip[:n].tolist()) == sorted(equator.tolist())
        assert np.all(np.diff(v[clip[:n], 0]) > 0)  # the equator sweep in increasing longitude
        assert np.all(np.diff(np.abs(v[clip, 1])) >= 0)  # |lat| non-decreasing
    both = np.concatenate(clips)
    assert set(both.tolist()) == set(range(len(v)))
    values, counts = np.unique(both, return_counts=True)
    assert set(values[counts > 1].tolist()) == set(equator.tolist())
    # each clip goes to one hemisphere
    assert np.all(v[clips[0], 1] >= 0) and np.all(v[clips[1], 1] <= 0)


def test_lgs_ring_starts_near_the_previous_frame():
    v = sus_views(90.0)
    clip = lgs_order(v, "lgs")[0]
    lats = v[clip, 1]
    for t in np.flatnonzero(np.diff(lats) != 0) + 1:
        prev, ring = v[clip[t - 1], 0], v[clip][lats == lats[t]][:, 0]
        gap = np.abs((ring - prev + 180) % 360 - 180).min()
        assert np.isclose(abs((v[clip[t], 0] - prev + 180) % 360 - 180), gap)


def test_ablation_orders():
    v = sus_views(90.0)
    single = lgs_order(v, "lgs_single")
    assert len(single) == 1 and sorted(single[0].tolist()) == list(range(22))
    ring_lats = [v[i, 1] for i in single[0]]
    firsts = [ring_lats[0]] + [
        b for a, b in zip(ring_lats[:-1], ring_lats[1:], strict=True) if a != b
    ]
    assert firsts == [0.0, 45.0, -45.0, 90.0, -90.0]
    raster = lgs_order(v, "raster")[0]
    assert np.all(np.diff(v[raster, 1]) <= 0)
    r1, r2 = lgs_order(v, "random", seed=1)[0], lgs_order(v, "random", seed=1)[0]
    assert np.array_equal(r1, r2) and sorted(r1.tolist()) == list(range(22))
    assert not np.array_equal(r1, lgs_order(v, "random", seed=2)[0])
