"""The DoF estimator and the allocation (the paper's Sec. 3-4)."""

import math

import pytest
import torch

from doflinattn import (
    allocate_dims,
    degrees_of_freedom,
    kernel_gram,
    layer_dof,
    layer_spectra,
    uniform_dims,
)
from doflinattn.dof import _spectrum


def test_dof_on_known_spectra():
    # closed form: 1/(1 + 0.5) + 0.5/(0.5 + 0.5) + 0 = 1.1667
    d = degrees_of_freedom(torch.tensor([1.0, 0.5, 0.0]), 0.5)
    assert abs(float(d) - (1 / 1.5 + 0.5)) < 1e-12
    # K = I_n: K/n has n eigenvalues 1/n, so d = n (1/n)/(1/n + lam) = n / (1 + n lam)
    for n, lam in [(5, 0.1), (40, 0.003)]:
        assert (
            abs(
                float(degrees_of_freedom(torch.eye(n, dtype=torch.float64), lam))
                - n / (1 + n * lam)
            )
            < 1e-10
        )


def test_dof_decreasing_with_limits():
    mu = torch.tensor([0.5, 0.3, 0.2, 0.0, 0.0], dtype=torch.float64)  # rank 3
    lams = torch.logspace(-6, 6, 50, dtype=torch.float64)
    d = degrees_of_freedom(mu, lams)
    assert bool((d[1:] < d[:-1]).all())
    assert abs(float(degrees_of_freedom(mu, 1e-12)) - 3) < 1e-9
    assert float(degrees_of_freedom(mu, 1e12)) < 1e-11


def test_gram_dof_equals_spectrum_dof():
    x = torch.randn(30, 3, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    k = kernel_gram(x)
    mu = torch.linalg.eigvalsh(k / 30)
    assert abs(float(degrees_of_freedom(k, 0.01)) - float((mu / (mu + 0.01)).sum())) < 1e-10


def test_gaussian_gram_is_psd_and_factorises():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(40, 5, dtype=torch.float64, generator=g)
    y = torch.randn(7, 5, dtype=torch.float64, generator=g)
    k = kernel_gram(x)
    assert float(torch.linalg.eigvalsh(k).min()) >= -1e-9
    sq = lambda z: (z * z).sum(-1)  # noqa: E731
    expect = torch.exp(x @ y.T) * torch.exp(-sq(x) / 2)[:, None] * torch.exp(-sq(y) / 2)[None]
    assert torch.allclose(kernel_gram(x, y), expect, rtol=1e-12, atol=0)
    assert torch.allclose(kernel_gram(x, y, kind="softmax"), torch.exp(x @ y.T), rtol=1e-12)


def test_spectrum_clips_round_off_negatives():
    x = torch.randn(200, 2, dtype=torch.float64, generator=torch.Generator().manual_seed(2))
    raw = torch.linalg.eigvalsh(kernel_gram(x) / 200)
    assert float(raw.min()) < 0  # a Gaussian Gram of 200 points in 2-D has round-off negatives
    mu = _spectrum(kernel_gram(x))
    assert float(mu.min()) >= 0
    assert math.isfinite(float(degrees_of_freedom(mu, 1e-30)))


def test_layer_dof_means_heads_and_ignores_order():
    g = torch.Generator().manual_seed(3)
    q, k = torch.randn(60, 3, 4, generator=g), torch.randn(60, 3, 4, generator=g)
    spectra = layer_spectra(q, k, max_points=1024)
    assert spectra.shape == (3, 120)
    per_head = [float(degrees_of_freedom(s, 0.05)) for s in spectra]
    assert abs(layer_dof(q, k, 0.05) - sum(per_head) / 3) < 1e-10
    # head h's Gram is the Gaussian Gram of that head's q and k, scaled by d^(-1/4)
    pts = torch.cat([q[:, 1], k[:, 1]]).double() * 4**-0.25
    assert abs(per_head[1] - float(degrees_of_freedom(kernel_gram(pts), 0.05))) < 1e-9
    # subsampling: at most max_points points, seeded
    assert torch.equal(
        layer_spectra(q, k, max_points=50, seed=4), layer_spectra(q, k, max_points=50, seed=4)
    )
    assert layer_spectra(q, k, max_points=50).shape == (3, 50)


def _spec(rate, n=64):
    mu = torch.arange(1, n + 1, dtype=torch.float64) ** -rate
    return mu / mu.sum()


def test_allocation_sums_and_orders():
    spectra = [_spec(r) for r in (0.8, 1.5, 3.0, 1.1, 2.2, 4.0)]
    for budget in (12, 48, 96, 130):
        dims, lam = allocate_dims(spectra, budget)
        assert sum(dims) == budget
        assert all(m % 2 == 0 and m >= 2 for m in dims)
        dof = [float(degrees_of_freedom(s, lam)) for s in spectra]
        for a in range(6):
            for b in range(6):
                if dof[a] > dof[b]:
                    assert dims[a] >= dims[b], (budget, dims, dof)
        # lambda* solves sum_l d_l(lambda*) = M
        assert abs(sum(dof) - budget) < 1e-6 * budget


def test_allocation_equal_spectra_are_uniform_and_oversample():
    same = [_spec(1.2)] * 4
    assert allocate_dims(same, 40)[0] == uniform_dims(40, 4) == [10] * 4
    dims1, lam1 = allocate_dims([_spec(1.0), _spec(2.0)], 20)
    dims2, lam2 = allocate_dims([_spec(1.0), _spec(2.0)], 20, oversample=2.0)
    assert lam2 > lam1  # c d(lambda) = M needs a smaller d, so a larger lambda
    assert sum(dims2) == 20 and dims2[0] >= dims2[1]


def test_allocation_min_dim_and_errors():
    steep = torch.tensor([1.0] + [1e-12] * 9, dtype=torch.float64)
    flat = torch.full((64,), 1 / 64, dtype=torch.float64)
    dims, _ = allocate_dims([steep, flat, flat], 30, min_dim=4)
    assert sum(dims) == 30 and min(dims) >= 4
    with pytest.raises(ValueError, match="'budget'.*at least num_layers \\* min_dim = 6"):
        allocate_dims([flat] * 3, 4)
    # rank 1 + 64: a budget of 65 or more cannot be met; 64 is the largest feasible one
    with pytest.raises(ValueError, match="largest feasible budget is 64"):
        allocate_dims([torch.tensor([1.0, 0.0]), flat], 66)
    assert sum(allocate_dims([torch.tensor([1.0, 0.0]), flat], 64)[0]) == 64


def test_argument_errors():
    with pytest.raises(ValueError, match="'lam'"):
        degrees_of_freedom(torch.tensor([1.0]), 0.0)
    with pytest.raises(ValueError, match="'lam'"):
        degrees_of_freedom(torch.tensor([1.0]), torch.tensor([0.1, -1.0]))
    with pytest.raises(ValueError, match="'spectrum_or_gram'.*square"):
        degrees_of_freedom(torch.ones(3, 4), 0.1)
    with pytest.raises(ValueError, match="'spectrum_or_gram'.*non-negative"):
        degrees_of_freedom(torch.tensor([1.0, -0.5]), 0.1)
