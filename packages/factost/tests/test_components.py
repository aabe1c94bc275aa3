"""Replay buffer (reservoir sampling) and CORAL alignment."""

import numpy as np
import pytest
import torch
from scipy import stats

from factost import ReplayBuffer, coral_loss


def test_reservoir_keeps_a_uniform_sample():
    n, capacity, trials = 50, 10, 400
    counts = np.zeros(n)
    for seed in range(trials):
        buf = ReplayBuffer(capacity, seed=seed)
        idx = torch.arange(n, dtype=torch.float32)[:, None]
        buf.add(idx, idx)
        assert len(buf) == capacity and buf.seen == n
        counts[[int(x[0]) for x in buf.x]] += 1
    expected = trials * capacity / n
    chi2 = ((counts - expected) ** 2 / expected).sum()
    assert stats.chi2.sf(chi2, df=n - 1) > 1e-3  # uniform over insertion indices


def test_capacity_is_respected_across_batches():
    buf = ReplayBuffer(7, seed=0)
    for _ in range(5):
        buf.add(torch.randn(3, 4), torch.randn(3, 2))
    assert len(buf) == 7 and buf.seen == 15
    x, y = buf.sample(11)
    assert x.shape == (11, 4) and y.shape == (11, 2)


def test_coral_zero_for_identical_positive_otherwise_with_finite_gradients():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(32, 6, generator=g, requires_grad=True)
    assert float(coral_loss(a.detach(), a.detach())) == pytest.approx(0.0, abs=1e-12)
    b = torch.randn(40, 6, generator=g) * 2 + 0.5
    loss = coral_loss(a, b)
    assert float(loss.detach()) > 0
    loss.backward()
    assert torch.isfinite(a.grad).all() and a.grad.abs().sum() > 0
    shifted = coral_loss(a.detach(), a.detach() + 1.0)  # same covariance, mean off by 1
    assert float(shifted) == pytest.approx(1.0, rel=1e-5)
