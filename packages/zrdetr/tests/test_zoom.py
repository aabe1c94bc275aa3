"""The zoom embedding, FiLM and regressor (paper Sec. 3, zoom embedding)."""

import math

import pytest
import torch

from paperkit.testing import check_state_dict_roundtrip
from zrdetr.zoom import BoxZoomEstimator, ZoomEmbedding, ZoomFiLM, ZoomRegressor


def test_embedding_deterministic_finite_and_zoom_sensitive():
    torch.manual_seed(0)
    emb = ZoomEmbedding(32)
    z = torch.tensor([1.0, 1.1, 0.5, 2.0])
    e1, e2 = emb(z), emb(z)
    assert e1.shape == (4, 32)
    assert torch.equal(e1, e2)
    assert torch.isfinite(e1).all()
    assert (e1[0] - e1[1]).abs().max() > 1e-3  # zoom 1.0 vs 1.1 differ


@pytest.mark.parametrize("bad", [0.0, -1.0, float("nan")])
def test_embedding_refuses_nonpositive_or_nan_zoom(bad):
    emb = ZoomEmbedding(16)
    with pytest.raises(ValueError, match="'zoom'"):
        emb(torch.tensor([1.0, bad]))


def test_film_is_identity_when_fresh_and_learns_a_modulation():
    film = ZoomFiLM(16)
    tokens, e = torch.randn(3, 5, 16), torch.randn(3, 16)
    assert torch.equal(film(tokens, e), tokens)
    with torch.no_grad():
        film.proj.weight.normal_()
    assert not torch.allclose(film(tokens, e), tokens)


def test_regressor_shape_and_state_dict():
    reg = ZoomRegressor(16)
    x = torch.randn(2, 7, 16)
    assert reg(x).shape == (2,)
    check_state_dict_roundtrip(lambda: ZoomRegressor(16), x)


def test_embedding_features_have_no_high_frequency():
    # |phi(a) - phi(b)| <= sqrt(1 + sum_j w_j^2) |log a - log b|: no feature wraps around, so
    # the embedding can extrapolate past the training zoom range (a lookup-table embedding with
    # frequencies up to ~570 rad per unit of log z fails this by orders of magnitude)
    emb = ZoomEmbedding(8)
    lip = (1 + emb.freqs.pow(2).sum()).sqrt()
    a = torch.linspace(-1.5, 1.5, 61, dtype=torch.float32)
    b = a + 0.05
    dist = (emb.features(a) - emb.features(b)).norm(dim=-1)
    assert (dist <= lip * 0.05 * (1 + 1e-5)).all()
    assert dist.min() > 0.04  # and every step of log z moves the features (the linear term)


def test_box_zoom_estimator_is_zoom_equivariant_and_drops_cut_boxes():
    torch.manual_seed(0)
    est = BoxZoomEstimator(3)
    with torch.no_grad():
        est.offset.copy_(torch.tensor([-2.0, -1.7, -1.9]))
    boxes = torch.cat([0.5 + 0.1 * torch.randn(2, 5, 2), 0.05 + 0.05 * torch.rand(2, 5, 2)], -1)
    probs = torch.softmax(torch.randn(2, 5, 3), -1)
    base = est(boxes, probs)
    for z in (0.8, 1.3):  # zoom about the frame centre: every box scales by z
        zoomed = torch.cat([0.5 + z * (boxes[..., :2] - 0.5), z * boxes[..., 2:]], -1)
        assert torch.allclose(est(zoomed, probs) - base, torch.full((2,), math.log(z)), atol=1e-4)
    cut = boxes.clone()
    cut[0, 0] = torch.tensor([0.02, 0.5, 0.04, 0.2])  # touches the left edge: no weight
    probs2 = probs.clone()
    probs2[0, 0] = torch.tensor([100.0, 0.0, 0.0])
    keep = torch.ones(5, dtype=torch.bool)
    keep[0] = False
    assert torch.allclose(est(cut, probs2)[0], est(cut[:, keep], probs[:, keep])[0], atol=1e-6)


def test_box_zoom_estimator_loss_trains_only_the_offsets():
    est = BoxZoomEstimator(2)
    boxes = torch.full((1, 3, 4), 0.5, requires_grad=True)
    with torch.no_grad():
        boxes[..., 2:] = 0.1
    probs = torch.full((1, 3, 2), 0.5, requires_grad=True)
    est(boxes, probs).abs().sum().backward()
    assert boxes.grad is None and probs.grad is None
    assert est.offset.grad is not None and est.offset.grad.abs().sum() > 0
