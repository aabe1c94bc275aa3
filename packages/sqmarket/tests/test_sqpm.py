"""SQPM's properties (arXiv 2505.02959; Euclidean geometry): incentive compatibility, no
arbitrage, the OGD loss bound and its IC identity, fee dominance over the quadratic DCFMM, the
translation formula, adaptive liquidity; and the exploratory l_inf variant's behaviour."""

import numpy as np
import pytest
from scipy.optimize import minimize

from sqmarket import SQPM, QuadraticDCFMM, project_simplex, replay_batch, simulate_batch


def _neg_utility(r, g, b):
    """Minus the trader's utility <pi - p, r> - ||r||^2/(2b), with g = pi - p."""
    return -g @ r + r @ r / (2 * b)


def _neg_utility_grad(r, g, b):
    return -g + r / b


def _random_state(rng, n):
    return rng.dirichlet(np.ones(n) * rng.choice([0.3, 1.0, 3.0]))


def test_ic_trade_maximises_utility_and_moves_price_to_belief(rng):
    """100 random (p, pi, b): BFGS on the trader's utility <pi - p, r> - ||r||^2/(2b) finds
    b(pi - p) (tolerance 1e-5 max(1, b)); trading it moves the price to pi (1e-8)."""
    for _ in range(100):
        n = int(rng.integers(2, 10))
        p, pi, b = _random_state(rng, n), _random_state(rng, n), float(rng.uniform(0.1, 50))
        m = SQPM(n, b, p0=p)
        res = minimize(
            _neg_utility,
            np.zeros(n),
            args=(pi - p, b),
            jac=_neg_utility_grad,
            method="BFGS",
            options={"gtol": 1e-10},
        )
        r_star = m.myopic_trade(pi)
        assert np.linalg.norm(res.x - r_star) <= 1e-5 * max(1.0, b)
        np.testing.assert_allclose(r_star, b * (pi - p), atol=1e-12)
        m.trade(r_star)
        np.testing.assert_allclose(m.price_, pi, atol=1e-8, rtol=0)


def test_round_trips_give_no_guaranteed_profit(rng):
    """A round trip r, -r from any price: the trader's profit in every outcome is
    -(c(p, r) + c(p', -r)) <= 0 (projection is non-expansive)."""
    for _ in range(2000):
        n = int(rng.integers(2, 10))
        m = SQPM(n, float(rng.uniform(0.1, 20)), p0=_random_state(rng, n))
        r = rng.standard_t(2, size=n) * rng.uniform(0.01, 30)
        total = m.trade(r) + m.trade(-r)
        assert -total <= 1e-12
        assert m.worst_case_loss() <= 1e-12


def test_closed_price_loops_give_no_guaranteed_profit(rng, sequences):
    """Random sequences followed by the trade b(p0 - p_L), which returns the price to p0: the loss
    bound with p_T = p0 makes the market maker's loss <= 0 in every outcome."""
    for n in (2, 3, 5, 10):
        b = 7.0
        m = SQPM(n, b, p0=_random_state(rng, n))
        seqs = sequences(rng, 500, 30, n, b)
        p_end = replay_batch(m, seqs)["prices"][:, -1]
        loops = np.concatenate([seqs, b * (m.p0 - p_end)[:, None]], axis=1)
        res = replay_batch(m, loops)
        np.testing.assert_allclose(
            res["prices"][:, -1], np.broadcast_to(m.p0, (500, n)), atol=1e-12
        )
        assert res["loss_by_outcome"].max() <= 1e-12


@pytest.mark.parametrize("n", [2, 3, 5, 10])
def test_ogd_loss_bound_on_adversarial_sequences(n, rng, sequences):
    """10^4 sequences of 50 heavy-tailed trades: loss_w <= (b/2)(||e_w - p0||^2 - ||e_w - p_T||^2)
    + 1e-9 for every outcome (the OGD regret lemma, with the final-distance term)."""
    b = 4.0
    p0 = _random_state(rng, n)
    res = replay_batch(SQPM(n, b, p0=p0), sequences(rng, 2500, 50, n, b))
    pT = res["prices"][:, -1]
    dist = lambda p: ((np.eye(n)[None] - p[:, None, :]) ** 2).sum(-1)  # noqa: E731
    tight = 0.5 * b * (dist(np.broadcast_to(p0, pT.shape)) - dist(pT))
    assert (res["loss_by_outcome"] - tight).max() <= 1e-9
    sup = 0.5 * b * ((np.eye(n) - p0) ** 2).sum(-1)
    assert (res["loss_by_outcome"] - sup).max() <= 1e-9
    np.testing.assert_allclose(res["loss_bound"][0], sup, atol=1e-14)


