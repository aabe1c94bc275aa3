"""The entropy-consistent scheduler: h_K(beta_K(t)) = g(t) for every K."""

import numpy as np
import pytest
import torch

from treegen import EntropyScheduler, QuadraticScheduler, entropy_curve


@pytest.fixture(scope="module")
def sched():
    return EntropyScheduler(8)


@pytest.mark.parametrize("K", [2, 3, 5, 8])
def test_entropy_follows_the_linear_target(sched, K):
    t = torch.linspace(0, 1, 21, dtype=torch.float64)
    beta = sched.beta(K, t).numpy()
    # fresh Monte Carlo draws (another seed than the tabulation)
    h = entropy_curve(K, beta, n_mc=4096, seed=123)
    goal = 1 - (1 - sched.eps) * t.numpy()
    assert np.abs(h - goal).max() < 0.02


@pytest.mark.parametrize("K", [2, 5, 8])
def test_schedule_starts_at_zero_and_increases(sched, K):
    t = torch.linspace(0, 1, 401, dtype=torch.float64)
    beta = sched.beta(K, t)
    assert beta[0] == 0 and (torch.diff(beta) > 0).all()
    assert (sched.dbeta(K, t[:-1]) > 0).all()


def test_k1_is_deterministic_and_k_tensor_broadcasts(sched):
    t = torch.tensor([0.2, 0.9], dtype=torch.float64)
    assert (sched.beta(1, t) == 0).all()
    K = torch.tensor([[2], [5]])
    assert sched.beta(K, t).shape == (2, 2)


def test_quadratic_entropy_speed_depends_on_k():
    # the motivation: one beta1 t^2 leaves the 8-way variable with more normalised entropy at
    # t = 0.5 than the binary one, by more than the entropy scheduler's 0.02 tolerance
    q = QuadraticScheduler(8, beta1=3.0)
    b = float(q.beta(2, torch.tensor(0.5, dtype=torch.float64)))
    h2, h8 = entropy_curve(2, np.array([b]))[0], entropy_curve(8, np.array([b]))[0]
    assert abs(h2 - h8) > 0.05


def test_dbeta_is_the_derivative(sched):
    t = torch.tensor([0.2, 0.5, 0.8], dtype=torch.float64)
    h = 1e-3
    fd = (sched.beta(5, t + h) - sched.beta(5, t - h)) / (2 * h)
    torch.testing.assert_close(sched.dbeta(5, t), fd, rtol=0.05, atol=1e-3)
