"""The zoom embedding, FiLM and regressor (paper Sec. 3, zoom embedding)."""

import pytest
import torch

from paperkit.testing import check_state_dict_roundtrip
from zrdetr.zoom import ZoomEmbedding, ZoomFiLM, ZoomRegressor


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
