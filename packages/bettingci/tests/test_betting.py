"""The wealth processes against a naive reference, predictability, and the paper's invariants."""

import math

import numpy as np
import pytest

from bettingci import bet_sequence, log_wealth, lower_bound, lower_bound_batch
from bettingci.betting import (
    BETTING_METHODS,
    EPS,
    HEDGED_EPS,
    final_log_wealth,
    first_kept,
    invert,
)
from paperkit.testing import assert_close


def naive_log_wealth(x, m, delta, method, c=1.0, hedged_cap=None):
    """Pure-Python double loop over the bet rules of bettingci.betting's docstring, one m."""
    n, L = len(x), math.log(1 / delta)
    mu_hat, sigma2 = [], []  # WSR plug-ins after each step
    acc, acc2 = 0.0, 0.0
    for t in range(1, n + 1):
        acc += x[t - 1]
        mu_hat.append((0.5 + acc) / (t + 1))
        acc2 += (x[t - 1] - mu_hat[-1]) ** 2
        sigma2.append((0.25 + acc2) / (t + 1))
    logw, V, path = 0.0, 0.0, [0.0]
    for t in range(1, n + 1):
        r = n - t + 1
        g = max(L - logw, 0.0)
        if method in ("star", "bets"):
            S = m * (1 - m) + EPS
            if t > 1:
                S = min(V / (t - 1) + c * (m + EPS) * n / (t - 1) ** 2, S)
            target = g / r if method == "star" else L / n
            lam = min(math.sqrt(2 * target / S), 1 / (m + EPS))
            logw += math.log(1 + lam * (x[t - 1] - m))
            V += (x[t - 1] - m) ** 2
        elif method == "hedged":
            s2 = 0.25 if t == 1 else sigma2[t - 2]
            cap = 1 / (m + HEDGED_EPS) if hedged_cap is None else hedged_cap(m)
            lam = min(math.sqrt(2 * L / (n * s2)), cap)
            logw += math.log(1 + lam * (x[t - 1] - m))
        else:
            lam = math.sqrt(8 * g / r) if method == "star_hoeffding" else math.sqrt(8 * L / n)
            logw += lam * (x[t - 1] - m) - lam**2 / 8
        path.append(logw)
    return path


@pytest.mark.parametrize("method", BETTING_METHODS)
def test_log_wealth_matches_naive_double_loop(method):
    x = np.random.default_rng(3).beta(0.7, 0.9, 15)
    ms = np.array([0.0, 0.05, 0.2, 0.37, 0.5, 0.81, 1.0])
    got = log_wealth(x, ms, 0.05, method)
    want = np.array([naive_log_wealth(list(x), float(m), 0.05, method) for m in ms]).T
    assert got.shape == (16, 7)
    assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_two_sided_hedged_cap_matches_naive():
    x = np.random.default_rng(4).random(15)
    ms = np.array([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0])
    got = final_log_wealth(x[None], ms, math.log(40), "hedged", two_sided=True)[0]

    def cap(m):
        return 0.5 / m if m > 0 else math.inf

    want = [naive_log_wealth(list(x), float(m), 0.025, "hedged", hedged_cap=cap)[-1] for m in ms]
    assert_close(got, np.array(want), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("method", BETTING_METHODS)
def test_bets_are_predictable(method):
    """lambda_1..lambda_t depend on x_1..x_{t-1} only: replacing x_t..x_n leaves them."""
    rng = np.random.default_rng(5)
    x = rng.random(30)
    ms = np.linspace(0, 1, 41)
    t = 12
    y = x.copy()
    y[t - 1 :] = rng.random(30 - t + 1)
    a, b = bet_sequence(x, ms, 0.05, method), bet_sequence(y, ms, 0.05, method)
    np.testing.assert_array_equal(a[:t], b[:t])
    if method != "hoeffding_bet":  # the constant bet never changes; the others react
        assert not np.array_equal(a[t:], b[t:])


@pytest.mark.parametrize("seed", range(20))
def test_hoeffding_bet_is_hoeffding(seed):
    """Deterministic threshold: the exponential-form test inverts to x_bar - sqrt(log(1/d)/2n)."""
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 200))
    x = rng.beta(0.5 + 3 * rng.random(), 0.5 + 3 * rng.random(), n)
    grid = 2000
    lcb = lower_bound(x, 0.05, "hoeffding_bet", grid=grid, randomize=False)
    closed = max(0.0, x.mean() - math.sqrt(math.log(20) / (2 * n)))
    assert abs(lcb - closed) <= 1 / grid


