"""Traders: risk-neutral agents who maximise expected profit under a belief, alone or under the
paper's realistic constraints (a budget, buy-only securities), and the greedy adversary.

A trader's belief when it trades is :math:`\\tilde\\pi = (1 - w)\\,p + w\\,\\pi`, with ``p`` the
market's current price and ``weight`` :math:`w \\in (0, 1]`: ``weight=1`` is a fixed belief; a
Bayesian trader who reads the price as the posterior mean of everything sold before it uses
:math:`w = k/(A + k)` (k own samples, A the pseudo-count behind the price); the greedy adversary
uses :math:`\\pi = e_{\\omega^*}`.

Every trader's ``best_trade(market)`` asks the market for its closed form
(:meth:`sqmarket.SQPM.myopic_trade`, ``budget_trade``, ``buy_only_trade``); for SQPM with the
Euclidean fee these are :math:`b(\\pi - p)`, :math:`b(s\\pi - p)` and :math:`b(\\pi - p)_+`.
:meth:`BudgetTrader.numeric_trade` solves the budgeted problem with SLSQP instead, as a
cross-check.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_int, check_real, param_error
from sqmarket.ledger import Market, check_market
from sqmarket.simplex import check_distribution

__all__ = ["BudgetTrader", "BuyOnlyTrader", "GreedyAdversary", "MyopicTrader"]


class MyopicTrader:
    """A risk-neutral trader who maximises :math:`\\langle\\tilde\\pi, r\\rangle -
    \\mathrm{cost}(r)` once, on arrival.

    Args:
        belief: a distribution :math:`\\pi` ``(n,)`` (entries >= 0, sum within 1e-9 of 1).
        weight: :math:`w \\in (0, 1]`; the trader acts on :math:`(1 - w)p + w\\pi`, p the
            price it finds (1: a fixed belief).

    NaN policy: NaN or inf in ``belief`` or ``weight`` is refused (ValueError naming it).

    >>> from sqmarket import SQPM
    >>> MyopicTrader([0.7, 0.3]).best_trade(SQPM(2, b=4.0)).round(12).tolist()   # b (pi - p)
    [0.8, -0.8]
    """

    def __init__(self, belief: Any, weight: float = 1.0) -> None:
        owner = type(self).__name__
        self.belief = check_distribution("belief", owner, belief)
        self.weight = check_real("weight", owner, weight, low=0, high=1, low_open=True)

    def _acting_belief(self, market: Any) -> tuple[Market, np.ndarray]:
        owner = f"{type(self).__name__}.best_trade"
        market = check_market("market", owner, market)
        if self.belief.shape[0] != market.n_outcomes:
            raise param_error(
                "market",
                owner,
                f"a market over {self.belief.shape[0]} outcomes (the belief's)",
                market,
            )
        w = self.weight
        return market, (1.0 - w) * market.price_ + w * self.belief

    def best_trade(self, market: Any) -> np.ndarray:
        """The trade maximising expected profit at ``market``'s current state (closed form per
        market: :math:`b(\\pi - p)` for SQPM, :math:`b(\\log\\pi - \\log p)` made zero-sum for
        LMSR, :math:`b\\pi - q` made zero-sum for QMSR)."""
        market, pi = self._acting_belief(market)
        return market.myopic_trade(pi)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(belief={self.belief.round(4).tolist()}, weight={self.weight:g})"
        )


class BudgetTrader(MyopicTrader):
    """A myopic trader whose trade may cost at most ``budget``:
    :math:`\\max_r \\langle\\tilde\\pi, r\\rangle - c(r)` s.t. :math:`c(r) \\le B`.

    SQPM (l2): the IC trade costs :math:`\\frac b2(\\|\\pi\\|^2 - \\|p\\|^2)`; above B the trade
    is :math:`b(s\\pi - p)`, :math:`s = \\sqrt{(2B/b + \\|p\\|^2)/\\|\\pi\\|^2}`, and the price
    moves to :math:`s\\pi + (1 - s)/n` (the belief shrunk toward uniform). DCFMMs: the budget
    never binds (shorting the grand bundle :math:`\\mathbf 1` is free of risk and pays its
    price).

    Args:
        belief: a distribution ``(n,)``.
        budget: :math:`B \\ge 0`.
        weight: as for :class:`MyopicTrader`.

    NaN policy: NaN or inf in any argument is refused (ValueError naming it).

    >>> from sqmarket import SQPM
    >>> m = SQPM(2, b=10.0)
    >>> t = BudgetTrader([0.9, 0.1], budget=0.5)
    >>> round(m.quote(t.best_trade(m)), 12)     # the budget binds: cost = B
    0.5
    """

    def __init__(self, belief: Any, budget: float, weight: float = 1.0) -> None:
        super().__init__(belief, weight)
        self.budget = check_real("budget", type(self).__name__, budget, low=0)

    def best_trade(self, market: Any) -> np.ndarray:
        """The closed-form budgeted trade (see the class docstring)."""
        market, pi = self._acting_belief(market)
        return market.budget_trade(pi, self.budget)

    def numeric_trade(self, market: Any, *, ftol: float = 1e-12) -> np.ndarray:
        """The same problem solved by SLSQP (scipy), as a cross-check of :meth:`best_trade`.

        The objective and the constraint use the market's own cost. For the l_inf SQPM the
        non-smooth :math:`\\|r\\|_\\infty^2` is lifted to a variable t with
        :math:`-t \\le r_i \\le t`.
        """
        from scipy.optimize import minimize

        market, pi = self._acting_belief(market)
        ftol = check_real("ftol", "BudgetTrader.numeric_trade", ftol, low=0, low_open=True)
        state, b, n = market._state, market.b_, market.n_outcomes
        lifted = getattr(market, "norm", "l2") == "linf"
        p = market.price_

        def cost(x: np.ndarray) -> float:
            if lifted:
                return float(p @ x[:n] + x[n] ** 2 / (2.0 * b))
            return float(market._cost(state, x, b))

        constraints = [{"type": "ineq", "fun": lambda x: self.budget - cost(x)}]
        if lifted:
            for sign in (1.0, -1.0):
                constraints.append({"type": "ineq", "fun": lambda x, s=sign: x[n] - s * x[:n]})
        x0 = np.zeros(n + lifted)
        res = minimize(
            lambda x: cost(x) - float(pi @ x[:n]),
            x0,
            method="SLSQP",
            constraints=constraints,
            options={"ftol": ftol, "maxiter": 1000},
        )
        return np.asarray(res.x[:n])


class BuyOnlyTrader(MyopicTrader):
    """A myopic trader restricted to buying, :math:`r \\ge 0`.

    SQPM (l2): the problem separates, :math:`r^* = b(\\pi - p)_+`, and the price moves to
    :math:`\\Pi_\\Delta(\\max(p, \\pi))`, which is not :math:`\\pi` in general. DCFMMs: the
    constraint never binds (the myopic trade plus enough grand bundles).

    Args:
        belief: a distribution ``(n,)``.
        weight: as for :class:`MyopicTrader`.

    NaN policy: NaN or inf in any argument is refused (ValueError naming it).

    >>> from sqmarket import SQPM
    >>> BuyOnlyTrader([0.6, 0.3, 0.1]).best_trade(SQPM(3, b=3.0)).round(6).tolist()
    [0.8, 0.0, 0.0]
    """

    def best_trade(self, market: Any) -> np.ndarray:
        """The best trade among :math:`r \\ge 0`."""
        market, pi = self._acting_belief(market)
        return market.buy_only_trade(pi)


class GreedyAdversary(MyopicTrader):
    """The greedy adversary: each trade is the myopic trade toward :math:`e_{\\omega^*}`, moving
    the price a fraction ``step`` of the way there (belief :math:`(1 - \\eta)p + \\eta
    e_{\\omega^*}`). Against SQPM and QMSR its loss approaches :math:`\\frac b2(1 - \\frac1n)`
    from the uniform price, against LMSR :math:`b\\log n`.

    Args:
        outcome: :math:`\\omega^*`, in ``[0, n_outcomes)``.
        n_outcomes: n >= 2.
        step: :math:`\\eta \\in (0, 1]` (LMSR needs :math:`\\eta < 1`: its price never reaches a
            vertex).

    NaN policy: NaN or inf in ``step`` is refused (ValueError naming it).

    >>> from sqmarket import SQPM
    >>> m = SQPM(4, b=10.0)
    >>> _ = m.trade(GreedyAdversary(0, 4, step=1.0).best_trade(m))
    >>> round(m.mm_loss(0), 12)                   # (b/2)(1 - 1/n)
    3.75
    """

    def __init__(self, outcome: int, n_outcomes: int, step: float = 0.5) -> None:
        n = check_int("n_outcomes", "GreedyAdversary", n_outcomes, low=2, high=10**8)
        self.outcome = check_int("outcome", "GreedyAdversary", outcome, low=0, high=n - 1)
        step = check_real("step", "GreedyAdversary", step, low=0, high=1, low_open=True)
        super().__init__(np.eye(1, n, self.outcome)[0], step)
