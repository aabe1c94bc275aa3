"""The reproduction's distributions: stated mean and variance against Monte Carlo."""

import numpy as np
import pytest

from bettingci.data import bernoulli, beta, two_point, uniform


@pytest.mark.parametrize(
    "dist", [bernoulli(0.1), beta(0.5, 0.5), beta(2, 5), uniform(), two_point()]
)
def test_mean_and_variance(dist):
    x = dist.sample(np.random.default_rng(0), 200, 1000)
    assert x.shape == (200, 1000) and x.min() >= 0 and x.max() <= 1
    se = np.sqrt(dist.var / x.size)
    assert abs(x.mean() - dist.mean) <= 5 * se
    assert abs(x.var() - dist.var) <= 0.02 * dist.var
    assert dist.binary == set(np.unique(x)).issubset({0.0, 1.0})


def test_oracle_width():
    d = beta(2, 5)
    assert d.oracle_width(100, 0.05) == pytest.approx(np.sqrt(2 * d.var * np.log(20) / 100))
