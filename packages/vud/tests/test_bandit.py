import numpy as np
import torch

from vud import BayesOracleICL, BernoulliArmsPrior, arm_epistemic, probe_bound, run_bandit


def test_arm_epistemic_equals_probe_bound_on_the_same_arm():
    oracle = BayesOracleICL(BernoulliArmsPrior(4))
    actions = torch.tensor([0, 0, 1, 2, 0, 1])
    cx = torch.eye(4, dtype=torch.float64)[actions]
    cy = torch.tensor([1.0, 0.0, 1.0, 1.0, 1.0, 0.0], dtype=torch.float64)
    p0, total, ve = arm_epistemic(oracle, cx, cy)
    for a in range(4):
        e = torch.eye(4, dtype=torch.float64)[a]
        b = probe_bound(oracle, cx, cy, e, e[None, None], 1)
        assert abs(float(ve[a]) - (b.total - float(b.va[0]))) < 1e-12
    # the true Beta mutual information bounds it, and the unplayed arm is the most uncertain
    _, _, Ue = oracle.prior.true_decomposition(
        cx[None], cy[None], torch.eye(4, dtype=torch.float64)[None]
    )
    assert (ve <= Ue[0] + 1e-12).all() and int(ve.argmax()) == 3


def test_bandit_rewards_and_regret_follow_the_arms():
    trace = run_bandit("ucb1", None, n_arms=3, trials=200, seed=0)
    assert trace.regret.shape == (200,)
    steps = np.diff(np.concatenate([[0.0], trace.regret]))
    expected = np.where(trace.actions == trace.best_arm, 0.0, 0.2)
    np.testing.assert_allclose(steps, expected, atol=1e-12)
    assert set(np.unique(trace.rewards)) <= {0.0, 1.0}


def test_thompson_beats_uniform_play_and_vud_runs_with_the_oracle():
    oracle = BayesOracleICL(BernoulliArmsPrior(5))
    ts = np.mean([run_bandit("thompson", None, trials=80, seed=s).regret[-1] for s in range(8)])
    vud = np.mean([run_bandit("vud", oracle, trials=80, seed=s).regret[-1] for s in range(8)])
    uniform = 80 * 0.2 * 4 / 5  # expected regret of pulling arms uniformly at random
    assert ts < uniform and vud < uniform
    # same seed, same trace
    a, b = (
        run_bandit("vud", oracle, trials=20, seed=3),
        run_bandit("vud", oracle, trials=20, seed=3),
    )
    assert np.array_equal(a.actions, b.actions)
