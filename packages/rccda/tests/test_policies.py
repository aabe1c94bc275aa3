"""The decision rule, the virtual queue and its guarantees (paper: Algorithm 1; the queue bound
and budget compliance of Sec. 4), and the baselines' rates."""

import numpy as np
import pytest

from rccda import (
    AlwaysPolicy,
    NeverPolicy,
    PeriodicPolicy,
    RandomPolicy,
    RCCDAPolicy,
    budget_bound,
    queue_bound,
)


def test_hand_computed_decisions():
    # budget 0.5, V = 2, tau = 0, constant floor 0, losses all 1: 2 > Q_t for Q = 0, .5, 1, 1.5
    pol = RCCDAPolicy(budget=0.5, V=2.0, drift_threshold=0.0, loss_floor=0.0)
    decisions, queues = [], []
    for _ in range(5):
        decisions.append(pol.step(1.0))
        queues.append(pol.queue_)
    assert decisions == [True, True, True, True, False]  # 2 > 2 is false at t = 4
    assert queues == [0.5, 1.0, 1.5, 2.0, 1.5]
    assert [h[2] for h in pol.history_] == [0.0, 0.5, 1.0, 1.5, 2.0]
    assert pol.n_updates_ == 4


def _naive(losses, budget, V, tau, window):
    q, out, qs = 0.0, [], []
    for t, loss in enumerate(losses):
        prev = losses[max(0, t - window) : t]
        floor = min(prev) if len(prev) else 0.0
        d = V * (loss - floor - tau) > q
        out.append(d)
        qs.append(q)
        q = max(q + d - budget, 0.0)
    return out, qs


def test_queue_recursion_matches_naive():
    rng = np.random.default_rng(0)
    losses = rng.gamma(2.0, 0.3, 10_000)
    pol = RCCDAPolicy(budget=0.2, V=10.0, drift_threshold=0.05, window=50)
    got = [pol.step(x) for x in losses]
    want, qs = _naive(list(losses), 0.2, 10.0, 0.05, 50)
    assert got == want
    np.testing.assert_allclose([h[2] for h in pol.history_], qs, rtol=0, atol=1e-9)


STREAMS = {
    "constant_high": np.full(5000, 5.0),
    "alternating": np.tile([0.0, 5.0], 2500),
    "heavy_tailed": np.random.default_rng(1).pareto(1.5, 5000),
}


@pytest.mark.parametrize("name", sorted(STREAMS))
@pytest.mark.parametrize("floor", ["running_min", 0.0])
@pytest.mark.parametrize("signal", ["last", "accumulated"])
def test_queue_bound_and_budget(name, floor, signal):
    losses = STREAMS[name]
    V, budget, T = 10.0, 0.2, len(losses)
    pol = RCCDAPolicy(budget=budget, V=V, drift_threshold=0.0, loss_floor=floor, signal=signal)
    for x in losses:
        pol.step(x)
    if signal == "last":  # bound (i) is for the last-loss signal
        q_max = queue_bound(V, float(losses.max()), 0.0, 1.0)
        assert max(h[2] for h in pol.history_) <= q_max and pol.queue_ <= q_max
        assert pol.rate_ <= budget_bound(budget, q_max, T) + 1e-12
    # sum c_t pi_t <= lambda_bar T + Q_T (telescoped queue recursion)
    assert pol.spent_ <= budget * T + pol.queue_ + 1e-9


def test_constant_loss_rate_and_running_min():
    pol = RCCDAPolicy(budget=0.2, V=10.0, drift_threshold=0.05, loss_floor=0.0)
    for _ in range(5000):
        pol.step(1.0)
    assert abs(pol.rate_ - 0.2) <= 0.01
    pol = RCCDAPolicy(budget=0.2, V=10.0, drift_threshold=0.05)
    decisions = [pol.step(1.0) for _ in range(5000)]
    assert decisions[0] and sum(decisions) == 1  # no evidence of drift after t = 0


def test_monotone_in_loss_and_queue():
    def decide(loss, q, V=3.0):
        pol = RCCDAPolicy(budget=0.3, V=V, drift_threshold=0.1, loss_floor=0.2)
        pol.queue_ = q
        return pol.step(loss)

    losses = np.linspace(0, 3, 61)
    for q in (0.0, 0.5, 2.0):
        d = [decide(x, q) for x in losses]
        assert d == sorted(d)  # nondecreasing in the loss
    qs = np.linspace(0, 10, 41)
    d = [decide(1.0, q) for q in qs]
    assert d == sorted(d, reverse=True)  # nonincreasing in Q
    # V-scaled: update iff V (l - l* - tau) > Q, the threshold on Q is V (1.0 - 0.3) = 0.7 V
    for V in (1.0, 4.0):
        assert decide(1.0, 0.7 * V - 1e-6, V) and not decide(1.0, 0.7 * V + 1e-6, V)


@pytest.mark.parametrize(("tau", "low", "high"), [(0.25, 0.0, 0.1), (0.0, 0.19, 0.21)])
def test_budget_saving_needs_tau_above_noise(tau, low, high):
    losses = np.random.default_rng(2).normal(0.5, 0.07, 5000).clip(min=0)
    pol = RCCDAPolicy(budget=0.2, V=10.0, drift_threshold=tau, loss_floor=0.5)
    d = np.array([pol.step(x) for x in losses])
    assert low <= d[100:].mean() <= high


def test_accumulated_signal_sums_excess_since_last_update():
    pol = RCCDAPolicy(budget=0.5, V=1.0, drift_threshold=0.0, loss_floor=0.0, signal="accumulated")
    pol.queue_ = 1.0
    # A: 0.4 -> 0.4 < Q, 0.8 -> 0.8 < Q (Q decays by 0.5 per skipped step: 0.5, then 0)
    assert not pol.step(0.4)  # A = 0.4, Q = 1.0
    assert pol.step(0.3)  # A = 0.7 > Q = 0.5
    assert pol._accumulated == 0.0


def test_costs_enter_the_queue():
    pol = RCCDAPolicy(budget=0.5, V=10.0, drift_threshold=0.0, loss_floor=0.0)
    pol.step(1.0, cost=3.0)
    assert pol.queue_ == 2.5 and pol.spent_ == 3.0


@pytest.mark.parametrize("budget", [0.1, 0.2, 0.3])
def test_periodic_and_random_rates(budget):
    for pol in (PeriodicPolicy(budget), RandomPolicy(budget, seed=3)):
        for _ in range(5000):
            pol.step(0.5)
        assert abs(pol.rate_ - budget) <= 0.02


def test_references():
    a, n = AlwaysPolicy(), NeverPolicy()
    assert all(a.step(0.1) for _ in range(10)) and not any(n.step(0.1) for _ in range(10))
    assert a.rate_ == 1.0 and n.rate_ == 0.0
