"""The calibrated granularity choice (check 9)."""

import numpy as np
import pytest

from vgsearch import AdaptiveGranularity

ROWS = [
    # n, g, bucket, acc, flops, count
    (4, 1, 0, 0.80, 10.0, 10),
    (4, 2, 0, 0.90, 6.0, 10),
    (4, 3, 0, 0.90, 4.0, 10),  # tie with g = 2 on accuracy, fewer FLOPs: chosen
    (4, 1, 1, 0.60, 10.0, 30),
    (4, 2, 1, 0.50, 6.0, 30),
    (4, 3, 1, 0.40, 4.0, 30),
    (16, 1, 0, 0.95, 40.0, 10),
    (16, 4, 0, 0.97, 20.0, 10),
    (16, 1, 1, 0.70, 40.0, 30),
    (16, 4, 1, 0.70, 20.0, 30),
]


def fitted(probe=None):
    rows = [dict(n=n, g=g, bucket=b, acc=a, flops=f, count=c) for n, g, b, a, f, c in ROWS]
    return AdaptiveGranularity(n_buckets=3).fit(rows, probe=probe)


def test_per_bucket_argmax_ties_to_fewer_flops():
    ada = fitted()
    assert ada.choose(4, 0) == 3
    assert ada.choose(4, 1) == 1
    assert ada.choose(16, 0) == 4
    assert ada.choose(16, 1) == 4  # equal accuracy: fewer FLOPs


def test_budget_rule_pools_buckets_by_count():
    # n = 4: g=1: (0.8*10 + 0.6*30)/40 = 0.65; g=2: 0.6; g=3: 0.525 -> 1
    # n = 16: g=1: (0.95*10 + 0.7*30)/40 = 0.7625; g=4: 0.7675 -> 4
    ada = fitted()
    assert ada.choose(4) == 1 and ada.choose(16) == 4


def test_unseen_bucket_or_n_refused():
    ada = fitted()
    with pytest.raises(ValueError, match="'bucket'"):
        ada.choose(4, 7)
    with pytest.raises(ValueError, match="'n'"):
        ada.choose(64)


def test_probe_buckets_by_calibration_quantiles():
    probe = np.linspace(0.0, 1.0, 301)
    ada = fitted(probe)
    np.testing.assert_allclose(ada.edges_, [1 / 3, 2 / 3])
    assert ada.difficulty_bucket([0.1, 0.2]) == 0
    assert ada.difficulty_bucket([0.5]) == 1
    assert ada.difficulty_bucket(np.array([0.9, 0.95, 1.0])) == 2
    with pytest.raises(ValueError, match="probe"):
        fitted().difficulty_bucket([0.5])
