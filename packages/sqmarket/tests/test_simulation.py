"""Simulations: the batched engine equals the single-market ledger; Dirichlet worlds; seeds."""

import numpy as np
import pytest

from sqmarket import (
    LMSR,
    SQPM,
    BudgetTrader,
    BuyOnlyTrader,
    MyopicTrader,
    QuadraticDCFMM,
    dirichlet_world,
    replay_batch,
    simulate,
    simulate_batch,
)

MARKETS = [
    SQPM(4, 5.0),
    SQPM(4, 5.0, norm="linf"),
    SQPM(4, 5.0, adaptive_beta=0.2),
    LMSR(4, 1.25),
    QuadraticDCFMM(4, 5.0),
]


@pytest.mark.parametrize("market", MARKETS, ids=lambda m: repr(m))
@pytest.mark.parametrize("trader", ["myopic", "budget", "buy_only"])
def test_batch_equals_the_single_market_loop(market, trader):
    world = dirichlet_world(4, n_markets=3, n_traders=30, samples=5, seed=3)
    budgets = np.random.default_rng(0).uniform(0.05, 1.0, size=(3, 30))
    res = simulate_batch(
        market,
        world["signals"],
        world["outcomes"],
        weights=world["weights"],
        trader=trader,
        budgets=budgets if trader == "budget" else None,
    )
    for i in range(3):
        args = [(world["signals"][i, t], world["weights"][i, t]) for t in range(30)]
        if trader == "myopic":
            traders = [MyopicTrader(s, weight=w) for s, w in args]
        elif trader == "budget":
            traders = [BudgetTrader(s, budgets[i, t], weight=w) for t, (s, w) in enumerate(args)]
        else:
            traders = [BuyOnlyTrader(s, weight=w) for s, w in args]
        one = simulate(market, traders, int(world["outcomes"][i]))
        np.testing.assert_allclose(one["prices"], res["prices"][i], atol=1e-12)
        np.testing.assert_allclose(one["costs"], res["costs"][i], atol=1e-12)
        np.testing.assert_allclose(one["trader_profits"], res["trader_profits"][i], atol=1e-12)
        np.testing.assert_allclose(one["loss_bound"], res["loss_bound"][i], atol=1e-12)
        assert one["mm_loss"] == pytest.approx(res["mm_loss"][i], abs=1e-10)
    assert len(market.history_) == 0  # simulate trades on a copy


def test_replay_equals_the_loop(rng):
    trades = rng.standard_normal((4, 25, 3)) * 2
    for market in (SQPM(3, 1.5), LMSR(3, 0.5), QuadraticDCFMM(3, 1.5)):
        res = replay_batch(market, trades)
        for s in range(4):
            m = market.fresh()
            costs = [m.trade(r) for r in trades[s]]
            np.testing.assert_allclose(costs, res["costs"][s], atol=1e-12)
            np.testing.assert_allclose(
                [m.mm_loss(w) for w in range(3)], res["loss_by_outcome"][s], atol=1e-11
            )


def test_price_learning_traders_aggregate_to_the_pooled_posterior():
    """IC markets move the price to every belief, so traders who read the price as the posterior
    mean of the n + k t pseudo-counts before them end at (1 + sum of counts)/(n + k T)."""
    world = dirichlet_world(5, n_markets=20, n_traders=60, samples=5, seed=1)
    for market in (SQPM(5, 10.0), LMSR(5, 2.0), QuadraticDCFMM(5, 10.0)):
        res = simulate_batch(market, world["signals"], world["outcomes"], weights=world["weights"])
        np.testing.assert_allclose(res["prices"][:, -1], world["pooled"], atol=1e-12)
    naive = simulate_batch(SQPM(5, 10.0), world["beliefs"], world["outcomes"])
    np.testing.assert_allclose(naive["prices"][:, -1], world["beliefs"][:, -1], atol=1e-12)


def test_dirichlet_world_shapes_and_determinism():
    a = dirichlet_world(3, n_markets=4, n_traders=7, samples=5, seed=9)
    b = dirichlet_world(3, n_markets=4, n_traders=7, samples=5, seed=9)
    for key in a:
        np.testing.assert_array_equal(a[key], b[key])
    assert a["counts"].shape == (4, 7, 3) and np.all(a["counts"].sum(-1) == 5)
    np.testing.assert_allclose(a["beliefs"].sum(-1), 1, atol=1e-15)
    np.testing.assert_allclose(a["pooled"], (1 + a["counts"].sum(1)) / (3 + 35), atol=1e-15)
    np.testing.assert_allclose(a["weights"][0], 5 / (3 + 5 * np.arange(1, 8)), atol=1e-15)
    c = dirichlet_world(3, n_markets=4, n_traders=7, samples=5, seed=10)
    assert not np.array_equal(a["counts"], c["counts"])


def test_simulate_draws_the_outcome_from_theta_with_the_seed():
    traders = [MyopicTrader([0.6, 0.3, 0.1])]
    draws = {simulate(SQPM(3, 1.0), traders, [0.2, 0.3, 0.5], seed=s)["outcome"] for s in range(30)}
    assert draws == {0, 1, 2}
    same = [simulate(SQPM(3, 1.0), traders, [0.2, 0.3, 0.5], seed=4)["outcome"] for _ in range(3)]
    assert len(set(same)) == 1
    assert simulate(SQPM(3, 1.0), traders, [0.0, 0.0, 1.0], seed=0)["outcome"] == 2