def test_uniform_start_bound_is_b_half_one_minus_one_over_n():
    for n in (2, 4, 9):
        m = SQPM(n, 3.0)
        assert m.loss_bound() == pytest.approx(1.5 * (1 - 1 / n), abs=1e-14)


def test_ic_identity_holds_exactly(rng):
    """IC traders: loss_w = b(p_T[w] - p0[w]) - (b/2)(||p_T||^2 - ||p0||^2) (1e-10)."""
    n, b, M, T = 6, 5.0, 50, 40
    p0 = _random_state(rng, n)
    beliefs = rng.dirichlet(np.ones(n), size=(M, T))
    res = simulate_batch(SQPM(n, b, p0=p0), beliefs, rng.integers(n, size=M))
    pT = res["prices"][:, -1]
    predicted = b * (pT - p0) - 0.5 * b * ((pT**2).sum(-1) - p0 @ p0)[:, None]
    np.testing.assert_allclose(res["loss_by_outcome"], predicted, atol=1e-10, rtol=0)


def test_fee_dominates_quadratic_dcfmm_slippage(rng):
    """C_QMSR is (1/b)-smooth: c_SQPM(p(q), r) >= C(q + r) - C(q) - 1e-12 for random q, r."""
    for _ in range(2000):
        n = int(rng.integers(2, 10))
        b = float(rng.uniform(0.1, 20))
        q = rng.standard_normal(n) * rng.uniform(0.1, 3) * b
        r = rng.standard_t(2, size=n) * rng.uniform(0.01, 3) * b
        qm = QuadraticDCFMM(n, b)
        qm._state = q
        sq = SQPM(n, b, p0=project_simplex(q / b))
        assert sq.quote(r) >= qm.quote(r) - 1e-12


def test_loss_is_at_most_the_quadratic_dcfmms_on_identical_sequences(rng, sequences):
    """From the same price, for every outcome: L_SQPM <= L_QMSR, and the gap is at least
    (b/2)||p_T^QMSR - p_T^SQPM||^2 (OGD inequality at u = grad C(Q_T), Fenchel duality)."""
    for n in (2, 3, 5, 10):
        b = float(rng.uniform(1, 20))
        p0 = _random_state(rng, n)
        seqs = sequences(rng, 1000, 50, n, b)
        sq = replay_batch(SQPM(n, b, p0=p0), seqs)
        qm = replay_batch(QuadraticDCFMM(n, b, p0=p0), seqs)
        gap = qm["loss_by_outcome"] - sq["loss_by_outcome"]
        price_gap = 0.5 * b * ((qm["prices"][:, -1] - sq["prices"][:, -1]) ** 2).sum(-1)
        assert gap.min() >= -1e-9
        assert (gap.min(axis=1) - price_gap).min() >= -1e-9


def test_translation_formula(rng):
    """c(p, r + c1) = c(p, r) + c + c sum(r)/b + n c^2/(2b), and the price update is unchanged."""
    for _ in range(500):
        n = int(rng.integers(2, 10))
        b = float(rng.uniform(0.1, 20))
        m = SQPM(n, b, p0=_random_state(rng, n))
        r, c = rng.standard_normal(n) * b, float(rng.normal() * b)
        expected = m.quote(r) + c + c * r.sum() / b + n * c**2 / (2 * b)
        assert m.quote(r + c) == pytest.approx(expected, rel=1e-12, abs=1e-12)
        a, shifted = m.fresh(), m.fresh()
        a.trade(r)
        shifted.trade(r + c)
        np.testing.assert_allclose(a.price_, shifted.price_, atol=1e-13)


