"""The baselines (Abernethy, Chen and Wortman Vaughan, 2013): LMSR and the quadratic DCFMM."""

import numpy as np
import pytest
from scipy.special import logsumexp, softmax

from sqmarket import LMSR, QuadraticDCFMM, project_simplex


def _with_state(market, q):
    market._state = np.asarray(q, dtype=float)
    return market


def test_lmsr_prices_are_softmax_and_costs_the_log_sum_exp(rng):
    for _ in range(200):
        n, b = int(rng.integers(2, 10)), float(rng.uniform(0.1, 10))
        q, r = rng.standard_normal(n) * 5 * b, rng.standard_normal(n) * 3 * b
        m = _with_state(LMSR(n, b), q)
        np.testing.assert_allclose(m.price_, softmax(q / b), rtol=1e-12, atol=1e-300)
        expected = b * (logsumexp((q + r) / b) - logsumexp(q / b))
        assert m.quote(r) == pytest.approx(expected, rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("cls", [LMSR, QuadraticDCFMM])
def test_costs_are_path_independent(cls, rng):
    """C(q + r1) - C(q) + C(q + r1 + r2) - C(q + r1) = C(q + r1 + r2) - C(q)."""
    for _ in range(200):
        n, b = int(rng.integers(2, 10)), float(rng.uniform(0.1, 10))
        r1, r2 = rng.standard_normal((2, n)) * 2 * b
        two = cls(n, b)
        cost = two.trade(r1) + two.trade(r2)
        assert cost == pytest.approx(cls(n, b).quote(r1 + r2), rel=1e-12, abs=1e-12)


def test_lmsr_worst_case_loss_tends_to_b_log_n():
    """Pushing the price to e_w: loss_w = K - b log(e^{K/b} + n - 1) + b log n -> b log n."""
    for n in (2, 5, 10):
        b = 2.0
        m = LMSR(n, b)
        m.trade(50 * b * np.eye(n)[1])
        assert m.mm_loss(1) == pytest.approx(b * np.log(n), rel=1e-12)
        assert m.loss_bound() == pytest.approx(b * np.log(n), rel=1e-14)
        assert m.price_[0] < 1e-20  # e^{-50} (n - 1)-ish: the price is at the vertex


def test_qmsr_prices_are_the_projection_and_worst_case_is_b_half_one_minus_one_over_n(rng):
    for _ in range(100):
        n, b = int(rng.integers(2, 10)), float(rng.uniform(0.1, 10))
        q = rng.standard_normal(n) * 3 * b
        np.testing.assert_allclose(
            _with_state(QuadraticDCFMM(n, b), q).price_, project_simplex(q / b), atol=1e-15
        )
    for n in (2, 5, 10):
        b = 4.0
        m = QuadraticDCFMM(n, b)
        m.trade(3 * b * np.eye(n)[0])  # q/b = 3 e_0 projects to e_0
        np.testing.assert_array_equal(m.price_, np.eye(n)[0])
        assert m.mm_loss(0) == pytest.approx(0.5 * b * (1 - 1 / n), rel=1e-13)
        assert m.loss_bound(0) == pytest.approx(0.5 * b * (1 - 1 / n), rel=1e-14)


def test_qmsr_cost_function_is_the_conjugate_of_the_quadratic_regulariser(rng):
    """C(q) = max_{mu in simplex} <mu, q> - (b/2)||mu||^2, checked against random simplex points."""
    for _ in range(100):
        n, b = int(rng.integers(2, 8)), float(rng.uniform(0.5, 5))
        q = rng.standard_normal(n) * 3
        C = QuadraticDCFMM._C(q, b)
        mus = rng.dirichlet(np.ones(n), size=2000)
        assert np.all(mus @ q - 0.5 * b * (mus**2).sum(1) <= C + 1e-12)
        p = project_simplex(q / b)
        assert pytest.approx(p @ q - 0.5 * b * p @ p, abs=1e-14) == C


def test_matched_liquidity_gives_equal_price_jacobians_at_uniform():
    """LMSR with b/n and QMSR with b: d p / d q = (1/b)(I - 11^T/n) at the uniform price
    (central differences, step 1e-6)."""
    n, b, h = 5, 10.0, 1e-6
    for market in (LMSR(n, b / n), QuadraticDCFMM(n, b)):
        q0 = market._state.copy()
        jac = np.empty((n, n))
        for j in range(n):
            up = _with_state(market, q0 + h * np.eye(n)[j]).price_
            down = _with_state(market, q0 - h * np.eye(n)[j]).price_
            jac[:, j] = (up - down) / (2 * h)
        np.testing.assert_allclose(jac, (np.eye(n) - 1 / n) / b, atol=1e-8)


@pytest.mark.parametrize("cls", [LMSR, QuadraticDCFMM])
def test_myopic_budget_and_buy_only_trades_reach_the_belief(cls, rng):
    """The myopic trade prices at the belief and is zero-sum; the budgeted trade (the myopic one
    with the grand bundle shorted by the shortfall) costs at most B, and the buy-only trade (plus
    grand bundles) is >= 0: both with the myopic trade's profit in every outcome and new price."""
    for _ in range(200):
        n, b = int(rng.integers(2, 8)), float(rng.uniform(0.5, 10))
        m = cls(n, b)
        m.trade(rng.standard_normal(n) * b)
        pi = rng.dirichlet(np.ones(n))
        r = m.myopic_trade(pi)
        assert abs(r.sum()) < 1e-9 * b
        budget = float(rng.uniform(0, 0.5))
        rb, ro = m.budget_trade(pi, budget), m.buy_only_trade(pi)
        assert m.quote(rb) <= budget + 1e-12 and ro.min() >= 0
        for trade in (rb, ro):
            np.testing.assert_allclose(trade - m.quote(trade), r - m.quote(r), atol=1e-9 * b)
        for trade in (r, rb, ro):
            twin = m.fresh()
            twin._state = m._state.copy()
            twin.trade(trade)
            np.testing.assert_allclose(twin.price_, pi, atol=1e-10)


def test_lmsr_refuses_beliefs_and_starts_with_zeros():
    m = LMSR(3, 1.0)
    with pytest.raises(ValueError, match="'belief'"):
        m.myopic_trade([0.5, 0.5, 0.0])
    with pytest.raises(ValueError, match="'p0'"):
        LMSR(3, 1.0, p0=[0.5, 0.5, 0.0])
