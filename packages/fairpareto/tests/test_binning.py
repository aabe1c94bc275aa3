import numpy as np

from fairpareto import bin_scores


def test_levels_are_bin_means_and_masses_sum_to_one():
    scores = np.array([0.05, 0.1, 0.45, 0.9, 0.2, 0.3, 0.7])
    A = np.array([1, 1, 1, 1, 0, 0, 0])
    b = bin_scores(scores, A, n_bins=2, binning="uniform")
    # group 1: range [0.05, 0.9] split at 0.475 -> {0.05, 0.1, 0.45} and {0.9}
    np.testing.assert_allclose(b.u, [0.2, 0.9])
    np.testing.assert_allclose(b.U, [0.75, 0.25])
    np.testing.assert_allclose(b.V.sum(), 1.0)
    assert b.alpha == 4 / 7


def test_exact_and_quantile_binning_and_weights():
    scores = np.array([0.2, 0.2, 0.6, 0.6, 0.6, 0.1, 0.9])
    A = np.array([1, 1, 1, 1, 1, 0, 0])
    exact = bin_scores(scores, A, binning="exact")
    np.testing.assert_allclose(exact.u, [0.2, 0.6])
    np.testing.assert_allclose(exact.U, [0.4, 0.6])
    w = np.array([3.0, 3.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    weighted = bin_scores(scores, A, binning="exact", sample_weight=w)
    np.testing.assert_allclose(weighted.U, [6 / 9, 3 / 9])
    assert weighted.alpha == 9 / 11
    q = bin_scores(np.linspace(0, 1, 100), np.arange(100) % 2, n_bins=4, binning="quantile")
    np.testing.assert_allclose(q.U, 0.25 * np.ones(4), atol=0.02)


def test_swapped_exchanges_the_groups():
    b = bin_scores(np.array([0.1, 0.4, 0.8]), np.array([0, 1, 1]), n_bins=2)
    s = b.swapped()
    np.testing.assert_array_equal(s.u, b.v)
    assert s.alpha == 1 - b.alpha
