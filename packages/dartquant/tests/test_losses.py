import math

import pytest
import torch

from dartquant import hadamard, random_orthogonal, whip_loss
from paperkit.testing import assert_close, assert_param_error


@pytest.mark.parametrize("d", [4, 16, 64, 256])
def test_whip_closed_forms(d):
    x = torch.zeros(1, d, dtype=torch.float64)
    x[0, 0] = d**0.5  # spike with ||x|| = sqrt(d)
    spike = whip_loss(x).item()
    flat = whip_loss(x @ hadamard(d, torch.float64)).item()  # every |y_i| = 1
    assert spike == pytest.approx((d - 1) + math.exp(-(d**0.5)), rel=1e-12)
    assert flat == pytest.approx(d * math.exp(-1), rel=1e-12)
    assert flat < spike


def test_mean_over_leading_dims_sum_over_last():
    x = torch.randn(3, 4, 8, dtype=torch.float64)
    assert_close(whip_loss(x), torch.exp(-x.abs()).sum(-1).mean(), rtol=1e-15, atol=0)


def test_norm_preservation_and_sign_flip_invariance():
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(100, 32, generator=gen, dtype=torch.float64)
    R = random_orthogonal(32, 1, torch.float64)
    assert_close((x @ R).norm(dim=-1), x.norm(dim=-1), rtol=1e-12, atol=0)
    signs = torch.randint(0, 2, (32,), generator=gen).double() * 2 - 1
    assert whip_loss(x * signs).item() == pytest.approx(whip_loss(x).item(), rel=1e-14)


def test_bad_inputs():
    assert_param_error(whip_loss, [1.0], param="x", exc=TypeError)
    assert_param_error(whip_loss, torch.zeros(3, 0), param="x")
