"""The baselines: duality-based cost-function market makers (DCFMMs), whose state is the vector q of
outstanding shares (Abernethy, Chen and Wortman Vaughan, 2013).

A DCFMM with regulariser R on the simplex has cost function
:math:`C(q) = \\max_{\\mu \\in \\Delta}\\ \\langle \\mu, q\\rangle - R(\\mu)`, price
:math:`p(q) = \\nabla C(q)` and trade cost :math:`C(q + r) - C(q)` (path independent). Since
:math:`C(q + c\\mathbf 1) = C(q) + c`, the grand bundle :math:`\\mathbf 1` always costs exactly
what it pays, so adding :math:`c\\mathbf 1` to a trade changes neither its profit in any outcome
nor the price.

- :class:`LMSR`: :math:`R(\\mu) = b\\sum_i \\mu_i\\log\\mu_i`, :math:`C(q) = b\\log\\sum_i
  e^{q_i/b}`, :math:`p(q) = \\mathrm{softmax}(q/b)`; worst-case loss :math:`-b\\log p_0[\\omega]`
  (:math:`b\\log n` from the uniform price).
- :class:`QuadraticDCFMM` (QMSR): :math:`R(\\mu) = \\frac b2\\|\\mu\\|^2`,
  :math:`p(q) = \\Pi_\\Delta(q/b)`, :math:`C(q) = \\langle p(q), q\\rangle - \\frac b2\\|p(q)\\|^2`;
  worst-case loss :math:`\\frac b2\\|e_\\omega - p_0\\|^2` (:math:`\\frac b2(1 - \\frac1n)` from
  the uniform price).

Both start at :math:`q_0` with :math:`p(q_0) = p_0` (:math:`q_0 = b\\log p_0`, resp.
:math:`b p_0`). At the uniform price their price Jacobians are
:math:`\\frac1{nb}(I - \\mathbf 1\\mathbf 1^\\top/n)` and :math:`\\frac1b(I -
\\mathbf 1\\mathbf 1^\\top/n)`: LMSR with :math:`b/n` matches the liquidity of QMSR and SQPM with
:math:`b`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import param_error
from sqmarket.ledger import Market
from sqmarket.simplex import _project_rows
from sqmarket.sqpm import _col, _sq_dist_to_vertices

__all__ = ["LMSR", "QuadraticDCFMM"]


class _DCFMM(Market):
    """Shared rules of the cost-function markets: the trade is a change of q, and the best
    responses come from the share vector that prices at the belief (``_target``)."""

    def _next(self, state: np.ndarray, r: np.ndarray, b: Any) -> np.ndarray:
        return state + r

    def _cost(self, state: np.ndarray, r: np.ndarray, b: Any) -> np.ndarray:
        """:math:`C(q + r) - C(q)`."""
        return self._C(state + r, b) - self._C(state, b)

    def _myopic(self, state: np.ndarray, belief: np.ndarray, b: Any) -> np.ndarray:
        """The trade with :math:`p(q + r) = \\pi`, made zero-sum (adding :math:`c\\mathbf 1`
        changes no profit): :math:`r = x - \\bar x`, :math:`x = q_\\pi - q`."""
        x = self._target(belief, b) - state
        return x - x.mean(axis=-1, keepdims=True)

    def _budget(self, state: np.ndarray, belief: np.ndarray, budget: Any, b: Any) -> np.ndarray:
        """The myopic trade, with the grand bundle shorted by the shortfall when it costs more
        than B: :math:`r^* + \\min(0, B - C(q + r^*) + C(q))\\mathbf 1`. Its cost is at most B, its
        profit and the new price are the myopic trade's: a cost budget never binds here."""
        r = self._myopic(state, belief, b)
        short = np.minimum(0.0, np.asarray(budget) - self._cost(state, r, b))
        return r + short[..., None]

    def _buy_only(self, state: np.ndarray, belief: np.ndarray, b: Any) -> np.ndarray:
        """The myopic trade plus the grand bundle that makes it non-negative,
        :math:`r^* - \\min(0, \\min_i r^*_i)\\mathbf 1`: same profit, same new price."""
        r = self._myopic(state, belief, b)
        return r - np.minimum(0.0, r.min(axis=-1, keepdims=True))


