import numpy as np
import pytest

import mconformal.nulls
from mconformal import (
    AGGREGATORS,
    Aggregator,
    aggregated_pvalues,
    enumerate_null,
    get_aggregator,
    majority_order,
    monte_carlo_pvalue,
    null_order_stat_cdf,
    sample_null,
)
from paperkit.testing import assert_close, assert_param_error


@pytest.mark.parametrize("name", AGGREGATORS)
def test_m1_gives_the_single_view_pvalue(name):
    counts = np.arange(21)[:, None]
    assert_close(aggregated_pvalues(counts, 20, name), (np.arange(21) + 1) / 21, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", AGGREGATORS)
def test_exact_pvalue_is_the_enumerated_probability(name):
    """P_agg(k) = #{K in A_{n,m} : F(K) <= F(k)} / |A_{n,m}|, brute force over A_{7,3}, for the
    closed-form, DP and enumeration paths alike."""
    rows = enumerate_null(7, 3)
    agg = get_aggregator(name)
    f = agg.statistic(rows, 7)
    brute = (f[None, :] <= f[:, None] + 1e-9).mean(axis=1)
    assert_close(aggregated_pvalues(rows, 7, name), brute, rtol=1e-12, atol=0)


@pytest.mark.parametrize("name", AGGREGATORS)
def test_exact_law_is_valid_at_every_level(name):
    """P(P_agg <= a) <= a under the uniform law on A_{12,4}, for every a (super-uniformity)."""
    p = np.sort(aggregated_pvalues(enumerate_null(12, 4), 12, name))
    levels = np.unique(p)
    below = np.searchsorted(p, levels, side="right") / len(p)
    assert (below <= levels + 1e-12).all()


def test_monte_carlo_agrees_with_enumeration():
    rows = sample_null(15, 4, 300, 0)
    exact = aggregated_pvalues(rows, 15, "quantile")
    mc = aggregated_pvalues(rows, 15, "quantile", exact_limit=1, n_null=20_000, seed=3)
    assert np.abs(mc - exact).max() < 4 * np.sqrt(0.25 / 20_000) + 1 / 20_001


def test_majority_is_the_refined_vote_threshold():
    """Include y iff #{j : p_j > beta_alpha} >= ceil(m/2), beta_alpha the largest grid value with
    P_null(P_(r) <= beta) <= alpha: brute force over A_{10,5}."""
    n, m, alpha = 10, 5, 0.1
    rows = enumerate_null(n, m)
    r = majority_order(m)
    grid = (np.arange(n + 1) + 1) / (n + 1)
    cdf = null_order_stat_cdf(n, m, r)
    beta = grid[cdf <= alpha].max()
    votes = ((rows + 1) / (n + 1) > beta).sum(axis=1) >= np.ceil(m / 2)
    assert np.array_equal(aggregated_pvalues(rows, n, "majority") > alpha, votes)
    assert majority_order(1) == 1 and majority_order(2) == 2 and majority_order(5) == 3


def test_min_dominates_bonferroni():
    rows = enumerate_null(30, 3)
    p = (rows + 1) / 31
    bonferroni_keeps = p.min(axis=1) > 0.1 / 3
    assert (aggregated_pvalues(rows, 30, "min") > 0.1)[bonferroni_keeps].all()


def test_callable_aggregator_matches_builtin():
    rows = enumerate_null(9, 3)

    def fisher(p):
        return np.log(p).sum(axis=1)

    assert_close(
        aggregated_pvalues(rows, 9, fisher), aggregated_pvalues(rows, 9, "fisher"), rtol=0, atol=0
    )


def test_mc_pvalue_is_valid_with_fresh_draws():
    """B = 200 fresh null draws per repetition, 5000 repetitions: the rejection
    rate at alpha = 0.1 stays <= alpha + 3 SE."""
    n, m, reps, B, alpha = 30, 4, 5000, 200, 0.1
    agg = get_aggregator("quantile")
    draws = sample_null(n, m, reps * (B + 1), np.random.default_rng(0))
    f = agg.statistic(draws, n).reshape(reps, B + 1)
    p = np.array([monte_carlo_pvalue(row[0], row[1:]) for row in f])
    rate = np.mean(p <= alpha)
    assert rate <= alpha + 3 * np.sqrt(alpha * (1 - alpha) / reps)
    assert rate > 0.05  # the MC p-value is not trivially conservative here


def test_bad_inputs():
    assert_param_error(get_aggregator, "median", param="aggregator")
    assert_param_error(aggregated_pvalues, np.array([[0, 11]]), 10, "mean", param="counts")
    assert_param_error(aggregated_pvalues, np.array([[0, 1]]), 10, lambda p: p, param="aggregator")
    assert_param_error(Aggregator, "median", "sum", param="name")
    assert_param_error(Aggregator, "mean", "order", param="law")  # mean's law is the sum's


def test_mean_beyond_the_dp_limit_is_enumerated_or_drawn(monkeypatch):
    """Past SUM_DP_LIMIT the mean's law is enumerated (exact, the same p-values) or drawn."""
    counts = np.array([[0, 1, 5], [3, 8, 10], [10, 10, 10]])
    exact = aggregated_pvalues(counts, 10, "mean")
    monkeypatch.setattr(mconformal.nulls, "SUM_DP_LIMIT", 1)
    assert_close(aggregated_pvalues(counts, 10, "mean"), exact, rtol=1e-12, atol=0)
    drawn = aggregated_pvalues(counts, 10, "mean", n_null=20_000, exact_limit=1)
    assert_close(drawn, exact, rtol=0, atol=0.02)
