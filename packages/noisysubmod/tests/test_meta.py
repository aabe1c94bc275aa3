import math
import warnings

import numpy as np
import pytest

from conftest import all_masks, assert_submodular
from noisysubmod import (
    Cardinality,
    GraphCut,
    NoisyOracle,
    Unconstrained,
    WeightedCoverage,
    double_greedy,
    greedy,
    measured_continuous_greedy,
    meta_maximize,
    smoothed_oracle,
)


def test_smoothed_surrogate_is_submodular():
    """g(S) = mean_l f(S cup H_l) is submodular (and monotone for coverage): brute force, n = 10."""
    f = WeightedCoverage.random(n=10, universe=30, density=0.2, seed=0)
    g = smoothed_oracle(f, [[8, 9], [7, 9], [7, 8]])
    assert_submodular(g.evaluate(all_masks(10)), 10, monotone=True)
    W = np.triu(np.random.default_rng(1).random((10, 10)) < 0.5, 1).astype(float)
    cut = smoothed_oracle(GraphCut(W + W.T), [[0, 1], [2, 3]])
    assert_submodular(cut.evaluate(all_masks(10)), 10, monotone=False)


def test_pool_and_bundles_defaults():
    f = WeightedCoverage.random(n=150, universe=200, density=0.03, seed=0)
    S, info = meta_maximize(NoisyOracle(f, seed=0), Cardinality(10), random_state=5)
    p = math.ceil(4 * math.log2(150))
    assert len(info["pool"]) == p == 29 and info["n_bundles"] == 48
    assert not set(S.tolist()) & set(info["pool"].tolist())  # the pool is never chosen
    bundles = {tuple(b) for b in info["bundles"]}
    assert len(bundles) == 48 and all(len(b) == 2 and set(b) <= set(info["pool"]) for b in bundles)


def test_theory_bundles_and_top_up():
    f = WeightedCoverage.random(n=150, universe=200, density=0.03, seed=0)
    _, info = meta_maximize(
        NoisyOracle(f, seed=0), Cardinality(3), n_bundles="theory", random_state=0
    )
    assert info["n_bundles"] == min(math.comb(29, 2), math.ceil(math.log(150) / 0.01)) == 406
    small = WeightedCoverage.random(n=30, universe=60, density=0.1, seed=0)  # p = 6: C(6,2) = 15
    _, info = meta_maximize(NoisyOracle(small, seed=0), Cardinality(3), random_state=0)
    sizes = [len(b) for b in info["bundles"]]
    assert info["n_bundles"] == 48 and sizes.count(2) == 15 and sizes.count(3) == 20
    tiny = WeightedCoverage.random(n=20, universe=60, density=0.1, seed=0)  # p = 4: 11 bundles
    with pytest.warns(UserWarning, match="bundles"):
        _, info = meta_maximize(NoisyOracle(tiny, seed=0), Cardinality(3), random_state=0)
    assert info["n_bundles"] == 6 + 4 + 1


def test_query_accounting_and_determinism():
    f = WeightedCoverage.random(n=60, universe=200, density=0.05, seed=1)
    for base, constraint in [
        ("greedy", Cardinality(4)),
        ("measured_continuous_greedy", Cardinality(4)),
        ("double_greedy", Unconstrained()),
    ]:
        noisy = NoisyOracle(f, noise="gaussian", sigma=0.5, seed=2)
        opts = {"eps": 0.25, "n_samples": 3} if base == "measured_continuous_greedy" else None
        S, info = meta_maximize(noisy, constraint, base=base, random_state=3, base_options=opts)
        assert info["n_queries"] == noisy.n_queries > 0
        S2, _ = meta_maximize(
            NoisyOracle(f, noise="gaussian", sigma=0.5, seed=2),
            constraint,
            base=base,
            random_state=3,
            base_options=opts,
        )
        np.testing.assert_array_equal(S, S2)
        assert info["surrogate_value"] > 0


