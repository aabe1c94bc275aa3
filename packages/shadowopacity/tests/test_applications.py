import torch

from shadowopacity.applications import edit_shadow, remove_predicted_shadow
from shadowopacity.data import make_shadow_scenes


def test_removal_with_true_alpha_beats_the_shadowed_image():
    d = make_shadow_scenes(16, 32, seed=0)
    removed, rho = remove_predicted_shadow(d["image"], d["alpha"])
    err_removed = (removed.clamp(0, 1) - d["shadow_free"]).pow(2).mean()
    err_input = (d["image"] - d["shadow_free"]).pow(2).mean()
    assert err_removed < 0.25 * err_input


def test_edit_scale_zero_removes_and_one_keeps():
    d = make_shadow_scenes(4, 32, seed=1)
    same, a = edit_shadow(d["image"], d["alpha"], 1.0, image_free=d["shadow_free"])
    assert torch.equal(same, d["image"]) and torch.equal(a, d["alpha"])
    # s = 1 through the renderer (gamma barely off 1) with rho fitted from (I, I_f)
    near, _ = edit_shadow(d["image"], d["alpha"], 1.0, 1.0 + 1e-9, image_free=d["shadow_free"])
    assert (near - d["image"]).abs().max() < 1e-4
    darker, a2 = edit_shadow(d["image"], d["alpha"], 1.5, rho=d["rho"])
    assert (a2 >= d["alpha"]).all() and (darker <= d["image"] + 1e-6).all()
    gone, a0 = edit_shadow(d["image"], d["alpha"], 0.0, image_free=d["shadow_free"])
    assert a0.max() == 0 and torch.allclose(gone, d["shadow_free"])
