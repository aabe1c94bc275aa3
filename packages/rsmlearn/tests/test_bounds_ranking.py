"""Bound helpers (paper, Sec. 4) and the Bayes decisions of multi-label and ranking (Sec. 5)."""

import itertools

import numpy as np
import pytest

from rsmlearn import SubsetRankingRSM, bounds, datasets
from rsmlearn.ranking import ndcg_per_query, normalised_gains


def test_bounds_are_consistent_and_monotone():
    """Check 10."""
    eps = np.linspace(0, 1, 11)
    for kappa in (1.0, 2.0, 4.0):
        l2 = [bounds.l2_from_surrogate(e, kappa) for e in eps]
        b01 = [bounds.binary01_from_surrogate(e, kappa) for e in eps]
        np.testing.assert_allclose(l2, 2 * eps / kappa, rtol=1e-15)
        np.testing.assert_allclose(b01, 2 * np.sqrt(2 * eps / kappa), rtol=1e-15)
        assert np.all(np.diff(l2) > 0) and np.all(np.diff(b01) > 0)
    assert bounds.l2_from_surrogate(0.1, 1.0) > bounds.l2_from_surrogate(0.1, 4.0)


def test_multilabel_oracle_threshold_minimises_hamming():
    """Check 8a: thresholding the true marginals at ½ attains the minimal expected Hamming loss
    among all 2^L label vectors (independent labels: Hamming risk is separable)."""
    rng = np.random.default_rng(0)
    for mu in rng.uniform(0, 1, (20, 4)):
        risks = {
            h: np.sum(np.where(np.array(h) == 1, 1 - mu, mu))
            for h in itertools.product((0, 1), repeat=4)
        }
        best = min(risks.values())
        assert risks[tuple((mu > 0.5).astype(int))] == pytest.approx(best)


def _expected_ndcg(scores, rels, probs):
    return float(
        sum(p * ndcg_per_query(scores[None], r[None])[0] for r, p in zip(rels, probs, strict=True))
    )


def test_sorting_by_normalised_statistic_is_ndcg_optimal():
    """Check 8b: for explicit distributions over relevance vectors of L = 4 documents, sorting by
    T = E[G(r)/z(r)] attains the maximal expected NDCG over the 24 permutations."""
    rng = np.random.default_rng(1)
    for _ in range(20):
        rels = rng.integers(0, 3, (6, 4))
        probs = rng.dirichlet(np.ones(6))
        T = probs @ normalised_gains(rels)
        best = max(
            _expected_ndcg(-np.array(perm, float), rels, probs)  # doc j at position perm[j]
            for perm in itertools.permutations(range(4))
        )
        assert _expected_ndcg(T, rels, probs) == pytest.approx(best, abs=1e-12)


def test_sorting_by_raw_expected_gain_is_not_ndcg_optimal():
    """Check 8c: L = 2, r = (2, 0) w.p. 0.45 and (0, 1) w.p. 0.55: E[G] = (1.35, 0.55) ranks doc 0
    first (E[NDCG] = 0.7970) while T = (0.45, 0.55) ranks doc 1 first (E[NDCG] = 0.8339)."""
    rels, probs = np.array([[2, 0], [0, 1]]), np.array([0.45, 0.55])
    EG = probs @ (2.0**rels - 1)
    T = probs @ normalised_gains(rels)
    np.testing.assert_allclose(EG, [1.35, 0.55])
    np.testing.assert_allclose(T, [0.45, 0.55])
    assert _expected_ndcg(EG, rels, probs) == pytest.approx(0.7970, abs=1e-4)
    assert _expected_ndcg(T, rels, probs) == pytest.approx(0.8339, abs=1e-4)


def test_ranking_erm_recovers_linear_statistic():
    Xq, R, T = datasets.make_subset_ranking(4000, L=8, d=10, seed=0)
    rk = SubsetRankingRSM().fit(Xq, R)
    Xt, Rt, Tt = datasets.make_subset_ranking(2000, L=8, d=10, seed=1)
    assert np.mean((rk.predict_scores(Xt) - Tt) ** 2) <= 2e-4
    assert 0 < rk.ndcg(Xt, Rt) <= 1
    assert np.all(normalised_gains(R) == (R == 2))  # at most one relevant doc: G/z = 1{relevant}


def test_ranking_shapes_are_checked():
    Xq, R, _ = datasets.make_subset_ranking(10, L=4, d=3)
    with pytest.raises(ValueError, match="'R'"):
        SubsetRankingRSM().fit(Xq, R[:, :3])
    with pytest.raises(ValueError, match="'Xq'"):
        SubsetRankingRSM().fit(Xq[:, :, 0], R)
