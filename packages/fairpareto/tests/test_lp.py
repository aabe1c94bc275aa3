"""The exact LP front against a brute-force search and closed forms."""

import numpy as np

from conftest import make_bins
from fairpareto import fair_classification_front_lp
from fairpareto.binning import bin_scores
from fairpareto.lp import lp_error, lp_thresholds
from fairpareto.program import closed_form_endpoint


def _brute_force(bins, gamma, step=0.05):
    """Least error over a grid of acceptance probabilities (s_1, s_2, t_1, t_2) in [0, 1]^4."""
    grid = np.arange(0.0, 1.0 + 1e-12, step)
    s1, s2, t1, t2 = (x.ravel() for x in np.meshgrid(grid, grid, grid, grid, indexing="ij"))
    s, t = np.column_stack([s1, s2]), np.column_stack([t1, t2])
    ok = np.abs(s @ bins.U - t @ bins.V) <= gamma + 1e-12
    err = (
        bins.alpha * (s * (1 - bins.u) + (1 - s) * bins.u) @ bins.U
        + (1 - bins.alpha) * (t * (1 - bins.v) + (1 - t) * bins.v) @ bins.V
    )
    return err[ok].min()


def test_lp_matches_brute_force_on_a_grid():
    bins = make_bins(2, 2, seed=1)
    for gamma in (0.0, 0.2):
        lp = lp_error(bins, np.array([gamma]))[0]
        brute = _brute_force(bins, gamma)
        # the grid holds feasible points within (step * max mass) of any LP vertex
        assert lp <= brute + 1e-12
        assert brute - lp <= 0.05


def test_lp_endpoint_is_bayes_error():
    bins = make_bins(5, 4, seed=2)
    err, s, t = lp_thresholds(bins, 1.0)
    assert abs(err - closed_form_endpoint(bins, "error")) <= 1e-9
    np.testing.assert_allclose(s, bins.u > 0.5)  # the Bayes classifier per group
    np.testing.assert_allclose(t, bins.v > 0.5)


def test_lp_parity_and_monotonicity():
    bins = make_bins(4, 6, seed=3)
    gammas = np.linspace(0, 1, 6)
    errs = lp_error(bins, gammas)
    assert np.all(np.diff(errs) <= 1e-12)
    assert np.all(np.diff(errs, 2) >= -1e-9)  # convex in gamma (the LP value is)
    _, s, t = lp_thresholds(bins, 0.1)
    assert abs(bins.U @ s - bins.V @ t) <= 0.1 + 1e-9


def test_front_from_scores_uses_the_binning():
    rng = np.random.default_rng(0)
    A = rng.integers(0, 2, 300)
    scores = rng.beta(2 + A, 2)
    got = fair_classification_front_lp(scores, A, [0.0, 0.5], n_bins=4, binning="quantile")
    want = lp_error(bin_scores(scores, A, 4, "quantile"), np.array([0.0, 0.5]))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
