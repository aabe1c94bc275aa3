"""Non-linear monotone rewards through a user oracle: probabilistic coverage (Section 5)."""

import numpy as np
import pytest

from oraclebandit import AROQ, CUCB, SROQ, BernoulliSemiBandit, TopMOracle, coverage_reward, run


def test_coverage_reward_learns_the_best_set():
    mu = np.array([0.05, 0.1, 0.15, 0.6, 0.2, 0.7, 0.1, 0.65])
    T = 4000
    for alg in (
        AROQ(8, 2, T, TopMOracle(8, 2), reward=coverage_reward),
        CUCB(8, 2, T, TopMOracle(8, 2), reward=coverage_reward),
        SROQ(8, 2, T, TopMOracle(8, 2), reward=coverage_reward, oracle_kind="enumerate"),
    ):
        res = run(BernoulliSemiBandit(mu, seed=0), alg, T)
        assert res["optimum"].nonzero()[0].tolist() == [5, 7]
        best = 1 - 0.3 * 0.35
        assert np.isclose(res["regret"][0], best - coverage_reward(res["actions"][0], mu))
        if isinstance(alg, SROQ):  # round-robin over its candidates: the regret rate falls
            per_round = np.diff(np.r_[0.0, res["regret"]])
            assert per_round[-T // 4 :].mean() < 0.5 * per_round[: T // 4].mean()
        else:
            late = res["actions"][-T // 4 :]
            assert (late == res["optimum"]).all(1).mean() > 0.6, type(alg).__name__


def test_sroq_refuses_a_nonlinear_reward_with_the_linear_bonus():
    with pytest.raises(ValueError, match="'oracle_kind'"):
        SROQ(8, 2, 100, TopMOracle(8, 2), reward=coverage_reward)
