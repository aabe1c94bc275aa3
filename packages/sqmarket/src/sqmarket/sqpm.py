"""The Smooth Quadratic Prediction Market (SQPM): the price is the state.

The paper (Nueve and Waggoner, NeurIPS 2025, arXiv 2505.02959) splits the DCFMM trade cost
:math:`C(q+r) - C(q)` into the instantaneous-price part :math:`\\langle p, r\\rangle` and a
curvature ("slippage") part, and replaces both: the price moves by a steepest-descent step and the
fee is a smooth quadratic. With liquidity :math:`b > 0` and the norm :math:`\\|\\cdot\\|` of the
descent geometry (dual norm :math:`\\|\\cdot\\|_*`),

.. math::

    c(p_t, r) = \\langle p_t, r\\rangle + \\frac{1}{2b}\\|r\\|_*^2, \\qquad
    p_{t+1} = \\Pi_\\Delta\\Big(p_t + \\frac1b \\nabla\\big(\\tfrac12\\|r\\|_*^2\\big)\\Big).

``norm="l2"`` (Euclidean, the default): :math:`c = \\langle p, r\\rangle + \\|r\\|_2^2/(2b)` and
:math:`p_{t+1} = \\Pi_\\Delta(p_t + r/b)`: online gradient ascent on :math:`\\langle p, r\\rangle`.
Its properties, each tested:

- incentive compatibility: a trader with belief :math:`\\pi` maximises
  :math:`\\langle \\pi - p, r\\rangle - \\|r\\|^2/(2b)` at :math:`r^* = b(\\pi - p)`, which moves
  the price to :math:`\\Pi_\\Delta(\\pi) = \\pi`;
- bounded loss (the OGD regret lemma): for every outcome :math:`\\omega` and every trade sequence,
  :math:`L_\\omega \\le \\frac b2(\\|e_\\omega - p_0\\|^2 - \\|e_\\omega - p_T\\|^2)
  \\le \\frac b2(1 - \\frac1n)` from the uniform price, with equality for IC traders;
- no arbitrage: a sequence that returns the price to :math:`p_0` has :math:`L_\\omega \\le 0` in
  every outcome;
- the fee dominates the quadratic DCFMM's slippage (its cost function is :math:`(1/b)`-smooth), and
  on identical trade sequences from the same price, :math:`L^{SQPM}_\\omega \\le L^{QMSR}_\\omega`
  for every :math:`\\omega` (the regret inequality at :math:`u = \\nabla C(Q_T)` plus Fenchel
  duality; the gap is at least :math:`\\frac b2\\|p^{QMSR}_T - p^{SQPM}_T\\|^2`).

``norm="linf"`` is exploratory: the primal norm on prices is :math:`\\ell_1` (LMSR's smoothness
norm), so the fee is :math:`\\|r\\|_\\infty^2/(2b)` and the step is
:math:`\\nabla(\\tfrac12\\|r\\|_\\infty^2) = \\|r\\|_\\infty\\,\\mathrm{sign}(r_{i^*})\\,e_{i^*}`,
:math:`i^*` the lowest index attaining :math:`\\max_i |r_i|`, followed by the Euclidean
projection. Its myopic best trade :math:`b\\|\\pi - p\\|_1\\,\\mathrm{sign}(\\pi - p)` ties on every
coordinate, so the price does not move to :math:`\\pi` for n > 2; the properties above are not
claimed for it.

Adaptive liquidity: :math:`b_t = b_0 + \\beta\\sum_{s<t}\\|r_s\\|_1` prices trade :math:`t` (fee and
step). Telescoping the OGD step with non-decreasing :math:`b_t` gives, for every :math:`\\omega`,
:math:`L_\\omega \\le \\frac{b_0}2\\|e_\\omega - p_0\\|^2 + \\sum_{t \\ge 1}
\\frac{b_t - b_{t-1}}2\\|e_\\omega - p_t\\|^2 \\le \\frac{b_0}2(1 - \\frac1n) + (b_{T-1} - b_0)`,
tracked by :meth:`SQPM.loss_bound`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_choice, check_real
from sqmarket.ledger import Market
from sqmarket.simplex import _project_rows

__all__ = ["NORMS", "SQPM"]

#: The descent geometries: Euclidean (the paper's properties) and the exploratory l_inf fee.
NORMS = ("l2", "linf")
#: Bisection steps of the l_inf budgeted trade (the interval [0, 1] shrinks to 2**-60).
_BISECTION_STEPS = 60


def _col(b: Any) -> np.ndarray:
    """Liquidity ``(...)`` as a column ``(..., 1)`` that broadcasts against ``(..., n)``."""
    return np.asarray(b, dtype=np.float64)[..., None]


class SQPM(Market):
    """Smooth Quadratic Prediction Market over ``n_outcomes`` Arrow-Debreu securities.

    :math:`c(p, r) = \\langle p, r\\rangle + \\|r\\|_*^2/(2b)`,
    :math:`p' = \\Pi_\\Delta(p + \\nabla(\\tfrac12\\|r\\|_*^2)/b)` (see the module docstring).

    Args:
        n_outcomes: number of outcomes n >= 2.
        b: liquidity b > 0 (with ``adaptive_beta > 0``: the initial liquidity :math:`b_0`).
        norm: ``"l2"`` (the paper's Euclidean market) or ``"linf"`` (exploratory: fee
            :math:`\\|r\\|_\\infty^2/(2b)`, steepest :math:`\\ell_1` step).
        p0: initial price, a distribution ``(n,)`` (sum within 1e-9 of 1); default uniform.
        adaptive_beta: :math:`\\beta \\ge 0`; trade t is priced with
            :math:`b_t = b + \\beta\\sum_{s<t}\\|r_s\\|_1`.

    NaN policy: NaN or inf in any argument or trade is refused (ValueError naming it).

    >>> m = SQPM(n_outcomes=3, b=10.0)
    >>> r = m.myopic_trade([0.5, 0.3, 0.2])     # b (pi - p)
    >>> round(m.trade(r), 6), m.price_.round(6).tolist()   # cost (b/2)(||pi||^2 - ||p||^2)
    (0.233333, [0.5, 0.3, 0.2])
    >>> round(m.mm_loss(0), 6) <= m.loss_bound(0)
    True
    """

    def __init__(
        self,
        n_outcomes: int,
        b: float,
        norm: str = "l2",
        p0: Any = None,
        adaptive_beta: float = 0.0,
    ) -> None:
        self.norm = check_choice("norm", "SQPM", norm, NORMS)
        self.adaptive_beta = check_real("adaptive_beta", "SQPM", adaptive_beta, low=0)
        super().__init__(n_outcomes, b, p0)

    def __repr__(self) -> str:
        beta = f", adaptive_beta={self.adaptive_beta:g}" if self.adaptive_beta else ""
        return f"SQPM(n_outcomes={self.n_outcomes}, b={self.b:g}, norm={self.norm!r}{beta})"

    # --- kernels on (..., n) arrays -------------------------------------------------------
    def _initial_state(self) -> np.ndarray:
        return self.p0.copy()

    def _initial_bound(self) -> np.ndarray:
        """:math:`\\frac b2\\|e_\\omega - p_0\\|^2` per outcome."""
        return 0.5 * self.b * _sq_dist_to_vertices(self.p0)

    def _price(self, state: np.ndarray, b: Any) -> np.ndarray:
        return state

    def _liquidity(self, volume: Any) -> Any:
        return self.b + self.adaptive_beta * np.asarray(volume, dtype=np.float64)

    def _bound_increment(self, state: np.ndarray, b_old: Any, b_new: Any) -> np.ndarray:
        """:math:`\\frac{b_t - b_{t-1}}2\\|e_\\omega - p_t\\|^2` for every outcome."""
        return 0.5 * (_col(b_new) - _col(b_old)) * _sq_dist_to_vertices(state)

    def _dual_sq(self, r: np.ndarray) -> np.ndarray:
        """:math:`\\|r\\|_*^2` along the last axis."""
        if self.norm == "l2":
            return np.einsum("...i,...i->...", r, r)
        return np.abs(r).max(axis=-1) ** 2

    def _cost(self, state: np.ndarray, r: np.ndarray, b: Any) -> np.ndarray:
        """:math:`c(p, r) = \\langle p, r\\rangle + \\|r\\|_*^2/(2b)`."""
        b = np.asarray(b, dtype=np.float64)
        return np.einsum("...i,...i->...", state, r) + self._dual_sq(r) / (2.0 * b)

    def _step(self, r: np.ndarray) -> np.ndarray:
        """:math:`\\nabla(\\tfrac12\\|r\\|_*^2)`: ``r`` (l2); the largest-magnitude coordinate
        (lowest index on ties) carrying :math:`\\|r\\|_\\infty` with its sign (linf)."""
        if self.norm == "l2":
            return r
        i = np.abs(r).argmax(axis=-1)[..., None]
        step = np.zeros_like(r)
        np.put_along_axis(step, i, np.take_along_axis(r, i, axis=-1), axis=-1)
        return step

    def _next(self, state: np.ndarray, r: np.ndarray, b: Any) -> np.ndarray:
        """:math:`p' = \\Pi_\\Delta(p + \\nabla(\\tfrac12\\|r\\|_*^2)/b)`."""
        return _project_rows(state + self._step(r) / _col(b))

    def _direction_trade(self, h: np.ndarray, b: Any) -> np.ndarray:
        """:math:`\\arg\\max_r \\langle h, r\\rangle - \\|r\\|_*^2/(2b)`: :math:`b h` (l2);
        :math:`b\\|h\\|_1\\,\\mathrm{sign}(h)` (linf, zero where :math:`h_i = 0`)."""
        if self.norm == "l2":
            return _col(b) * h
        return _col(b) * np.abs(h).sum(axis=-1, keepdims=True) * np.sign(h)

    def _myopic(self, state: np.ndarray, belief: np.ndarray, b: Any) -> np.ndarray:
        """:math:`r^* = b(\\pi - p)` (l2); :math:`b\\|\\pi - p\\|_1\\mathrm{sign}(\\pi - p)`
        (linf)."""
        return self._direction_trade(belief - state, b)

    def _budget(self, state: np.ndarray, belief: np.ndarray, budget: Any, b: Any) -> np.ndarray:
        """Maximise :math:`\\langle \\pi - p, r\\rangle - \\|r\\|_*^2/(2b)` subject to
        :math:`c(p, r) \\le B`.

        KKT: :math:`\\pi - p - \\nabla f(r) = \\lambda(p + \\nabla f(r))`, so ``r`` is the
        unconstrained trade for the direction :math:`s\\pi - p`, :math:`s = 1/(1+\\lambda)`.
        l2, closed form: the IC trade costs :math:`\\frac b2(\\|\\pi\\|^2 - \\|p\\|^2)`; when that
        exceeds B, :math:`r = b(s\\pi - p)` with
        :math:`s = \\sqrt{(2B/b + \\|p\\|^2)/\\|\\pi\\|^2} \\in (0, 1)` makes the cost exactly B,
        and the price moves to :math:`s\\pi + (1 - s)/n`. linf: s by bisection (the cost of the
        trade for :math:`s\\pi - p` does not decrease with s, by convexity of the dual); where the
        cost jumps (a coordinate of :math:`s\\pi - p` changes sign) the two one-sided trades are
        both optimal for the Lagrangian and their mixture with cost exactly B is the solution.
        """
        b = np.asarray(b, dtype=np.float64)
        budget = np.asarray(budget, dtype=np.float64)
        free = self._myopic(state, belief, b)
        binds = self._cost(state, free, b) > budget
        if not np.any(binds):
            return free
        if self.norm == "l2":
            p_sq = np.einsum("...i,...i->...", state, state)
            pi_sq = np.einsum("...i,...i->...", belief, belief)
            s = np.sqrt(np.clip((2.0 * budget / b + p_sq) / pi_sq, 0.0, 1.0))
            return np.where(binds[..., None], _col(b) * (s[..., None] * belief - state), free)
        lo = np.zeros(np.shape(binds))
        hi = np.ones(np.shape(binds))
        for _ in range(_BISECTION_STEPS):
            mid = 0.5 * (lo + hi)
            over = self._cost(state, self._direction_trade(mid[..., None] * belief - state, b), b)
            lo, hi = np.where(over > budget, lo, mid), np.where(over > budget, mid, hi)
        r_lo = self._direction_trade(lo[..., None] * belief - state, b)
        r_hi = self._direction_trade(hi[..., None] * belief - state, b)
        c_lo, c_hi = self._cost(state, r_lo, b), self._cost(state, r_hi, b)
        gap = c_hi - c_lo
        theta = np.where(gap > 0, (budget - c_lo) / np.where(gap > 0, gap, 1.0), 0.0)
        mixed = r_lo + np.clip(theta, 0.0, 1.0)[..., None] * (r_hi - r_lo)
        return np.where(binds[..., None], mixed, free)

    def _buy_only(self, state: np.ndarray, belief: np.ndarray, b: Any) -> np.ndarray:
        """Best trade with :math:`r \\ge 0` (separable for l2): :math:`b(\\pi - p)_+`; linf:
        :math:`b\\|(\\pi - p)_+\\|_1` on every coordinate where :math:`\\pi_i > p_i`."""
        g = np.maximum(belief - state, 0.0)
        if self.norm == "l2":
            return _col(b) * g
        return _col(b) * g.sum(axis=-1, keepdims=True) * (g > 0)


def _sq_dist_to_vertices(p: np.ndarray) -> np.ndarray:
    """:math:`\\|e_\\omega - p\\|^2 = 1 - 2p_\\omega + \\|p\\|^2` for every outcome ``(..., n)``."""
    return 1.0 - 2.0 * p + np.einsum("...i,...i->...", p, p)[..., None]
