import itertools

import numpy as np
import pytest

from ctxbandit.envs import CombinatorialAvailabilityEnv, FiniteActionEnv, g, pseudo_regret


def test_comparator_is_the_best_deterministic_policy():
    """3 action sets, uniform D: brute force over all prod |A_i| deterministic policies; the
    smallest expected cumulative loss equals <g(Y_T), Y_T> (paper, Sec. 2)."""
    rng = np.random.default_rng(0)
    sets = [rng.standard_normal((K, 4)) for K in (3, 4, 5)]
    env = FiniteActionEnv(d=4, T=50, action_sets=sets, seed=3)
    Y = env.losses_.sum(0)
    best = min(
        np.mean([sets[i][choice[i]] @ Y for i in range(3)])
        for choice in itertools.product(*(range(len(A)) for A in sets))
    )
    assert abs(g(env, Y) @ Y - best) < 1e-12


def test_regret_of_the_comparators_own_actions_is_zero_in_expectation():
    env = CombinatorialAvailabilityEnv(d=6, k=2, T=400, noise=0.0, seed=1)
    Y = env.losses_.sum(0)
    acts = []
    for t in range(env.T):
        c = env.context(t)
        vals = np.where(c["mask"], Y, np.inf)
        a = np.zeros(6)
        a[np.argsort(vals, kind="stable")[:2]] = 1
        acts.append(a)
    # the greedy policy of Y_T on the realised contexts: zero up to context sampling noise
    assert abs(pseudo_regret(env, np.array(acts))) < 0.05 * abs(g(env, Y) @ Y)


def test_losses_are_bounded_and_switch():
    env = CombinatorialAvailabilityEnv(d=10, k=3, T=400, seed=0)
    assert env.losses_.min() >= 0 and env.losses_.max() <= 1 / 3
    assert all(env.context(t)["mask"].sum() >= 3 for t in range(env.T))
    quarter = env.losses_.reshape(4, 100, 10).mean(1)
    assert np.abs(quarter[0] - quarter[1]).max() > 0.05  # the base vector switched
    fin = FiniteActionEnv(d=5, T=200, seed=0)
    assert np.linalg.norm(fin.losses_, axis=1).max() <= 1 + 1e-12


def test_an_action_not_in_the_context_is_refused():
    env = CombinatorialAvailabilityEnv(d=5, k=2, T=10, seed=0)
    mask = env.context(0)["mask"]
    bad = np.zeros(5)
    bad[np.flatnonzero(~mask)[:1]] = 1
    bad[np.flatnonzero(mask)[:1]] = 1
    with pytest.raises(ValueError, match="'action'"):
        env.loss(0, bad)
    with pytest.raises(ValueError, match="'action'"):
        env.loss(0, np.ones(5))
    fin = FiniteActionEnv(d=3, K=4, T=5, seed=0)
    with pytest.raises(ValueError, match="'action'"):
        fin.loss(0, fin.context(0)[0] + 1e-3)
    assert np.isfinite(fin.loss(0, fin.context(0)[1]))
