"""The public API: reflection, ordering, determinism, batch = single, rescaling, bad input."""

import math

import numpy as np
import pytest

from bettingci import (
    METHODS,
    BettingCI,
    bet_sequence,
    betting_ci,
    confidence_interval,
    log_wealth,
    lower_bound,
    lower_bound_batch,
    upper_bound,
)
from paperkit.testing import assert_close, assert_param_error


@pytest.fixture
def sample():
    return np.random.default_rng(11).beta(2, 5, 60)


@pytest.mark.parametrize("method", ["star", "bets", "star_hoeffding", "hedged", "maurer_pontil"])
def test_upper_bound_is_the_reflected_lower_bound(sample, method):
    ub = upper_bound(sample, 0.05, method, grid=1000, random_state=7)
    lb = lower_bound(1 - sample, 0.05, method, grid=1000, random_state=7)
    assert ub == 1 - lb


@pytest.mark.parametrize("method", METHODS)
def test_intervals_are_ordered_within_the_unit_interval(method):
    rng = np.random.default_rng(2)
    for n in (1, 2, 5, 40):
        x = (rng.random(n) < 0.5).astype(float) if method == "clopper_pearson" else rng.random(n)
        lo, hi = confidence_interval(x, 0.05, method, grid=500, randomize=False)
        assert 0.0 <= lo <= hi <= 1.0


def test_seed_determines_the_randomized_bound(sample):
    a = lower_bound(sample, 0.05, grid=1000, random_state=3)
    assert a == lower_bound(sample, 0.05, grid=1000, random_state=3)
    g1, g2 = np.random.default_rng(9), np.random.default_rng(9)
    assert lower_bound(sample, 0.05, grid=1000, random_state=g1) == lower_bound(
        sample, 0.05, grid=1000, random_state=g2
    )
    draws = {lower_bound(sample, 0.05, grid=1000, random_state=s) for s in range(8)}
    assert len(draws) > 1  # the threshold U really is random


def test_deterministic_threshold_uses_no_rng(sample):
    g = np.random.default_rng(0)
    state = g.bit_generator.state
    a = lower_bound(sample, 0.05, grid=1000, randomize=False, random_state=g)
    assert g.bit_generator.state == state
    assert a == lower_bound(sample, 0.05, grid=1000, randomize=False, random_state=123)
    # randomizing can only move the bound up (log(U/delta) <= log(1/delta))
    assert lower_bound(sample, 0.05, grid=1000, random_state=1) >= a


@pytest.mark.parametrize("method", ["star", "hedged", "star_hoeffding", "hoeffding", "t_test"])
def test_batch_equals_single_path(method):
    X = np.random.default_rng(4).random((70, 25))  # 70 rows: three chunks at G = 1000
    batch = lower_bound_batch(X, 0.05, method, grid=1000, randomize=False)
    single = [lower_bound(x, 0.05, method, grid=1000, randomize=False) for x in X]
    np.testing.assert_array_equal(batch, single)
    batch = lower_bound_batch(X, 0.05, method, grid=1000, random_state=np.random.default_rng(8))
    g = np.random.default_rng(8)  # the same stream of thresholds, drawn one row at a time
    single = [lower_bound(x, 0.05, method, grid=1000, random_state=g) for x in X]
    np.testing.assert_array_equal(batch, single)


def test_betting_ci_is_vectorised_and_rescales(sample):
    X = np.random.default_rng(5).random((6, 30))
    lo, hi = betting_ci(X, 0.1, grid=1000, randomize=False)
    assert lo.shape == hi.shape == (6,)
    for i in range(6):
        assert (lo[i], hi[i]) == confidence_interval(X[i], 0.1, grid=1000, randomize=False)
    a, b = -3.0, 5.0
    lo2, hi2 = betting_ci(a + (b - a) * X, 0.1, grid=1000, randomize=False, bounds=(a, b))
    assert_close(lo2, a + (b - a) * lo, rtol=0, atol=1e-12)
    assert_close(hi2, a + (b - a) * hi, rtol=0, atol=1e-12)
    lo1, hi1 = betting_ci(sample, 0.05, alternative="greater", grid=1000, random_state=1)
    assert hi1 == 1.0 and lo1 == lower_bound(sample, 0.05, grid=1000, random_state=1)
    lo1, hi1 = betting_ci(sample, 0.05, alternative="less", grid=1000, random_state=1)
    assert lo1 == 0.0 and hi1 == upper_bound(sample, 0.05, grid=1000, random_state=1)


def test_estimator_matches_functions_and_its_wealth(sample):
    est = BettingCI(delta=0.05, grid=1000, random_state=4).fit(sample)
    assert est.interval_ == confidence_interval(sample, 0.05, grid=1000, random_state=4)
    one = BettingCI(delta=0.05, alternative="greater", grid=1000, randomize=False).fit(sample)
    assert one.log_wealth_.shape == one.grid_.shape == (1001,)
    kept = one.grid_[one.log_wealth_ < math.log(20)]
    assert one.lower_ == max(0.0, kept.min() - 1e-3) and one.upper_ == 1.0
    both = BettingCI(delta=0.05, grid=1000, randomize=False).fit(sample)
    kept = both.grid_[both.log_wealth_ < math.log(40)]  # delta/2 per side
    assert_close(both.lower_, kept.min() - 1e-3, rtol=0, atol=1e-12)
    assert_close(both.upper_, kept.max() + 1e-3, rtol=0, atol=1e-12)
    assert BettingCI(method="hoeffding").fit(sample).log_wealth_ is None
    scaled = BettingCI(bounds=(10, 20), grid=1000, random_state=4).fit(10 + 10 * sample)
    assert_close(np.array(scaled.interval_), 10 + 10 * np.array(est.interval_), rtol=0, atol=1e-9)
    assert "method='star'" in repr(est)


def test_bad_input_beyond_the_shared_suite(sample):
    """What tests/test_bad_inputs.py does not derive: data outside the bounds, Clopper-Pearson on
    non-binary data, the owner named in the error, BettingCI's method (Call's own keyword)."""
    err = assert_param_error
    err(lower_bound, [0.2, 1.5], param="x")
    err(lower_bound, [-0.1, 0.5], param="x")
    err(lower_bound, ["a", "b"], param="x", exc=TypeError)
    err(lower_bound, sample, method="bernstein", param="method")
    err(lower_bound, sample, method="clopper_pearson", param="x")
    err(lower_bound, sample, random_state="seed", param="random_state", exc=TypeError)
    err(confidence_interval, np.ones((2, 3)), param="x")
    err(betting_ci, sample, alternative="up", param="alternative")
    err(betting_ci, sample + 3, param="x")
    err(BettingCI(bounds=(0.0, 0.5)).fit, sample + 0.5, param="x")
    err(BettingCI(method="bernstein").fit, sample, param="method")
    err(log_wealth, sample, [0.1, 0.5], method="hoeffding", param="method")
    err(bet_sequence, sample, [0.1, 2.0], param="ms")
    with pytest.raises(ValueError, match="parameter of upper_bound"):
        upper_bound(sample, grid=5)


def test_grid_too_large_for_memory_is_refused_before_work():
    """grid = 10^9 on 50 points would need about 90 GB of state: refused at once."""
    x = np.random.default_rng(0).random(50)
    for fn in (lower_bound, upper_bound, confidence_interval):
        with pytest.raises(ValueError, match="small enough to fit in memory"):
            fn(x, grid=10**9)
    with pytest.raises(ValueError, match="'grid' parameter of BettingCI"):
        BettingCI(grid=10**9).fit(x)
