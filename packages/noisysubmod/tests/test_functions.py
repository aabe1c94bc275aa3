import numpy as np
import pytest

from conftest import all_masks, assert_submodular
from noisysubmod.functions import FacilityLocation, GraphCut, WeightedCoverage

N = 8


def _weighted(W, rng):
    U = np.triu(W * rng.random(W.shape).clip(0.1), 1)
    return U + U.T


def _instances(random_graph):
    rng = np.random.default_rng(0)
    return [
        (WeightedCoverage.random(n=N, universe=20, density=0.25, seed=1), True),
        (GraphCut(random_graph(N, 0.5, 2)), False),
        (GraphCut(_weighted(random_graph(N, 0.5, 3), rng)), False),
        (FacilityLocation(rng.random((15, N))), True),
    ]


def test_functions_are_submodular_and_monotone_as_claimed(random_graph):
    """Brute force over all A subset B, e notin B on n = 8."""
    for f, monotone in _instances(random_graph):
        values = f.evaluate(all_masks(N))
        assert f.is_monotone == monotone
        assert_submodular(values, N, monotone)


def test_vectorised_values_match_definitions(random_graph):
    W = random_graph(N, 0.5, 5)
    cut = GraphCut(W)
    cov = WeightedCoverage.random(n=N, universe=20, density=0.3, seed=4)
    S = np.sort(np.random.default_rng(6).choice(N, size=3, replace=False))
    out = np.setdiff1d(np.arange(N), S)
    assert cut(S) == pytest.approx(W[np.ix_(S, out)].sum())
    covered = cov.incidence[S].any(axis=0)
    assert cov(S) == pytest.approx(float(cov.weights[covered].sum()), rel=1e-6)
    sim = np.random.default_rng(7).random((9, N))
    assert FacilityLocation(sim)(S) == pytest.approx(sim[:, S].max(axis=1).sum())
    assert FacilityLocation(sim)([]) == 0.0


def test_extensions_match_evaluate(random_graph):
    for f, _ in _instances(random_graph):
        masks = np.random.default_rng(1).random((6, N)) < 0.4
        cand = np.array([0, 3, 7])
        base, ext = f.extensions(masks, cand)
        grown = np.repeat(masks, 3, axis=0)
        grown[np.arange(18), np.tile(cand, 6)] = True
        np.testing.assert_allclose(ext.ravel(), f.evaluate(grown), rtol=1e-5, atol=1e-9)


def test_bad_data_refused():
    with pytest.raises(ValueError, match="'weights'"):
        WeightedCoverage(np.ones((2, 3), bool), np.array([1.0, -1.0, 0.0]))
    with pytest.raises(ValueError, match="'adjacency'"):
        GraphCut(np.array([[0.0, 1.0], [0.0, 0.0]]))
    with pytest.raises(ValueError, match="'similarity'"):
        FacilityLocation(-np.ones((2, 2)))
