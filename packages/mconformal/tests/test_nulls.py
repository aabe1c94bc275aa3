import itertools
import math
import time
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mconformal import (
    conformal_counts,
    enumerate_null,
    null_order_stat_cdf,
    null_order_stat_pmf,
    null_size,
    null_sum_cdf,
    null_sum_pmf,
    sample_null,
)
from paperkit.testing import assert_close, assert_param_error


def brute_force(n, m):
    """A_{n,m} by brute force over all (n+1)^m vectors, keeping the sorted ones."""
    return [v for v in itertools.product(range(n + 1), repeat=m) if list(v) == sorted(v)]


def test_enumeration_is_A_nm():
    rows = enumerate_null(6, 3)
    assert [tuple(r) for r in rows] == brute_force(6, 3)
    assert len(rows) == null_size(6, 3) == math.comb(9, 3) == 84


def test_sample_null_matches_enumeration_chi2():
    """chi^2 of 1e5 draws against the uniform law on the 84 elements of A_{6,3}."""
    draws = sample_null(6, 3, 100_000, np.random.default_rng(0))
    support = {tuple(r): i for i, r in enumerate(enumerate_null(6, 3))}
    index = np.array([support[tuple(r)] for r in draws])  # KeyError if a draw is outside A_{6,3}
    counts = np.bincount(index, minlength=84)
    assert (counts > 0).all() and len(support) == 84
    assert stats.chisquare(counts).pvalue > 1e-3


def test_sample_null_rows_sorted_and_in_range():
    draws = sample_null(3, 7, 5000, 1)  # m > n: many repeated counts
    assert draws.shape == (5000, 7) and draws.min() >= 0 and draws.max() <= 3
    assert (np.diff(draws, axis=1) >= 0).all()


@pytest.mark.parametrize("i", [1, 2, 3, 4])
def test_order_stat_pmf_exact_fractions(i):
    """n = 8, m = 4, every i: closed form == enumeration, in exact fractions."""
    rows = brute_force(8, 4)
    expected = [Fraction(sum(r[i - 1] == k for r in rows), len(rows)) for k in range(9)]
    exact = null_order_stat_pmf(8, 4, i, exact=True)
    assert list(exact) == expected and sum(exact) == 1
    assert_close(null_order_stat_pmf(8, 4, i), np.array(expected, float), rtol=1e-15, atol=0)
    assert null_order_stat_cdf(8, 4, i)[-1] == 1.0


def test_order_stat_law_by_simulation():
    """exchangeable continuous scores, n = 30, m = 4; the sorted counts K_(i)
    follow the closed-form marginals (chi^2 with cells pooled to expected >= 5, and KS)."""
    rng = np.random.default_rng(0)
    reps, n, m = 6000, 30, 4
    sorted_k = np.empty((reps, m), dtype=int)
    for r in range(reps):
        scores = rng.gamma(2.0, size=n + m)  # any continuous law
        sorted_k[r] = np.sort(conformal_counts(scores[:n], scores[n:], rng=rng))
    for i in range(1, m + 1):
        expected = reps * null_order_stat_pmf(n, m, i)
        observed = np.bincount(sorted_k[:, i - 1], minlength=n + 1)
        keep = expected >= 5
        obs = np.append(observed[keep], observed[~keep].sum())
        exp = np.append(expected[keep], expected[~keep].sum())
        assert stats.chisquare(obs[exp > 0], exp[exp > 0]).pvalue > 1e-3
        cdf = null_order_stat_cdf(n, m, i)
        ks = np.abs(np.cumsum(observed) / reps - cdf).max()
        assert ks < 1.63 / np.sqrt(reps)  # Kolmogorov critical value at 1 % (conservative)


def test_sum_law_exact_against_enumeration_and_mannwhitney():
    """the DP law of sum_j K_j equals enumeration (n = 10, m = 3) and the exact
    Mann-Whitney U null of scipy (no ties)."""
    rows = enumerate_null(10, 3)
    by_enumeration = np.bincount(rows.sum(axis=1)) / len(rows)
    assert_close(null_sum_pmf(10, 3), by_enumeration, rtol=1e-14, atol=0)
    cdf = null_sum_cdf(10, 3)
    cal = np.arange(10) + 0.5  # calibration scores 0.5 .. 9.5
    for u in range(31):
        # three views whose counts K_j sum to u: each view below (u_j) calibration points
        parts = [min(10, u - 10 * j) if u > 10 * j else 0 for j in range(3)]
        views = np.array([max(p, 0) for p in parts], dtype=float)
        assert int(sum(np.searchsorted(cal, views))) == u
        p = stats.mannwhitneyu(views, cal, alternative="less", method="exact").pvalue
        assert_close(cdf[u], p, rtol=1e-12, atol=1e-15, msg=f"u={u}")


def test_sum_law_large_n_is_a_distribution():
    pmf = null_sum_pmf(400, 10)
    assert pmf.shape == (4001,) and (pmf >= 0).all()
    assert_close(pmf.sum(), 1.0, rtol=1e-12, atol=0)
    assert_close((np.arange(4001) * pmf).sum(), 10 * 400 / 2, rtol=1e-10, atol=0)  # E K_j = n/2


def test_work_that_would_not_fit_is_refused_at_once(monkeypatch):
    """null_sum_pmf(10**6, 50) would take minutes of big-integer additions: refused before any."""
    start = time.perf_counter()
    assert_param_error(null_sum_pmf, 10**6, 50, param="n")
    assert_param_error(null_sum_cdf, 10, 2000, param="m")
    assert time.perf_counter() - start < 0.5
    monkeypatch.setenv("PAPERKIT_MAX_BYTES", "100000")
    assert_param_error(enumerate_null, 30, 5, param="n")  # C(35, 5) = 324632 rows of 5 int64
    assert_param_error(sample_null, 5, 3, 10_000, param="size")
    assert enumerate_null(6, 3).shape == (84, 3)


def test_bad_arguments():
    assert_param_error(sample_null, 5, 0, 10, param="m")
    assert_param_error(sample_null, -1, 2, 10, param="n")
    assert_param_error(sample_null, 5.0, 2, 10, param="n", exc=TypeError)
    assert_param_error(null_order_stat_pmf, 5, 3, 4, param="i")
    assert_param_error(enumerate_null, 5, 0, param="m")
