import torch

from paperkit.testing import check_state_dict_roundtrip
from sama import SpatioTemporalContextAggregator

B, T, h, w, D = 2, 3, 4, 4, 12


def _model():
    torch.manual_seed(0)
    return SpatioTemporalContextAggregator(D, d_model=32, n_spatial=8, n_temporal=6, n_layers=2)


def _inputs(R=3):
    g = torch.Generator().manual_seed(1)
    feats = torch.randn(B, T, h * w, D, generator=g)
    text = torch.randn(B, 5, 32, generator=g)
    regions = torch.rand(B, R, T, h, w, generator=g) < 0.4
    return feats, text, regions


def test_output_shape():
    model = _model().eval()
    feats, text, regions = _inputs()
    assert model(feats, text, regions).shape == (B, 6 + 3, 32)
    assert model(feats).shape == (B, 6, 32)


def test_region_token_ignores_features_outside_its_mask():
    model = _model().eval()
    feats, text, regions = _inputs(1)
    out = model(feats, text, regions)
    inside = regions[:, 0].reshape(B, T, h * w, 1)
    changed = torch.where(inside, feats, torch.randn_like(feats) * 5)
    out2 = model(changed, text, regions)
    torch.testing.assert_close(out2[:, -1], out[:, -1], rtol=1e-5, atol=1e-6)
    assert not torch.allclose(out2[:, :6], out[:, :6])  # the context tokens do see the change


def test_permuting_regions_permutes_tokens():
    model = _model().eval()
    feats, text, regions = _inputs(3)
    perm = torch.tensor([2, 0, 1])
    a = model(feats, text, regions)[:, 6:]
    b = model(feats, text, regions[:, perm])[:, 6:]
    torch.testing.assert_close(b, a[:, perm], rtol=1e-5, atol=1e-6)


def test_empty_mask_gives_finite_tokens():
    model = _model().eval()
    feats, text, regions = _inputs(2)
    regions[:, 1] = False
    out = model(feats, text, regions)
    assert torch.isfinite(out).all()
    # the empty region's token is the shape MLP of an all-zero mask plus the projection of 0
    expected = model.region_proj(torch.zeros(32)) + model.shape_mlp(torch.zeros(112 * 112))
    torch.testing.assert_close(out[:, -1], expected.expand(B, -1), rtol=1e-5, atol=1e-6)


def test_autocast_and_state_dict():
    model = _model().eval()
    feats, text, regions = _inputs()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = model(feats, text, regions)
    assert torch.isfinite(out.float()).all() and out.shape == (B, 9, 32)
    check_state_dict_roundtrip(_model, feats)
