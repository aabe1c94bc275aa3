"""ISTA against its formula, the CBT model for every attention and ffn, and its errors."""

import pytest
import torch
import torch.nn.functional as F

from cbsa import CBT, ISTA
from conftest import rand
from paperkit.testing import assert_close


def test_ista_step_formula():
    torch.manual_seed(0)
    ista = ISTA(6).double()
    x = rand(4, 6, seed=1)
    Dm = ista.weight  # x @ D^T = D x for row vectors
    expected = F.relu(x + 0.1 * (x @ Dm - x @ Dm.T @ Dm) - 0.1 * 0.1)
    assert_close(ista(x), expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("attn", ["cbsa", "mssa", "tssa", "softmax"])
@pytest.mark.parametrize("ffn", ["ista", "mlp"])
def test_cbt_trains_one_step(attn, ffn):
    torch.manual_seed(0)
    model = CBT(16, 4, 1, 10, 32, 2, 4, num_reps=4, attn=attn, ffn=ffn)
    img, y = torch.randn(8, 1, 16, 16), torch.arange(8)
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    before = F.cross_entropy(model(img), y)
    before.backward()
    opt.step()
    after = F.cross_entropy(model(img), y)
    assert model(img).shape == (8, 10)
    assert after < before  # one gradient step on a fixed batch lowers the loss


def test_cbt_stem_sizes():
    for patch, convs in ((2, 1), (4, 2), (16, 4)):
        model = CBT(32, patch, 3, 5, 32, 1, 4, num_reps=1, attn="cbsa")
        assert sum(isinstance(m, torch.nn.Conv2d) for m in model.stem) == convs
        assert model.tokens(torch.randn(1, 3, 32, 32)).shape == (1, 1 + (32 // patch) ** 2, 32)


def test_cbt_errors():
    with pytest.raises(ValueError, match="'patch_size'"):
        CBT(16, 3, 1, 10, 32, 1, 4)
    with pytest.raises(ValueError, match="'num_reps'"):
        CBT(16, 4, 1, 10, 32, 1, 4, num_reps=3)
    with pytest.raises(ValueError, match="'img'"):
        CBT(16, 4, 1, 10, 32, 1, 4, num_reps=4)(torch.randn(1, 1, 8, 8))
