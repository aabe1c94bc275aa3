import numpy as np
from scipy import stats

from mconformal import conformal_counts, conformal_pvalues, null_order_stat_pmf
from paperkit.testing import assert_close, assert_param_error


def test_counts_against_brute_force_without_ties():
    rng = np.random.default_rng(0)
    cal, test = rng.normal(size=40), rng.normal(size=(7, 3))
    expected = (cal[None, None, :] < test[..., None]).sum(-1)  # naive O(n) count per score
    assert np.array_equal(conformal_counts(cal, test), expected)
    assert_close(conformal_pvalues(cal, test), (expected + 1) / 41, rtol=0, atol=1e-15)


def test_conservative_counts_ties_as_smaller():
    cal = np.array([0.1, 0.5, 0.5, 0.5, 0.9])
    assert conformal_counts(cal, np.array([0.5]), tie_break="conservative")[0] == 4
    draws = [conformal_counts(cal, np.array([0.5]), rng=s)[0] for s in range(400)]
    assert set(draws) == {1, 2, 3, 4}  # random: uniform position among the 3 tied points
    assert abs(np.mean(draws) - 2.5) < 0.15


def test_random_ties_keep_the_exact_joint_law():
    """Scores on 3 values only: with random tie-breaking the sorted counts of the m views (which
    also tie with each other) still follow the closed-form law of K_(i)."""
    rng = np.random.default_rng(1)
    n, m, reps = 12, 3, 6000
    sorted_k = np.empty((reps, m), dtype=int)
    for r in range(reps):
        scores = rng.integers(3, size=n + m).astype(float)
        sorted_k[r] = np.sort(conformal_counts(scores[:n], scores[n:], rng=rng))
    for i in range(1, m + 1):
        expected = reps * null_order_stat_pmf(n, m, i)
        observed = np.bincount(sorted_k[:, i - 1], minlength=n + 1)
        assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_pvalue_is_uniform_on_the_grid():
    rng = np.random.default_rng(2)
    n = 9
    p = [conformal_pvalues(rng.random(n), rng.random(1), rng=rng)[0] for _ in range(5000)]
    counts = np.unique(np.round(np.array(p) * (n + 1)).astype(int), return_counts=True)[1]
    assert len(counts) == n + 1 and stats.chisquare(counts).pvalue > 1e-3


def test_bad_inputs():
    assert_param_error(conformal_pvalues, np.ones((3, 2)), np.ones(2), param="cal_scores_y")
    assert_param_error(conformal_pvalues, np.array([]), np.ones(2), param="cal_scores_y")
    assert_param_error(conformal_pvalues, np.ones(3), np.ones(2), "up", param="tie_break")
    assert_param_error(conformal_counts, np.ones(3), np.array([np.nan]), param="test_scores")
