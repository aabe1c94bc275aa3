"""Feature maps: positive, shaped, and the batched per-head path equals the per-head loop."""

import pytest
import torch
from torch import nn

from doflinattn import HedgehogFeatureMap, MLPFeatureMap
from doflinattn.features import per_head


@pytest.mark.parametrize("cls", [HedgehogFeatureMap, MLPFeatureMap])
def test_nonnegative_and_shape(cls):
    phi = cls(8, 16)
    y = phi(10 * torch.randn(3, 5, 8))
    assert y.shape == (3, 5, 16) and bool((y >= 0).all())


def test_hedgehog_halves_are_softmaxes():
    phi = HedgehogFeatureMap(6, 10)
    y = phi(torch.randn(4, 6))
    assert torch.allclose(y[:, :5].sum(-1), torch.ones(4)) and torch.allclose(
        y[:, 5:].sum(-1), torch.ones(4)
    )
    w = phi.linear.weight.detach()  # orthogonal init: orthonormal rows (m/2 <= d)
    assert torch.allclose(w @ w.T, torch.eye(5), atol=1e-6)


def test_odd_hedgehog_dim_is_refused():
    with pytest.raises(ValueError, match="'feature_dim'.*even"):
        HedgehogFeatureMap(8, 7)


@pytest.mark.parametrize("cls", [HedgehogFeatureMap, MLPFeatureMap])
def test_batched_heads_equal_loop(cls):
    maps = nn.ModuleList(cls(4, 6) for _ in range(3))
    for m in maps:  # give the biases values, so they are tested too
        for p in m.parameters():
            nn.init.normal_(p)
    x = torch.randn(2, 3, 5, 4, dtype=torch.float64)
    maps = maps.double()
    loop = torch.stack([f(x[:, h]) for h, f in enumerate(maps)], 1)
    assert torch.allclose(per_head(maps, x), loop, rtol=1e-12, atol=1e-14)
