"""The synthetic anatomy scenes (the reproduction's default data)."""

import numpy as np
import torch

from zrdetr.data import make_anatomy_scenes
from zrdetr.relation import relative_geometry


def test_shapes_seeded_and_ranges():
    a = make_anatomy_scenes(8, image_size=32, n_classes=4, seed=3)
    b = make_anatomy_scenes(8, image_size=32, n_classes=4, seed=3)
    assert a["images"].shape == (8, 1, 32, 32) and a["boxes"].shape == (8, 4, 4)
    for k in a:
        assert torch.equal(a[k], b[k])
    assert a["images"].min() >= 0 and a["images"].max() <= 1
    p = a["present"]
    assert (a["boxes"][p] >= 0).all() and (a["boxes"][p][:, :2] <= 1).all()
    assert (a["truncated"] <= p).all()  # truncated implies present


def test_zoom_scales_boxes_and_keeps_relative_geometry():
    """Untruncated boxes: size grows with zoom, the relative geometry does not (Sec. 3)."""
    small = make_anatomy_scenes(400, zoom_range=(0.6, 0.6), seed=1)
    large = make_anatomy_scenes(400, zoom_range=(1.8, 1.8), seed=1)
    ratio = large["boxes"][..., 2:].mean() / small["boxes"][~small["truncated"]][:, 2:].mean()
    assert ratio > 2.0
    assert large["truncated"].float().mean() > small["truncated"].float().mean()
    r_s, r_l = (_mean_geometry(d) for d in (small, large))
    # not exact: the frame keeps the layouts that fit (a selection), so allow 0.2 on ~1.3
    assert np.nanmax(np.abs(r_s - r_l)) < 0.2


def _mean_geometry(d):
    """Mean r_kl over images where both k and l are present and untruncated."""
    ok = d["present"] & ~d["truncated"]
    pair = (ok[:, :, None] & ok[:, None, :]).double()[..., None]
    r = relative_geometry(d["boxes"].double().clamp(min=1e-6))
    return ((r * pair).sum(0) / pair.sum(0)).numpy()


def test_target_domain_changes_appearance_not_layout():
    s = make_anatomy_scenes(50, domain="source", seed=2)
    t = make_anatomy_scenes(50, domain="target", seed=2)
    assert torch.equal(s["boxes"], t["boxes"])
    assert (s["images"] - t["images"]).abs().mean() > 0.05
