"""What every market here shares: the ledger of trades, the market maker's loss and its bound.

A market over ``n`` mutually exclusive outcomes sells Arrow-Debreu bundles: a trade
:math:`r \\in \\mathbb R^n` pays :math:`r_\\omega` when outcome :math:`\\omega` occurs and costs
``cost(state, r)``. After trades :math:`r_1, \\dots, r_T` the market maker's loss in outcome
:math:`\\omega` is

.. math::

    L_\\omega = \\sum_t r_t[\\omega] - \\sum_t \\mathrm{cost}_t ,

what it pays out minus what it collected; ``worst_case_loss`` is :math:`\\max_\\omega L_\\omega`
on the realised path.

Each concrete market (:class:`sqmarket.SQPM`, :class:`sqmarket.LMSR`,
:class:`sqmarket.QuadraticDCFMM`) supplies its rules as *kernels* on arrays with any leading axes
(``state (..., n)``, ``r (..., n)``, liquidity ``b (...)``), so the single-market ledger here and
the batched simulator (:mod:`sqmarket.simulate`) run the same arithmetic.
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np

from paperkit import check_array, check_int, check_memory, check_real, describe, param_error
from sqmarket.simplex import check_distribution

__all__ = ["Market"]


class Market:
    """Base class: configuration, the ledger and the argument checks of every market.

    Subclasses implement the kernels ``_initial_state``, ``_price``, ``_cost``,
    ``_next``, ``_myopic``, ``_budget``, ``_buy_only`` and ``_initial_bound`` (see the module
    docstring); the liquidity rule ``_liquidity`` and the bound increment ``_bound_increment``
    default to a constant ``b`` and no increment.

    Attributes (after construction):
        n_outcomes, b, p0: the configuration (``p0`` the initial price).
        price_: the current price ``(n,)``.
        b_: the liquidity the next trade is priced with.
        history_: one dict per executed trade: ``r``, ``cost``, ``fee`` (cost minus
            :math:`\\langle p, r\\rangle`), ``b``, ``price_before``, ``price_after``.
        shares_: the shares sold so far, :math:`\\sum_t r_t` ``(n,)``.
        revenue_: the money collected so far, :math:`\\sum_t \\mathrm{cost}_t`.
        volume_: :math:`\\sum_t \\|r_t\\|_1`.
    """

    def __init__(self, n_outcomes: int, b: float, p0: Any = None) -> None:
        owner = type(self).__name__
        if type(self) is Market:
            raise TypeError("Market is the abstract base: use SQPM, LMSR or QuadraticDCFMM")
        n = check_int("n_outcomes", owner, n_outcomes, low=2)
        check_memory("n_outcomes", owner, n_outcomes, 64.0 * n)
        self.n_outcomes = n
        self.b = check_real("b", owner, b, low=0, low_open=True)
        self.p0 = np.full(n, 1.0 / n) if p0 is None else check_distribution("p0", owner, p0, n)
        self.reset()

    # --- the ledger -------------------------------------------------------------------------
    def reset(self) -> Market:
        """Forget every trade: back to the initial state ``p0``. Returns the market."""
        self._state = self._initial_state()
        self.b_ = float(self.b)
        self._b_last: float | None = None
        self.history_: list[dict[str, Any]] = []
        self.shares_ = np.zeros(self.n_outcomes)
        self.revenue_ = 0.0
        self.volume_ = 0.0
        self._bound = self._initial_bound()
        return self

    def fresh(self) -> Market:
        """A copy of this market at its initial state, with the same configuration."""
        twin = copy.copy(self)
        return twin.reset()

    @property
    def price_(self) -> np.ndarray:
        """The current price: a distribution over the outcomes ``(n,)``."""
        return self._price(self._state, self.b_).copy()

    def _trade_vector(self, r: Any, owner: str) -> np.ndarray:
        return check_array(
            "r", f"{type(self).__name__}.{owner}", r, ndim=1, shape=(self.n_outcomes,)
        ).astype(np.float64)

    def quote(self, r: Any) -> float:
        """The cost of the bundle ``r`` ``(n,)`` at the current state, without trading.

        NaN policy: ``r`` with NaN or inf is refused (ValueError naming ``r``).
        """
        r = self._trade_vector(r, "quote")
        return float(self._cost(self._state, r, self.b_))

    def trade(self, r: Any) -> float:
        """Sell the bundle ``r`` ``(n,)``: update the state and the ledger; return its cost.

        NaN policy: ``r`` with NaN or inf is refused (ValueError naming ``r``).
        """
        r = self._trade_vector(r, "trade")
        if self._b_last is not None:  # bound terms of the liquidity change before this trade
            self._bound = self._bound + self._bound_increment(self._state, self._b_last, self.b_)
        before = self._price(self._state, self.b_)
        cost = float(self._cost(self._state, r, self.b_))
        self._state = self._next(self._state, r, self.b_)
        self.history_.append(
            {
                "r": r,
                "cost": cost,
                "fee": cost - float(before @ r),
                "b": self.b_,
                "price_before": before,
                "price_after": self._price(self._state, self.b_),
            }
        )
        self.shares_ = self.shares_ + r
        self.revenue_ += cost
        self.volume_ += float(np.abs(r).sum())
        self._b_last = self.b_
        self.b_ = float(self._liquidity(self.volume_))
        return cost

    def _outcome(self, outcome: Any, owner: str) -> int:
        return check_int(
            "outcome", f"{type(self).__name__}.{owner}", outcome, low=0, high=self.n_outcomes - 1
        )

    def mm_loss(self, outcome: int) -> float:
        """The market maker's loss if ``outcome`` occurs: :math:`\\sum_t r_t[\\omega] -
        \\sum_t \\mathrm{cost}_t` over the trades so far (0 before any trade)."""
        w = self._outcome(outcome, "mm_loss")
        return float(self.shares_[w] - self.revenue_)

    def worst_case_loss(self) -> float:
        """:math:`\\max_\\omega` of :meth:`mm_loss` on the realised path."""
        return float(self.shares_.max() - self.revenue_)

    def loss_bound(self, outcome: int | None = None) -> float:
        """The market's guaranteed bound on :meth:`mm_loss` for ``outcome`` (for every trade
        sequence from ``p0``; with adaptive liquidity, the bound telescoped along the realised
        path); ``outcome=None``: the largest over the outcomes."""
        if outcome is None:
            return float(self._bound.max())
        return float(self._bound[self._outcome(outcome, "loss_bound")])

    # --- trader best responses ----------------------------------------------------------------
    def _belief(self, belief: Any, owner: str) -> np.ndarray:
        return check_distribution(
            "belief", f"{type(self).__name__}.{owner}", belief, self.n_outcomes
        )

    def myopic_trade(self, belief: Any) -> np.ndarray:
        """The trade maximising a risk-neutral trader's expected profit
        :math:`\\langle \\pi, r\\rangle - \\mathrm{cost}(r)` under ``belief`` :math:`\\pi`.

        NaN policy: a belief with NaN or inf is refused (ValueError naming ``belief``).
        """
        pi = self._belief(belief, "myopic_trade")
        return self._myopic(self._state, pi, self.b_)

    def budget_trade(self, belief: Any, budget: float) -> np.ndarray:
        """The best trade under ``belief`` whose cost is at most ``budget``.

        NaN policy: NaN or inf in ``belief`` or ``budget`` is refused (ValueError).
        """
        pi = self._belief(belief, "budget_trade")
        budget = check_real("budget", f"{type(self).__name__}.budget_trade", budget, low=0)
        return self._budget(self._state, pi, np.float64(budget), self.b_)

    def buy_only_trade(self, belief: Any) -> np.ndarray:
        """The best trade under ``belief`` among bundles :math:`r \\ge 0`.

        NaN policy: a belief with NaN or inf is refused (ValueError naming ``belief``).
        """
        pi = self._belief(belief, "buy_only_trade")
        return self._buy_only(self._state, pi, self.b_)

    # --- kernel defaults --------------------------------------------------------------------
    def _liquidity(self, volume: Any) -> Any:
        """Liquidity for the next trade given the volume traded so far (constant here)."""
        return np.full(np.shape(volume), self.b) if np.ndim(volume) else self.b

    def _bound_increment(self, state: np.ndarray, b_old: Any, b_new: Any) -> np.ndarray:
        """Terms added to the per-outcome loss bound when the liquidity changes (none here)."""
        return np.zeros(state.shape)

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_outcomes={self.n_outcomes}, b={self.b:g})"


def check_market(name: str, owner: str, market: Any) -> Market:
    """``market`` if it is a :class:`Market`, else the worded TypeError."""
    if not isinstance(market, Market):
        raise param_error(
            name, owner, "an SQPM, LMSR or QuadraticDCFMM", describe(market), cls=TypeError
        )
    return market
