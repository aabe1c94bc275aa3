import numpy as np

from ctxbandit import ReductionBandit, g_optimal_design, max_leverage
from ctxbandit.envs import CombinatorialAvailabilityEnv


def test_design_reaches_kiefer_wolfowitz_within_5_percent():
    # Kiefer-Wolfowitz: the optimum of max leverage is exactly d; 200 Fedorov-Wynn steps
    rng = np.random.default_rng(0)
    for d in (4, 10):
        Phi = rng.standard_normal((256, d))
        nu = g_optimal_design(Phi, 200)
        assert abs(nu.sum() - 1) < 1e-12 and np.all(nu >= 0)
        assert max_leverage(Phi, nu) <= 1.05 * d
        assert max_leverage(Phi, nu) >= d - 1e-9  # never below the optimum


def test_design_on_a_rank_deficient_table_targets_the_rank():
    Phi = np.array([[1.0, 0, 0], [0, 1.0, 0], [1.0, 1.0, 0]])
    nu = g_optimal_design(Phi)
    assert max_leverage(Phi, nu) <= 1.05 * 2


def test_probabilities_of_the_bandit():
    env = CombinatorialAvailabilityEnv(d=10, k=3, T=300, seed=0)
    alg = ReductionBandit(d=10, oracle="topk", random_state=0, horizon=300)
    for t in range(env.T):
        a = alg.act(env.context(t))
        learner = alg._learner
        if learner is not None:
            p, nu, gamma = alg.policy_probs_, learner.design, learner.params.gamma
            assert abs(p.sum() - 1) < 1e-12
            assert np.all(p >= gamma * nu - 1e-15) and np.all(nu >= 0)
            Phi = alg.surrogate_.Phi
            rank = np.linalg.matrix_rank(Phi)
            assert max_leverage(Phi, nu) <= 1.05 * rank
        alg.update(env.loss(t, a))
