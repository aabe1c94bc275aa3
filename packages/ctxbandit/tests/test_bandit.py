import numpy as np
import pytest

from ctxbandit import ReductionBandit, UniformPolicy
from ctxbandit.envs import CombinatorialAvailabilityEnv, play, pseudo_regret
from ctxbandit.exp2 import exp2_net
from ctxbandit.oracles import topk_oracle
from paperkit import loglog_slope


def _regret(make, d, T, seeds, **env_kw):
    out = []
    for seed in seeds:
        env = CombinatorialAvailabilityEnv(d=d, k=3, p_avail=0.6, T=T, seed=seed, **env_kw)
        out.append(pseudo_regret(env, play(env, make(seed, T)).history_actions_))
    return float(np.mean(out))


def _reduction(seed, T):
    return ReductionBandit(d=8, oracle="topk", random_state=seed, horizon=T)


def _uniform(seed, T):
    return UniformPolicy(8, "topk", seed)


def test_regret_is_well_below_uniform_play():
    # d = 8, k = 3, switching losses, seeds 0-2, T = 4000: mean R_T < 0.6 x uniform's
    ours = _regret(_reduction, 8, 4000, range(3))
    uniform = _regret(_uniform, 8, 4000, range(3))
    assert ours < 0.6 * uniform, (ours, uniform)


@pytest.mark.slow
def test_regret_slope_is_sublinear():
    Ts = [1000, 2000, 4000, 8000]
    ours = [_regret(_reduction, 8, T, range(5)) for T in Ts]
    uniform = [_regret(_uniform, 8, T, range(5)) for T in Ts]
    assert loglog_slope(Ts, ours) <= 0.75, ours
    assert loglog_slope(Ts, uniform) >= 0.9, uniform


def test_oracle_calls_and_shapes_do_not_depend_on_k():
    """K = C(12, k) ranges from 66 to 924; nothing in the reduction enumerates the actions."""
    record = {}
    for k in (2, 4, 6):
        calls = {"n": 0}

        def counting(context, theta, calls=calls):
            calls["n"] += 1
            return topk_oracle(context, theta)

        env = CombinatorialAvailabilityEnv(d=12, k=k, p_avail=1.0, T=70, seed=0)
        alg = play(env, ReductionBandit(d=12, oracle=counting, n_policies=40, random_state=0))
        s = alg.surrogate_
        record[k] = (
            calls["n"],
            alg.n_oracle_calls_,
            s.Phi.shape,
            s.C.shape,
            alg.policy_probs_.shape,
            len(s.contexts),
        )
    assert record[2] == record[4] == record[6], record
    assert record[2][0] == 70 + 40 * (1 + 3 + 7 + 15 + 31 + 63)  # builds at t = 2, 4, ..., 64


def test_same_seed_same_actions():
    env = CombinatorialAvailabilityEnv(d=8, k=3, T=300, seed=0)
    a1 = play(env, ReductionBandit(d=8, random_state=4)).history_actions_
    a2 = play(env, ReductionBandit(d=8, random_state=4)).history_actions_
    a3 = play(env, ReductionBandit(d=8, random_state=5)).history_actions_
    np.testing.assert_array_equal(a1, a2)
    assert not np.array_equal(a1, a3)


def test_scale_invariance_is_exact():
    """noise = 0: y_t -> 0.5 y_t with loss_scale = 0.5 scales y_hat by 0.5 and eta by 2."""
    env = CombinatorialAvailabilityEnv(d=8, k=3, T=600, noise=0.0, seed=2)
    half = CombinatorialAvailabilityEnv(d=8, k=3, T=600, noise=0.0, seed=2)
    half.losses_ = 0.5 * env.losses_
    a = play(env, ReductionBandit(d=8, random_state=0, horizon=600))
    b = play(half, ReductionBandit(d=8, random_state=0, horizon=600, loss_scale=0.5))
    np.testing.assert_array_equal(a.history_actions_, b.history_actions_)
    ra, rb = pseudo_regret(env, a.history_actions_), pseudo_regret(half, b.history_actions_)
    assert abs(rb - 0.5 * ra) < 1e-9


def test_base_hook_reproduces_the_default_and_carry_changes_play():
    env = CombinatorialAvailabilityEnv(d=8, k=3, T=300, seed=1)
    a = play(env, ReductionBandit(d=8, random_state=0)).history_actions_
    b = play(env, ReductionBandit(d=8, base=exp2_net, random_state=0)).history_actions_
    np.testing.assert_array_equal(a, b)
    c = play(env, ReductionBandit(d=8, carry=True, random_state=0)).history_actions_
    assert not np.array_equal(a, c)


def test_epoch_schedule_and_bounded_contexts():
    env = CombinatorialAvailabilityEnv(d=6, k=2, T=100, seed=0)
    alg = play(env, ReductionBandit(d=6, n_policies=20, random_state=0, max_contexts=10))
    assert alg.epoch_ == 7  # rounds 64..127 form epoch 7
    assert len(alg.surrogate_.contexts) == 10  # 63 stored, subsampled to the cap


def test_bad_rounds_raise():
    alg = ReductionBandit(d=4, random_state=0)
    with pytest.raises(ValueError, match="'context'"):
        alg.act({"mask": np.ones(5, bool), "k": 2})  # d mismatch
    with pytest.raises(ValueError, match="'context'"):
        alg.act({"mask": np.array([1, 0, 0, 0], bool), "k": 2})  # k > available
    alg.act({"mask": np.ones(4, bool), "k": 2})
    with pytest.raises(ValueError, match="'loss'"):
        alg.update(float("nan"))
    with pytest.raises(ValueError, match="'context'"):
        ReductionBandit(d=3, oracle="finite").act(np.ones((4, 2)))
