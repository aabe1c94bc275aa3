import numpy as np
import torch

from shadowopacity.data import binarize_dataset, make_shadow_scenes, polygon_mask


def test_same_seed_same_scenes():
    a, b = make_shadow_scenes(4, 32, seed=7), make_shadow_scenes(4, 32, seed=7)
    assert all(torch.equal(a[k], b[k]) for k in a)
    c = make_shadow_scenes(4, 32, seed=8)
    assert not torch.equal(a["image"], c["image"])


def test_image_follows_the_model_and_ranges():
    d = make_shadow_scenes(6, 32, seed=0)
    expect = d["shadow_free"] * (1 - d["alpha"] * (1 - d["rho"][:, :, None, None]))
    assert torch.equal(d["image"], expect)
    assert d["alpha"].min() >= 0 and d["alpha"].max() <= 1
    assert ((d["alpha"] > 0.05) == (d["instance_ids"][:, None] > 0)).all()
    soft = ((d["alpha"] > 0.05) & (d["alpha"] < 0.95)).float().mean()
    assert soft > 0.02  # continuous opacity, not a binary mask


def test_point_light_square_is_the_projected_square():
    # an axis-aligned square [8, 20] x [10, 22] (x, y) translated by the light shift (3, -2)
    square = np.array([[8.0, 10.0], [20.0, 10.0], [20.0, 22.0], [8.0, 22.0]]) + [3.0, -2.0]
    mask = polygon_mask(square[None], 32)[0]
    yy, xx = np.mgrid[0:32, 0:32] + 0.5
    analytic = (xx >= 11) & (xx <= 23) & (yy >= 8) & (yy <= 20)
    assert (mask.astype(bool) == analytic).all()
    assert mask.sum() == 12 * 12  # pixel centres 11.5..22.5 on both axes


def test_point_light_hard_shadows_are_binary_without_translucency():
    d = make_shadow_scenes(8, 32, seed=2, soft=False, translucent=False)
    assert set(torch.unique(d["alpha"]).tolist()) <= {0.0, 1.0}


def test_overlaps_combine_as_one_minus_product(monkeypatch):
    import shadowopacity.data as data

    captured = {}
    real_prod = np.prod

    def spy(a, *args, **kwargs):
        if isinstance(a, np.ndarray) and a.ndim == 4:
            captured["alpha_i"] = a.copy()
        return real_prod(a, *args, **kwargs)

    monkeypatch.setattr(data.np, "prod", spy)
    d = make_shadow_scenes(20, 32, seed=4, max_occluders=3)
    alpha_i = 1 - captured["alpha_i"]  # np.prod received 1 - alpha_i
    expect = 1 - np.prod(1 - alpha_i, axis=1)
    np.testing.assert_allclose(d["alpha"][:, 0].numpy(), expect, atol=1e-6)
    overlap = ((alpha_i > 0.05).sum(axis=1) >= 2).sum()
    assert overlap > 0  # the check is not vacuous
    # the combined opacity exceeds each single one where two overlap
    assert (d["alpha"][:, 0].numpy() + 1e-6 >= alpha_i.max(axis=1)).all()


def test_translucent_umbra_below_one():
    d = make_shadow_scenes(40, 32, seed=5, soft=False, translucent=True)
    vals = torch.unique(d["alpha"])
    assert ((vals > 0.05) & (vals < 0.95)).any()


def test_binarize():
    a = torch.tensor([0.0, 0.3, 0.5, 0.51, 1.0]).view(1, 1, 1, 5)
    assert binarize_dataset(a).flatten().tolist() == [0, 0, 0, 1, 1]