class LMSR(_DCFMM):
    """Hanson's logarithmic market scoring rule as a DCFMM: :math:`C(q) = b\\log\\sum_i
    e^{q_i/b}`, :math:`p(q) = \\mathrm{softmax}(q/b)`.

    Args:
        n_outcomes: number of outcomes n >= 2.
        b: liquidity b > 0 (``b/n`` matches the liquidity of an SQPM or QMSR with ``b``).
        p0: initial price, a strictly positive distribution ``(n,)``; default uniform
            (:math:`q_0 = b\\log p_0`).

    Its myopic best trade is :math:`b(\\log\\pi - \\log p)` made zero-sum; a belief with a zero
    entry has no best trade (the supremum is not attained) and is refused.

    NaN policy: NaN or inf in any argument or trade is refused (ValueError naming it).

    >>> m = LMSR(n_outcomes=2, b=1.0)
    >>> round(m.trade([50.0, 0.0]), 6), round(m.worst_case_loss(), 6)   # -> b log 2
    (49.306853, 0.693147)
    """

    def __init__(self, n_outcomes: int, b: float, p0: Any = None) -> None:
        super().__init__(n_outcomes, b, p0)

    def reset(self) -> LMSR:
        if np.any(self.p0 <= 0):
            raise param_error("p0", "LMSR", "strictly positive (q0 = b log p0)", self.p0.tolist())
        return super().reset()

    def _initial_state(self) -> np.ndarray:
        return self.b * np.log(self.p0)

    def _initial_bound(self) -> np.ndarray:
        return -self.b * np.log(self.p0)

    @staticmethod
    def _C(q: np.ndarray, b: Any) -> np.ndarray:
        """:math:`b\\log\\sum_i e^{q_i/b}`, stabilised by the maximum."""
        z = q / _col(b)
        top = z.max(axis=-1, keepdims=True)
        lse = np.log(np.exp(z - top).sum(axis=-1)) + top[..., 0]
        return np.asarray(b) * lse

    def _price(self, state: np.ndarray, b: Any) -> np.ndarray:
        z = state / _col(b)
        e = np.exp(z - z.max(axis=-1, keepdims=True))
        return e / e.sum(axis=-1, keepdims=True)

    def _target(self, belief: np.ndarray, b: Any) -> np.ndarray:
        return _col(b) * np.log(belief)

    def _belief(self, belief: Any, owner: str) -> np.ndarray:
        pi = super()._belief(belief, owner)
        if np.any(pi <= 0):
            raise param_error(
                "belief",
                f"LMSR.{owner}",
                "strictly positive (LMSR prices are never 0)",
                pi.tolist(),
            )
        return pi


class QuadraticDCFMM(_DCFMM):
    """The quadratic DCFMM (QMSR): :math:`R(\\mu) = \\frac b2\\|\\mu\\|^2` on the simplex,
    :math:`p(q) = \\Pi_\\Delta(q/b)`, :math:`C(q) = \\langle p(q), q\\rangle -
    \\frac b2\\|p(q)\\|^2`.

    Args:
        n_outcomes: number of outcomes n >= 2.
        b: liquidity b > 0.
        p0: initial price, a distribution ``(n,)``; default uniform (:math:`q_0 = b p_0`).

    NaN policy: NaN or inf in any argument or trade is refused (ValueError naming it).

    >>> m = QuadraticDCFMM(n_outcomes=4, b=10.0)
    >>> m.trade([20.0, 0.0, 0.0, 0.0]) > 0, round(m.worst_case_loss(), 12)   # (b/2)(1 - 1/n)
    (True, 3.75)
    """

    def __init__(self, n_outcomes: int, b: float, p0: Any = None) -> None:
        super().__init__(n_outcomes, b, p0)

    def _initial_state(self) -> np.ndarray:
        return self.b * self.p0

    def _initial_bound(self) -> np.ndarray:
        return 0.5 * self.b * _sq_dist_to_vertices(self.p0)

    @staticmethod
    def _C(q: np.ndarray, b: Any) -> np.ndarray:
        p = _project_rows(q / _col(b))
        return np.einsum("...i,...i->...", p, q) - 0.5 * np.asarray(b) * np.einsum(
            "...i,...i->...", p, p
        )

    def _price(self, state: np.ndarray, b: Any) -> np.ndarray:
        return _project_rows(state / _col(b))

    def _target(self, belief: np.ndarray, b: Any) -> np.ndarray:
        return _col(b) * belief
