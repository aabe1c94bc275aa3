"""Each oracle is the exact argmax over its action set (brute force on 100 weight vectors)."""

import itertools

import numpy as np
import pytest

from oraclebandit import (
    CountingOracle,
    MatroidGreedyOracle,
    ShortestPathOracle,
    TopMOracle,
    grid_dag,
)


def _brute(actions, w):
    return actions[np.argmax(actions.astype(float) @ w)]


def test_top_m_equals_brute_force():
    oracle = TopMOracle(d=10, m=3)
    actions = oracle.actions()
    assert len(actions) == 120 and (actions.sum(1) == 3).all()
    rng = np.random.default_rng(0)
    for _ in range(100):
        w = rng.random(10)
        assert np.array_equal(oracle(w), _brute(actions, w))


@pytest.mark.parametrize("groups,capacities", [(None, None), (np.repeat([0, 1], 5), [2, 1])])
def test_matroid_greedy_equals_brute_force(groups, capacities):
    oracle = MatroidGreedyOracle(d=10, m=3, groups=groups, capacities=capacities)
    actions = oracle.actions()
    independent = [
        s
        for k in range(1, 4)
        for s in itertools.combinations(range(10), k)
        if groups is None
        or all(sum(groups[i] == g for i in s) <= c for g, c in enumerate(capacities))
    ]
    assert len(actions) == len(independent)
    rng = np.random.default_rng(1)
    for _ in range(100):
        w = rng.random(10) - 0.2  # some negative weights: the greedy skips them
        got = oracle(w)
        assert oracle.feasible(got)
        assert np.isclose(w[got].sum(), max(0.0, (actions.astype(float) @ w).max()))


def test_shortest_path_equals_brute_force_on_the_grid_dag():
    oracle = ShortestPathOracle(grid_dag(4, 4))
    actions = oracle.actions()
    assert oracle.d == 24 and oracle.m == 6 and len(actions) == 20  # C(6, 3) paths
    rng = np.random.default_rng(2)
    for scale in (1.0, 3.0):  # optimistic indices above 1 too
        for _ in range(50):
            w = scale * rng.random(24)
            got = oracle(w)
            assert oracle.feasible(got) and np.isclose(w[got].sum(), (actions @ w).max())
    assert all(oracle.feasible(a) for a in actions)
    assert not oracle.feasible(actions[0] | actions[-1])
    assert not oracle.feasible(np.eye(24, dtype=bool)[0])


def test_counting_oracle_counts_and_delays():
    oracle = CountingOracle(TopMOracle(4, 2), delay=1e-3)
    import time

    start = time.perf_counter()
    for _ in range(5):
        oracle(np.arange(4.0))
    assert oracle.n_calls == 5 and time.perf_counter() - start >= 5e-3
    assert oracle.d == 4 and oracle.m == 2 and len(oracle.actions()) == 6
