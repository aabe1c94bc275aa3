import math

import numpy as np
import pytest

from conftest import all_masks
from noisysubmod import (
    Cardinality,
    GraphCut,
    PartitionMatroid,
    Unconstrained,
    WeightedCoverage,
    brute_force,
    double_greedy,
    greedy,
    measured_continuous_greedy,
    pipage_round,
    random_feasible,
)

E1 = 1 - 1 / math.e


def test_exact_greedy_beats_one_minus_one_over_e():
    """Nemhauser-Wolsey-Fisher: greedy >= (1 - 1/e) OPT; 30 coverage instances, n = 12, k = 3,
    OPT by brute force over all 2^12 sets."""
    for seed in range(30):
        f = WeightedCoverage.random(n=12, universe=40, density=0.15, seed=seed)
        _, opt = brute_force(f, Cardinality(3))
        S = greedy(f, Cardinality(3))
        assert len(S) == 3 and f(S) >= E1 * opt - 1e-9


def test_greedy_on_partition_matroid_is_feasible_and_half_opt():
    M = PartitionMatroid([list(range(6)), list(range(6, 12))], [2, 1])
    for seed in range(10):
        f = WeightedCoverage.random(n=12, universe=40, density=0.15, seed=seed)
        S = greedy(f, M)
        mask = np.isin(np.arange(12), S)
        assert M.is_independent(mask) and len(S) == 3
        assert f(S) >= 0.5 * brute_force(f, M)[1]  # Fisher et al.: 1/2 on a matroid


def test_double_greedy_half_of_max_cut(random_graph):
    """Buchbinder et al.: E f(S) >= OPT / 2; mean over 300 seeds >= 0.5 OPT - 0.02 OPT on 10
    random graphs with n = 14 (OPT by brute force)."""
    for g in range(10):
        f = GraphCut(random_graph(14, 0.4, g))
        opt = f.evaluate(all_masks(14)).max()
        values = [f(double_greedy(f, random_state=s)) for s in range(300)]
        assert np.mean(values) >= (0.5 - 0.02) * opt


def test_mcg_monotone_partition_matroid():
    """Feldman-Naor-Schwartz, monotone: mean ratio >= 1 - 1/e - 0.03 (n = 12, brute-force OPT)."""
    M = PartitionMatroid([list(range(4)), list(range(4, 8)), list(range(8, 12))], [1, 1, 1])
    ratios = []
    for seed in range(10):
        f = WeightedCoverage.random(n=12, universe=40, density=0.15, seed=seed)
        S = measured_continuous_greedy(f, M, eps=0.05, n_samples=20, random_state=seed)
        assert M.is_independent(np.isin(np.arange(12), S))
        ratios.append(f(S) / brute_force(f, M)[1])
    assert np.mean(ratios) >= E1 - 0.03


def test_mcg_non_monotone_cut_under_cardinality(random_graph):
    """Feldman-Naor-Schwartz, non-monotone: mean ratio >= 1/e - 0.03 (cut, k = 4, n = 12)."""
    ratios = []
    for seed in range(10):
        f = GraphCut(random_graph(12, 0.4, 100 + seed))
        S = measured_continuous_greedy(f, Cardinality(4), eps=0.05, n_samples=20, random_state=seed)
        assert len(S) <= 4
        ratios.append(f(S) / brute_force(f, Cardinality(4))[1])
    assert np.mean(ratios) >= 1 / math.e - 0.03


def _multilinear(f, x, rng, samples=20_000):
    return f.evaluate(rng.random((samples, len(x))) < x).mean()


@pytest.mark.parametrize("which", ["cardinality", "partition"])
def test_pipage_rounding_feasible_and_keeps_value(which):
    """Every rounding feasible; E f(rounded) >= F(x) - 0.05 OPT (Monte Carlo, 2000 roundings)."""
    f = WeightedCoverage.random(n=12, universe=40, density=0.15, seed=3)
    M = (
        Cardinality(4)
        if which == "cardinality"
        else PartitionMatroid([list(range(6)), list(range(6, 12))], [2, 2])
    )
    rng = np.random.default_rng(0)
    x = rng.random(12)
    block, caps = M.blocks_of(12)
    for j, cap in enumerate(caps):  # scale each block into the polytope
        s = x[block == j].sum()
        x[block == j] *= min(1.0, cap / s) * 0.97
    opt = brute_force(f, M)[1]
    values = []
    for s in range(2000):
        S = pipage_round(x, M, random_state=s)
        assert M.is_independent(np.isin(np.arange(12), S))
        values.append(f(S))
    assert np.mean(values) >= _multilinear(f, x, rng) - 0.05 * opt


def test_random_feasible_and_determinism(random_graph):
    M = PartitionMatroid([[0, 1, 2], [3, 4, 5]], [1, 2])
    S = random_feasible(6, M, random_state=3)
    assert len(S) == 3 and M.is_independent(np.isin(np.arange(6), S))
    f = GraphCut(random_graph(10, 0.5, 0))
    a = measured_continuous_greedy(f, Cardinality(3), eps=0.2, n_samples=5, random_state=2)
    b = measured_continuous_greedy(f, Cardinality(3), eps=0.2, n_samples=5, random_state=2)
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(
        double_greedy(f, random_state=4), double_greedy(f, random_state=4)
    )


def test_plain_callables_work_as_oracles():
    f = WeightedCoverage.random(n=10, universe=30, density=0.2, seed=0)

    class Plain:
        n = 10

        def __call__(self, mask):
            return f(mask)

    np.testing.assert_array_equal(greedy(Plain(), Cardinality(3)), greedy(f, Cardinality(3)))


def test_infeasible_constraints_refused():
    with pytest.raises(ValueError, match="'caps'"):
        PartitionMatroid([[0, 1], [2]], [1, 2])
    f = WeightedCoverage.random(n=5, universe=10, density=0.3, seed=0)
    with pytest.raises(ValueError, match="'constraint'"):
        greedy(f, Cardinality(6))
    with pytest.raises(ValueError, match="'constraint'"):
        double_greedy(f, Cardinality(2))
    with pytest.raises(TypeError, match="'f'"):
        greedy(3, Unconstrained())