def test_greedy_queries_count_exactly():
    """Meta-greedy with k steps on n' = n - p elements asks L (1 + n' + (n'-1) + ...) sets, plus
    L for F(S) at the end."""
    f = WeightedCoverage.random(n=50, universe=100, density=0.05, seed=1)
    noisy = NoisyOracle(f, seed=2)
    with pytest.warns(UserWarning, match="fewer than 16"):
        _, info = meta_maximize(noisy, Cardinality(3), n_bundles=10, random_state=0)
    p = min(math.ceil(4 * math.log2(50)), 10)
    m = 50 - p
    assert info["n_queries"] == 10 * (3 + m + (m - 1) + (m - 2) + 1)


def test_pad_output_keeps_feasibility():
    f = WeightedCoverage.random(n=60, universe=200, density=0.05, seed=1)
    S, _ = meta_maximize(
        NoisyOracle(f, seed=2),
        Unconstrained(),
        base="double_greedy",
        pad_output=True,
        random_state=1,
    )
    S2, _ = meta_maximize(NoisyOracle(f, seed=2), Cardinality(5), pad_output=True, random_state=1)
    assert len(S2) == 5


@pytest.mark.parametrize("base", ["greedy", "double_greedy", "measured_continuous_greedy"])
def test_zero_noise_limit(base):
    """sigma = 0: meta's mean ratio over 10 instances >= 0.93 x the exact base (the pool removes
    p/n ~ 19 % of the elements at n = 150; worst-case loss p/n)."""
    meta, exact = [], []
    for seed in range(10):
        if base == "double_greedy":
            W = np.triu(np.random.default_rng(seed).random((120, 120)) < 0.08, 1).astype(float)
            f, constraint = GraphCut(W + W.T), Unconstrained()
            ref = f(double_greedy(f, random_state=seed))
            opts = None
        else:
            f = WeightedCoverage.random(n=150, universe=500, density=0.03, seed=seed)
            constraint = Cardinality(10)
            opts = None if base == "greedy" else {"eps": 0.1, "n_samples": 5}
            ref = f(
                greedy(f, constraint)
                if base == "greedy"
                else measured_continuous_greedy(f, constraint, **opts, random_state=seed)
            )
        noisy = NoisyOracle(f, noise="gaussian", sigma=0.0, seed=seed)
        S, _ = meta_maximize(noisy, constraint, base=base, random_state=seed, base_options=opts)
        meta.append(f(S))
        exact.append(ref)
    assert np.mean(np.array(meta) / np.array(exact)) >= 0.93


def test_meta_beats_naive_greedy_under_exponential_noise():
    """Coverage n = 150, universe 500, density 0.03, k = 10, Exp(1) noise, 10 seeds:
    mean ratio(meta-greedy, L = 48) >= mean ratio(naive noisy greedy) + 0.03."""
    meta, naive = [], []
    for seed in range(10):
        f = WeightedCoverage.random(n=150, universe=500, density=0.03, seed=seed)
        ref = f(greedy(f, Cardinality(10)))
        S, _ = meta_maximize(
            NoisyOracle(f, "exponential", 1.0, seed=seed), Cardinality(10), random_state=seed
        )
        meta.append(f(S) / ref)
        naive.append(
            f(greedy(NoisyOracle(f, "exponential", 1.0, seed=seed), Cardinality(10))) / ref
        )
    assert np.mean(meta) >= np.mean(naive) + 0.03


def test_bad_meta_arguments():
    f = WeightedCoverage.random(n=20, universe=60, density=0.1, seed=0)
    noisy = NoisyOracle(f, seed=0)
    with pytest.raises(ValueError, match="'pool_size'"):
        meta_maximize(noisy, Cardinality(3), pool_size=11)
    with pytest.raises(ValueError, match="'base'"):
        meta_maximize(noisy, Cardinality(3), base="local_search")
    with pytest.raises(ValueError, match="'constraint'"):
        meta_maximize(noisy, Cardinality(30))
    with pytest.raises(TypeError, match="'noisy'"):
        meta_maximize(3, Cardinality(3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="'constraint'"):
            meta_maximize(noisy, Cardinality(3), base="double_greedy")
