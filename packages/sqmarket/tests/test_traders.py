"""Traders under the paper's realistic constraints (bounded budgets, buy-only securities), the
SLSQP cross-check, and the greedy adversary."""

import numpy as np
import pytest
from scipy.optimize import minimize

from sqmarket import (
    LMSR,
    SQPM,
    BudgetTrader,
    BuyOnlyTrader,
    GreedyAdversary,
    MyopicTrader,
    QuadraticDCFMM,
)


def _neg_utility(r, g, b):
    """Minus the trader's utility <pi - p, r> - ||r||^2/(2b), with g = pi - p."""
    return -g @ r + r @ r / (2 * b)


def _neg_utility_grad(r, g, b):
    return -g + r / b


def _budget_case(rng, norm="l2"):
    n = int(rng.integers(2, 9))
    b = float(rng.uniform(0.5, 20))
    p, pi = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n) * 0.5)
    ic_cost = 0.5 * b * (pi @ pi - p @ p)
    budget = float(rng.uniform(0, max(ic_cost, 0.0) + 0.1))
    return SQPM(n, b, norm=norm, p0=p), p, pi, b, budget, ic_cost


def test_budget_closed_form_binds_exactly_and_satisfies_kkt(rng):
    """r = b(s pi - p), s = sqrt((2B/b + ||p||^2)/||pi||^2): cost = B (1e-10) when the IC trade
    costs more than B; KKT pi - p - r/b = lambda (p + r/b) with lambda = 1/s - 1 >= 0."""
    binding = 0
    for _ in range(300):
        m, p, pi, b, budget, ic_cost = _budget_case(rng)
        r = BudgetTrader(pi, budget).best_trade(m)
        if ic_cost <= budget:
            np.testing.assert_allclose(r, b * (pi - p), atol=1e-12)
            continue
        binding += 1
        s = np.sqrt((2 * budget / b + p @ p) / (pi @ pi))
        assert 0 < s < 1
        np.testing.assert_allclose(r, b * (s * pi - p), atol=1e-12)
        assert m.quote(r) == pytest.approx(budget, abs=1e-10)
        lam = 1 / s - 1
        np.testing.assert_allclose(pi - p - r / b, lam * (p + r / b), atol=1e-10)
        m.trade(r)
        np.testing.assert_allclose(m.price_, s * pi + (1 - s) / len(p), atol=1e-12)
    assert binding > 100


@pytest.mark.parametrize("norm", ["l2", "linf"])
def test_budget_trade_matches_slsqp(norm, rng):
    """The closed form (l2) and the bisection (linf) against SLSQP (ftol 1e-12): same utility
    within 1e-8 and the same trade within 1e-5 where the optimum is unique (l2)."""
    for _ in range(60):
        m, p, pi, b, budget, _ = _budget_case(rng, norm)
        trader = BudgetTrader(pi, budget)
        r, r_num = trader.best_trade(m), trader.numeric_trade(m)
        utility = lambda x: pi @ x - m.quote(x)  # noqa: B023, E731
        assert m.quote(r) <= budget + 1e-10
        assert utility(r) >= utility(r_num) - 1e-8
        if norm == "l2":
            np.testing.assert_allclose(r, r_num, atol=1e-5 * max(1.0, b))


def test_buy_only_is_the_positive_part_and_matches_a_bounded_solver(rng):
    """r >= 0 separates: r = b(pi - p)_+ (L-BFGS-B with bounds agrees to 1e-5); the new price is
    Pi(max(p, pi)), not pi."""
    gaps = []
    for _ in range(100):
        n = int(rng.integers(2, 9))
        b = float(rng.uniform(0.5, 20))
        p, pi = rng.dirichlet(np.ones(n)), rng.dirichlet(np.ones(n))
        m = SQPM(n, b, p0=p)
        r = BuyOnlyTrader(pi).best_trade(m)
        np.testing.assert_allclose(r, b * np.maximum(pi - p, 0), atol=1e-12)
        res = minimize(
            _neg_utility,
            np.zeros(n),
            args=(pi - p, b),
            jac=_neg_utility_grad,
            method="L-BFGS-B",
            bounds=[(0, None)] * n,
            options={"ftol": 1e-15, "gtol": 1e-12},
        )
        np.testing.assert_allclose(r, res.x, atol=1e-5 * max(1.0, b))
        m.trade(r)
        gaps.append(np.abs(m.price_ - pi).sum())
    assert max(gaps) > 1e-2  # the buy-only price does not reach the belief in general


def test_weight_mixes_the_belief_with_the_price():
    m = SQPM(2, 4.0)
    m.trade([1.0, -1.0])  # price (0.75, 0.25)
    r = MyopicTrader([0.25, 0.75], weight=0.5).best_trade(m)
    np.testing.assert_allclose(r, 4.0 * (np.array([0.5, 0.5]) - [0.75, 0.25]), atol=1e-15)


@pytest.mark.parametrize(
    "make,bound",
    [
        (lambda n: SQPM(n, 6.0), lambda n: 3.0 * (1 - 1 / n)),
        (lambda n: QuadraticDCFMM(n, 6.0), lambda n: 3.0 * (1 - 1 / n)),
        (lambda n: LMSR(n, 6.0 / n), lambda n: 6.0 / n * np.log(n)),
    ],
)
def test_greedy_adversary_approaches_each_markets_bound(make, bound):
    for n in (2, 5):
        m = make(n)
        adversary = GreedyAdversary(1, n, step=0.5)
        for _ in range(80):
            m.trade(adversary.best_trade(m))
        assert bound(n) * (1 - 1e-6) <= m.mm_loss(1) <= bound(n) + 1e-9


def test_trader_checks_the_market_size():
    with pytest.raises(ValueError, match="'market'"):
        MyopicTrader([0.5, 0.5]).best_trade(SQPM(3, 1.0))
    with pytest.raises(TypeError, match="'market'"):
        MyopicTrader([0.5, 0.5]).best_trade("market")
