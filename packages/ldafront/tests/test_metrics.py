"""bce, dp_gap, fisher_term against scikit-learn and manual group means (check 9)."""

import numpy as np
import pytest
from sklearn.metrics import log_loss

from ldafront import bce, binary_entropy, dp_gap


def test_bce_matches_sklearn_log_loss():
    rng = np.random.default_rng(0)
    f = rng.uniform(0.01, 0.99, 500)
    y = (rng.random(500) < f).astype(int)
    assert abs(bce(f, y) - log_loss(y, f)) < 1e-12


def test_dp_gap_is_difference_of_group_means():
    rng = np.random.default_rng(1)
    f = rng.uniform(0, 1, 300)
    A = rng.integers(0, 2, 300)
    manual = f[A == 1].mean() - f[A == 0].mean()
    assert dp_gap(f, A, signed=True) == pytest.approx(manual, abs=1e-14)
    assert dp_gap(f, A) == pytest.approx(abs(manual), abs=1e-14)
    assert dp_gap(f, A.astype(bool)) == dp_gap(f, A)


def test_soft_labels_give_expected_loss_and_entropy():
    # E over y ~ Bernoulli(eta) of the loss equals the loss with soft labels eta
    eta = np.array([0.2, 0.7])
    f = np.array([0.3, 0.6])
    by_hand = np.mean(-eta * np.log(f) - (1 - eta) * np.log(1 - f))
    assert bce(f, eta) == pytest.approx(by_hand, abs=1e-15)
    assert binary_entropy(0.3) == pytest.approx(
        bce(np.full(2, 0.3), np.array([1.0, 0.0]) * 0 + 0.3)
    )


def test_errors_name_the_argument():
    with pytest.raises(ValueError, match="'scores'"):
        bce(np.array([0.0, 0.5]), np.array([0, 1]))
    with pytest.raises(ValueError, match="'A'"):
        dp_gap(np.array([0.1, 0.5]), np.array([1, 1]))
