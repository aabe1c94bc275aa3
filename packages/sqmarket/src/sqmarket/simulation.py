"""Simulations: one market with a list of traders, many independent markets at once, fixed trade
sequences replayed in bulk, and the Dirichlet worlds of Bayesian traders.

- :func:`simulate`: traders arrive one by one at one market (any trader object with
  ``best_trade(market)``).
- :func:`simulate_batch`: M independent markets of one configuration, T traders each, every step
  vectorised over the markets with the same kernels as the single-market ledger (tested equal to
  :func:`simulate`). Trader t of market m acts on :math:`(1 - w_{mt})p + w_{mt}\\sigma_{mt}`, with
  ``signals`` :math:`\\sigma` and ``weights`` w (see :mod:`sqmarket.traders`).
- :func:`replay_batch`: S fixed trade sequences, vectorised over the sequences: the losses of
  identical sequences in different markets, and the adversarial checks.
- :func:`dirichlet_world`: :math:`\\theta \\sim \\mathrm{Dirichlet}(\\mathbf 1)` per market, k
  private samples per trader, the Bayesian beliefs :math:`(1 + \\text{counts})/(n + k)` and the
  pooled posterior mean :math:`(1 + \\sum \\text{counts})/(n + kT)`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from paperkit import (
    check_array,
    check_choice,
    check_int,
    check_memory,
    describe,
    param_error,
)
from sqmarket.dcfmm import LMSR
from sqmarket.ledger import Market, check_market
from sqmarket.simplex import SIMPLEX_TOL, check_distribution

__all__ = ["TRADERS", "dirichlet_world", "replay_batch", "simulate", "simulate_batch"]

#: The trader kinds of :func:`simulate_batch`.
TRADERS = ("myopic", "budget", "buy_only")


def simulate(market: Any, traders: Sequence[Any], outcome: Any, seed: int = 0) -> dict[str, Any]:
    """Let ``traders`` trade in turn on a copy of ``market`` (from its current state).

    Args:
        market: an :class:`~sqmarket.SQPM`, :class:`~sqmarket.LMSR` or
            :class:`~sqmarket.QuadraticDCFMM`; it is copied, not changed.
        traders: a non-empty sequence of objects with ``best_trade(market) -> r``.
        outcome: the outcome that occurs, an integer in ``[0, n)``, or a distribution
            :math:`\\theta` ``(n,)`` from which it is drawn with ``seed``.
        seed: seed of that draw (non-negative integer).

    Returns:
        dict with ``prices (T+1, n)``, ``trades (T, n)``, ``costs (T,)``, ``fees (T,)`` (cost
        minus :math:`\\langle p, r\\rangle`), ``liquidity (T,)``, ``outcome``, ``mm_loss``
        (:math:`\\sum_t r_t[\\omega] - \\sum_t c_t`), ``loss_by_outcome (n,)``,
        ``worst_case_loss``, ``loss_bound (n,)``, ``trader_profits (T,)``
        (:math:`r_t[\\omega] - c_t`) and ``market`` (the traded copy).

    NaN policy: NaN or inf in ``outcome`` is refused; a trader returning NaN is refused by the
    market's ``trade`` (ValueError naming ``r``).

    >>> from sqmarket import SQPM, MyopicTrader
    >>> res = simulate(SQPM(2, b=1.0), [MyopicTrader([0.8, 0.2])], outcome=0)
    >>> res["prices"][-1].tolist(), round(res["mm_loss"], 12)   # b(0.8 - 0.5) - (b/2)(0.68 - 0.5)
    ([0.8, 0.2], 0.21)
    """
    owner = "simulate"
    market = check_market("market", owner, market)
    if isinstance(traders, (str, bytes)) or not isinstance(traders, Sequence) or not traders:
        raise param_error(
            "traders",
            owner,
            "a non-empty sequence of traders",
            describe(traders),
            cls=TypeError if not isinstance(traders, Sequence) else ValueError,
        )
    for i, trader in enumerate(traders):
        if not callable(getattr(trader, "best_trade", None)):
            raise param_error(
                "traders",
                owner,
                "traders with a best_trade(market) method",
                describe(trader) + f" at position {i}",
                cls=TypeError,
            )
    seed = check_int("seed", owner, seed, low=0)
    n = market.n_outcomes
    w = _draw_outcome(outcome, n, seed, owner)
    work = copy.deepcopy(market)
    start = len(work.history_)
    for trader in traders:
        work.trade(trader.best_trade(work))
    log = work.history_[start:]
    trades = np.array([h["r"] for h in log])
    costs = np.array([h["cost"] for h in log])
    loss = work.shares_ - work.revenue_
    return {
        "prices": np.array([log[0]["price_before"]] + [h["price_after"] for h in log]),
        "trades": trades,
        "costs": costs,
        "fees": np.array([h["fee"] for h in log]),
        "liquidity": np.array([h["b"] for h in log]),
        "outcome": w,
        "mm_loss": float(loss[w]),
        "loss_by_outcome": loss,
        "worst_case_loss": float(loss.max()),
        "loss_bound": np.array([work.loss_bound(i) for i in range(n)]),
        "trader_profits": trades[:, w] - costs,
        "market": work,
    }


def _draw_outcome(outcome: Any, n: int, seed: int, owner: str) -> int:
    if isinstance(outcome, (int, np.integer)) and not isinstance(outcome, bool):
        return check_int("outcome", owner, outcome, low=0, high=n - 1)
    if np.ndim(outcome) == 0:
        return check_int("outcome", owner, outcome, low=0, high=n - 1)
    theta = check_distribution("outcome", owner, outcome, n)
    return int(np.random.default_rng(seed).choice(n, p=theta / theta.sum()))


def _run(
    market: Market, M: int, T: int, choose: Callable[[int, np.ndarray, np.ndarray, Any], Any]
) -> dict[str, Any]:
    """Run M copies of ``market`` from its initial state for T steps; ``choose(t, state, price,
    b)`` returns the trades ``(M, n)`` of step t. The per-market ledger of :class:`Market`, in
    arrays."""
    n = market.n_outcomes
    state = np.broadcast_to(market._initial_state(), (M, n)).copy()
    b = np.full(M, market.b)
    volume = np.zeros(M)
    bound = np.broadcast_to(market._initial_bound(), (M, n)).copy()
    prices = np.empty((M, T + 1, n))
    trades = np.empty((M, T, n))
    costs = np.empty((M, T))
    fees = np.empty((M, T))
    liquidity = np.empty((M, T))
    b_last = None
    for t in range(T):
        if b_last is not None:
            bound += market._bound_increment(state, b_last, b)
        price = market._price(state, b)
        prices[:, t] = price
        r = choose(t, state, price, b)
        trades[:, t] = r
        costs[:, t] = market._cost(state, r, b)
        fees[:, t] = costs[:, t] - np.einsum("mi,mi->m", price, r)
        liquidity[:, t] = b
        state = market._next(state, r, b)
        volume += np.abs(r).sum(axis=1)
        b_last, b = b, market._liquidity(volume)
    prices[:, T] = market._price(state, b)
    loss = trades.sum(axis=1) - costs.sum(axis=1)[:, None]
    return {
        "prices": prices,
        "trades": trades,
        "costs": costs,
        "fees": fees,
        "liquidity": liquidity,
        "loss_by_outcome": loss,
        "worst_case_loss": loss.max(axis=1),
        "loss_bound": bound,
    }


def _check_rows_in_simplex(name: str, owner: str, x: np.ndarray) -> None:
    if x.min() < -SIMPLEX_TOL or np.abs(x.sum(axis=-1) - 1.0).max() > SIMPLEX_TOL:
        raise param_error(
            name,
            owner,
            f"distributions along the last axis (sum within {SIMPLEX_TOL:g} of 1)",
            describe(x),
        )


def simulate_batch(
    market: Any,
    signals: Any,
    outcomes: Any,
    *,
    weights: Any = None,
    trader: str = "myopic",
    budgets: Any = None,
) -> dict[str, Any]:
    """M independent copies of ``market`` (each from its initial state), T traders each,
    vectorised over the markets.

    Trader t of market m acts on the belief :math:`\\tilde\\pi = (1 - w_{mt})p + w_{mt}
    \\sigma_{mt}` (p the price it finds) and trades the market's closed form for ``trader``:
    ``"myopic"`` (:meth:`~sqmarket.SQPM.myopic_trade`), ``"budget"`` (with ``budgets[m, t]``) or
    ``"buy_only"``.

    Args:
        market: the configuration to copy (an SQPM, LMSR or QuadraticDCFMM).
        signals: ``(M, T, n)``, every row a distribution.
        outcomes: ``(M,)`` integers in ``[0, n)``: the outcome of each market.
        weights: ``(M, T)`` in (0, 1], or None for 1 (fixed beliefs ``signals``).
        trader: one of :data:`TRADERS`.
        budgets: ``(M, T)`` non-negative, required for ``trader="budget"`` only.

    Returns:
        dict with ``prices (M, T+1, n)``, ``beliefs (M, T, n)`` (the acting beliefs),
        ``trades (M, T, n)``, ``costs``, ``fees``, ``liquidity``, ``trader_profits`` (each
        ``(M, T)``), ``loss_by_outcome (M, n)``, ``mm_loss (M,)`` at ``outcomes``,
        ``worst_case_loss (M,)`` and ``loss_bound (M, n)``.

    NaN policy: NaN or inf in any array is refused (ValueError naming it).

    >>> from sqmarket import SQPM
    >>> sig = np.array([[[0.7, 0.3], [0.4, 0.6]]])          # 1 market, 2 traders
    >>> res = simulate_batch(SQPM(2, b=2.0), sig, np.array([1]))
    >>> res["prices"][0, -1].round(12).tolist(), round(float(res["mm_loss"][0]), 12)
    ([0.4, 0.6], 0.18)
    """
    owner = "simulate_batch"
    market = check_market("market", owner, market)
    n = market.n_outcomes
    dims: dict = {}
    signals = check_array("signals", owner, signals, shape=("M", "T", n), dims=dims)
    signals = signals.astype(np.float64)
    _check_rows_in_simplex("signals", owner, signals)
    outcomes = check_array("outcomes", owner, outcomes, shape=("M",), dims=dims, kind="int")
    if outcomes.min() < 0 or outcomes.max() >= n:
        raise param_error("outcomes", owner, f"integers in [0, {n})", describe(outcomes))
    M, T = signals.shape[:2]
    check_memory("signals", owner, describe(signals), 8.0 * M * T * (3 * n + 6))
    if weights is None:
        weights = np.ones((M, T))
    else:
        weights = check_array("weights", owner, weights, shape=("M", "T"), dims=dims)
        if weights.min() <= 0 or weights.max() > 1:
            raise param_error("weights", owner, "in (0, 1]", describe(weights))
    trader = check_choice("trader", owner, trader, TRADERS)
    if trader == "budget":
        if budgets is None:
            raise param_error("budgets", owner, "an (M, T) array for trader='budget'", None)
        budgets = check_array("budgets", owner, budgets, shape=("M", "T"), dims=dims)
        if budgets.min() < 0:
            raise param_error("budgets", owner, "non-negative", describe(budgets))
    elif budgets is not None:
        raise param_error("budgets", owner, "None unless trader='budget'", describe(budgets))
    if isinstance(market, LMSR) and np.any((signals <= 0) & (weights[..., None] >= 1)):
        raise param_error(
            "signals",
            owner,
            "strictly positive where the weight is 1 (LMSR prices are never 0)",
            describe(signals),
        )
    beliefs = np.empty((M, T, n))

    def choose(t: int, state: np.ndarray, price: np.ndarray, b: Any) -> np.ndarray:
        w = weights[:, t, None]
        pi = (1.0 - w) * price + w * signals[:, t]
        beliefs[:, t] = pi
        if trader == "myopic":
            return market._myopic(state, pi, b)
        if trader == "budget":
            return market._budget(state, pi, budgets[:, t], b)
        return market._buy_only(state, pi, b)

    out = _run(market, M, T, choose)
    rows = np.arange(M)
    out["beliefs"] = beliefs
    out["mm_loss"] = out["loss_by_outcome"][rows, outcomes]
    out["trader_profits"] = out["trades"][rows, :, outcomes] - out["costs"]
    return out


def replay_batch(market: Any, trades: Any) -> dict[str, Any]:
    """Replay S fixed trade sequences on S copies of ``market`` (each from its initial state),
    vectorised over the sequences.

    Args:
        market: the configuration to copy.
        trades: ``(S, T, n)`` real.

    Returns:
        dict with ``prices (S, T+1, n)``, ``costs``, ``fees``, ``liquidity`` (each ``(S, T)``),
        ``loss_by_outcome (S, n)``, ``worst_case_loss (S,)`` and ``loss_bound (S, n)``.

    NaN policy: NaN or inf in ``trades`` is refused (ValueError naming it).

    >>> from sqmarket import SQPM, QuadraticDCFMM
    >>> r = np.array([[[3.0, -1.0, 0.0], [0.0, 2.0, 2.0]]])
    >>> sq = replay_batch(SQPM(3, b=2.0), r)["loss_by_outcome"]
    >>> qm = replay_batch(QuadraticDCFMM(3, b=2.0), r)["loss_by_outcome"]
    >>> bool(np.all(sq <= qm))
    True
    """
    owner = "replay_batch"
    market = check_market("market", owner, market)
    n = market.n_outcomes
    trades = check_array("trades", owner, trades, shape=("S", "T", n)).astype(np.float64)
    S, T = trades.shape[:2]
    check_memory("trades", owner, describe(trades), 8.0 * S * T * (2 * n + 4))
    return _run(market, S, T, lambda t, state, price, b: trades[:, t])


def dirichlet_world(
    n_outcomes: int, n_markets: int, n_traders: int, samples: int = 5, seed: int = 0
) -> dict[str, Any]:
    """Markets with Bayesian traders: per market :math:`\\theta \\sim \\mathrm{Dirichlet}(\\mathbf
    1)` and an outcome :math:`\\omega \\sim \\theta`; per trader k = ``samples`` private draws
    from :math:`\\theta`.

    Returns:
        dict with ``theta (M, n)``, ``outcomes (M,)``, ``counts (M, T, n)``, ``beliefs (M, T,
        n)`` = :math:`(1 + c)/(n + k)` (each trader's own posterior mean), ``pooled (M, n)`` =
        :math:`(1 + \\sum_t c_t)/(n + kT)` (the posterior mean of all samples), and the inputs of
        price-learning traders for :func:`simulate_batch`: ``signals`` = c/k and ``weights (M,
        T)`` = :math:`k/(n + k(t + 1))`. A trader with those reads the price as the posterior mean
        of the :math:`n + kt` pseudo-counts before it and adds its own k samples, so a market
        that moves the price to each belief ends at ``pooled``.

    NaN policy: no floating-point input.

    >>> w = dirichlet_world(3, n_markets=2, n_traders=4, samples=5, seed=0)
    >>> w["counts"].shape, bool(np.allclose(w["counts"].sum(-1), 5))
    ((2, 4, 3), True)
    """
    owner = "dirichlet_world"
    n = check_int("n_outcomes", owner, n_outcomes, low=2)
    M = check_int("n_markets", owner, n_markets, low=1)
    T = check_int("n_traders", owner, n_traders, low=1)
    k = check_int("samples", owner, samples, low=1)
    seed = check_int("seed", owner, seed, low=0)
    check_memory("n_markets", owner, M, 8.0 * M * T * n * 5)
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.ones(n), size=M)
    edges = np.cumsum(theta, axis=1)
    outcomes = np.minimum((rng.random(M)[:, None] > edges).sum(axis=1), n - 1)
    counts = rng.multinomial(k, theta[:, None, :], size=(M, T)).astype(np.float64)
    t = np.arange(T)
    return {
        "theta": theta,
        "outcomes": outcomes,
        "counts": counts,
        "beliefs": (1.0 + counts) / (n + k),
        "pooled": (1.0 + counts.sum(axis=1)) / (n + k * T),
        "signals": counts / k,
        "weights": np.broadcast_to(k / (n + k * (t + 1.0)), (M, T)).copy(),
    }
