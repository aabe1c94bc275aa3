"""The running statistics equal a recomputation from the raw history."""

import numpy as np

from oraclebandit import AROQ, CorrelatedGaussianSemiBandit, SemiBanditStats, TopMOracle


def test_statistics_equal_recomputation():
    d, m, T = 8, 3, 400
    env = CorrelatedGaussianSemiBandit(np.linspace(0.2, 0.8, d), 0.05 * (np.eye(d) + 0.5), seed=1)
    alg = AROQ(d, m, T, TopMOracle(d, m), covariance=True, random_state=0)
    X = env.draws(T)
    masks = np.zeros((T, d), dtype=bool)
    for t in range(T):
        masks[t] = alg.select()
        alg.update(masks[t], X[t])
    stats = alg.stats
    counts = masks.sum(0)
    assert np.array_equal(stats.counts, counts)
    observed = np.where(masks, X, 0.0)
    assert np.allclose(stats.means, observed.sum(0) / np.maximum(counts, 1))
    sigma = stats.covariance_matrix()
    for i in range(d):
        for j in range(d):
            both = masks[:, i] & masks[:, j]
            assert stats.pair_counts[i, j] == both.sum()
            if both.sum() >= 2:
                expected = np.cov(X[both, i], X[both, j])[0, 1]
                assert np.isclose(sigma[i, j], expected)
            else:
                assert sigma[i, j] == 0.25
    again = SemiBanditStats.from_history(masks, X)
    assert np.allclose(again.covariance_matrix(), sigma)


def test_worst_case_until_two_co_observations():
    s = SemiBanditStats(2, covariance=True)
    s.update(np.array([0, 1]), np.array([0.3, 0.3]))
    assert (s.covariance_matrix() == 0.25).all()  # one sample: never a variance of 0
    s.update(np.array([0, 1]), np.array([0.5, 0.1]))
    assert np.isclose(s.covariance_matrix()[0, 1], np.cov([0.3, 0.5], [0.3, 0.1])[0, 1])