def test_adaptive_liquidity_telescoped_bound(rng, sequences):
    """b_t = b0 + beta * volume before t; 10^3 random sequences satisfy
    loss_w <= (b0/2)||e_w - p0||^2 + sum_{t>=1} ((b_t - b_{t-1})/2)||e_w - p_t||^2 (1e-9), the
    market's tracked bound equals that sum, and it is at most (b0/2)(1 - 1/n) + b_{T-1} - b0."""
    n, b0, beta = 5, 2.0, 0.3
    m = SQPM(n, b0, adaptive_beta=beta)
    seqs = sequences(rng, 1000, 40, n, b0)
    res = replay_batch(m, seqs)
    assert (res["loss_by_outcome"] - res["loss_bound"]).max() <= 1e-9
    prices, bt = res["prices"][:, :-1], res["liquidity"]
    dist = ((np.eye(n)[None, None] - prices[:, :, None, :]) ** 2).sum(-1)  # (S, T, n)
    by_hand = 0.5 * b0 * dist[:, 0] + (0.5 * np.diff(bt, axis=1)[..., None] * dist[:, 1:]).sum(1)
    np.testing.assert_allclose(res["loss_bound"], by_hand, rtol=1e-12, atol=1e-12)
    volume = np.abs(seqs).sum(-1)
    np.testing.assert_allclose(bt[:, 1:], b0 + beta * np.cumsum(volume, axis=1)[:, :-1], rtol=1e-13)
    assert (res["loss_bound"].max(1) - (0.5 * b0 * (1 - 1 / n) + bt[:, -1] - b0)).max() <= 1e-9


def test_adaptive_single_market_tracks_the_same_bound(rng):
    """The ledger of one market tracks the bound and b_t as the batched replay does."""
    m = SQPM(3, 1.0, adaptive_beta=0.5)
    seq = rng.standard_normal((20, 3))
    batch = replay_batch(m, seq[None])
    for r in seq:
        m.trade(r)
    np.testing.assert_allclose(
        [m.loss_bound(i) for i in range(3)], batch["loss_bound"][0], rtol=1e-13
    )
    assert m.b_ == pytest.approx(1.0 + 0.5 * np.abs(seq).sum(), rel=1e-13)


def test_ledger_quote_and_losses(rng):
    m = SQPM(4, 2.0)
    r = rng.standard_normal(4)
    cost = m.quote(r)
    np.testing.assert_array_equal(m.price_, np.full(4, 0.25))  # a quote trades nothing
    assert m.trade(r) == cost and len(m.history_) == 1
    h = m.history_[0]
    assert h["fee"] == pytest.approx(r @ r / 4.0, abs=1e-15)
    assert h["cost"] == pytest.approx(0.25 * r.sum() + r @ r / 4.0, abs=1e-15)
    losses = [m.mm_loss(w) for w in range(4)]
    np.testing.assert_allclose(losses, r - cost, atol=1e-15)
    assert m.worst_case_loss() == max(losses)
    m.reset()
    assert m.history_ == [] and m.mm_loss(0) == 0.0


class TestLinf:
    """The exploratory l_inf geometry: what it does, measured (no property is claimed)."""

    def test_step_moves_the_lowest_index_of_the_largest_magnitude(self):
        m = SQPM(3, 2.0, norm="linf")
        r = np.array([1.0, -3.0, 3.0])  # |r| ties at indices 1 and 2: index 1 moves by -3/2
        assert m.quote(r) == pytest.approx(np.full(3, 1 / 3) @ r + 9 / 4, abs=1e-15)
        m.trade(r)
        np.testing.assert_allclose(m.price_, project_simplex(np.full(3, 1 / 3) + [0, -1.5, 0]))

    def test_ic_holds_for_two_outcomes_only(self, rng):
        m2 = SQPM(2, 5.0, norm="linf")
        m2.trade(m2.myopic_trade([0.8, 0.2]))
        np.testing.assert_allclose(m2.price_, [0.8, 0.2], atol=1e-14)
        m3 = SQPM(3, 5.0, norm="linf")
        m3.trade(m3.myopic_trade([0.6, 0.3, 0.1]))
        assert np.abs(m3.price_ - [0.6, 0.3, 0.1]).max() > 0.1

    def test_round_trip_arbitrage_for_three_outcomes(self):
        """r = a(1, -1, -1) then -r from the uniform price: both steps move coordinate 0 only,
        the price returns, and the trader gains a^2/(3b) in every outcome."""
        a, b = 1.0, 1.5  # a/b <= 1 keeps both steps inside the simplex
        m = SQPM(3, b, norm="linf")
        r = a * np.array([1.0, -1.0, -1.0])
        total = m.trade(r) + m.trade(-r)
        np.testing.assert_allclose(m.price_, np.full(3, 1 / 3), atol=1e-15)
        assert -total == pytest.approx(a**2 / (3 * b), rel=1e-12)
