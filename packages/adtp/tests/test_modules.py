import pytest
import torch

from adtp.modules import ImportancePredictor, TokenRetainer


@pytest.mark.parametrize("seed", range(5))
def test_retainer_ratios_non_increasing_in_range(seed):
    torch.manual_seed(seed)
    ret = TokenRetainer(8, 5, r_min=0.05)
    with torch.no_grad():
        ret.net[-1].weight.normal_(0, 3.0)  # spread the logits so that r_min binds somewhere
    r = ret(torch.randn(64, 18) * 5)
    assert r.shape == (64, 5)
    assert bool((r[:, 1:] <= r[:, :-1]).all())
    assert bool(((r >= 0.05) & (r <= 1)).all())
    assert bool((r == 0.05).any())


def test_retainer_starts_at_init_keep():
    ret = TokenRetainer(4, 3, init_keep=0.5)
    with torch.no_grad():
        ret.net[-1].weight.zero_()
    assert torch.allclose(ret(torch.randn(2, 10)), torch.tensor([[0.5, 0.25, 0.125]] * 2))


def test_predictor_scores_each_token_independently():
    p = ImportancePredictor(6).double()
    h = torch.randn(2, 5, 6, dtype=torch.float64)
    a = p(h)
    assert a.shape == (2, 5)
    assert torch.allclose(p(h[:, 2:3])[:, 0], a[:, 2])