def test_all_ones_reach_the_degenerate_limit():
    """With x = 1 every valid LCB is <= delta^(1/n); STaR bets all in and attains it."""
    n, delta, grid = 20, 0.05, 10_000
    x, h, limit = np.ones(n), 1 / grid, delta ** (1 / n)
    star = lower_bound(x, delta, "star", grid=grid, randomize=False)
    assert limit - 2 * h <= star <= limit
    for method in ("bets", "star_hoeffding", "hoeffding_bet", "hedged", "hoeffding"):
        assert lower_bound(x, delta, method, grid=grid, randomize=False) <= limit
    for method in ("maurer_pontil", "clopper_pearson"):
        assert lower_bound(x, delta, method, randomize=False) <= limit + 1e-12


def test_recalculating_target_is_never_worse():
    """STaR >= Bets and STaR-Hoeffding >= Hoeffding bet on average (Bernoulli(0.5), n = 50)."""
    X = (np.random.default_rng(0).random((500, 50)) < 0.5).astype(float)
    kw = dict(grid=1000, randomize=False)
    star, bets = (lower_bound_batch(X, 0.05, m, **kw).mean() for m in ("star", "bets"))
    sh, hb = (
        lower_bound_batch(X, 0.05, m, **kw).mean() for m in ("star_hoeffding", "hoeffding_bet")
    )
    assert star >= bets
    assert sh >= hb


def test_invert_takes_the_smallest_kept_point_minus_one_step():
    lw = np.array([[5.0, 4.0, 1.0, 3.5, 0.0], [5.0, 5.0, 5.0, 5.0, 5.0], [0.0, 9.0, 0.0, 0, 0]])
    # grid G = 4: points 0, .25, .5, .75, 1; threshold 3 keeps index 2, none, index 0
    np.testing.assert_array_equal(invert(lw, 3.0, 4), [0.25, 1.0, 0.0])
    np.testing.assert_array_equal(invert(lw, np.array([0.5, 6.0, 0.5]), 4), [0.75, 0.0, 0.0])


@pytest.mark.parametrize("method", BETTING_METHODS)
def test_the_bound_search_equals_the_whole_grid_bit_for_bit(method):
    """first_kept (blocks of the grid played upwards, absorbed points dropped) finds the same
    smallest kept grid point as inverting the whole grid, with both thresholds and both caps."""
    rng = np.random.default_rng(11)
    L = math.log(1 / 0.05)
    for trial in range(4):
        R, n, G = int(rng.integers(1, 12)), int(rng.integers(5, 120)), int(rng.integers(10, 300))
        X = rng.beta(*rng.uniform(0.3, 5, 2), (R, n))
        if trial % 3 == 0:
            X = (X > 0.5).astype(float)
        ms = np.arange(G + 1) / G
        thr = L + np.log(1 - rng.random(R)) if trial % 2 else np.full(R, L)
        two = bool(trial % 2)
        kept = final_log_wealth(X, ms, L, method, two_sided=two) < thr[:, None]
        expected = np.where(kept.any(axis=1), np.argmax(kept, axis=1), G + 1)
        for block in (5, 64, G + 1):
            got = first_kept(X, ms, L, thr, method, two_sided=two, block=block)
            np.testing.assert_array_equal(got, expected)
