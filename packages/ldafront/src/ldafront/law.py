r"""The closed-form frontier law and its rigorous upper bounds (derived stand-in for the
paper's closed-form frontier bound; see the README's Deviations).

Second-order law, exact to :math:`O((\Delta_0 - \delta)^3)` at the unconstrained optimum:

.. math::  PF(\delta) \approx L_0 + \frac{(\Delta_0 - \delta)_+^2}{2V},\qquad
   L_0 = L(\hat\eta),\ \Delta_0 = \Delta(\hat\eta),\ V = E[w_A^2\,\hat\eta(1 - \hat\eta)].

(Expanding the Lagrangian optimum f_mu of :mod:`ldafront.postprocess` in mu:
Delta_0 - Delta(f_mu) = mu V + O(mu^2) and L(f_mu) - L_0 = mu^2 V / 2 + O(mu^3).) The law is
not a bound in general; two rigorous upper bounds on the frontier are:

- the linear shift f = eta + h, h = -m sign(D_0) w_A eta (1 - eta), m = (Delta_0 - delta)/V,
  has DP exactly delta and, since KL <= chi^2,
  :math:`L \le L_0 + m^2 V / (1 - m \max_a |w_a|)^2` when :math:`m \max_a|w_a| < 1`
  (+inf otherwise);
- the chord to the constant predictor P(Y = 1), by convexity of BCE along the mixture
  (1 - t) eta + t P(Y = 1): :math:`L \le L_0 + (1 - \delta/\Delta_0)(H(\bar Y) - L_0)`.

:meth:`FrontierLaw.upper_bound` is the smaller of the two.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ldafront._checks import check_groups, check_labels, check_scores, dp_weights
from ldafront.metrics import binary_entropy
from paperkit import check_array, check_bool, check_real, param_error

__all__ = ["FrontierLaw", "chord_bound", "frontier_law", "shift_bound"]


def _grid(owner: str, deltas: Any) -> np.ndarray:
    grid = check_array("deltas", owner, deltas, ndim=1).astype(float)
    if grid.min() < 0.0:
        raise param_error("deltas", owner, "nonnegative", float(grid.min()))
    return grid


def _params(owner: str, L0: Any, D0: Any, V: Any) -> tuple[float, float, float]:
    return (
        check_real("L0", owner, L0, low=0.0),
        check_real("D0", owner, D0, low=0.0, high=1.0),
        check_real("V", owner, V, low=0.0, low_open=True),
    )


def frontier_law(L0: float, D0: float, V: float, deltas: np.ndarray) -> np.ndarray:
    r"""The second-order frontier law :math:`L_0 + (\Delta_0 - \delta)_+^2 / (2V)` at each delta.

    NaN and inf refused (parameters and grid).

    >>> frontier_law(0.5, 0.2, 0.5, np.array([0.0, 0.1, 0.3]))
    array([0.54, 0.51, 0.5 ])
    """
    L0, D0, V = _params("frontier_law", L0, D0, V)
    grid = _grid("frontier_law", deltas)
    return L0 + np.clip(D0 - grid, 0.0, None) ** 2 / (2.0 * V)


def shift_bound(L0: float, D0: float, V: float, w_max: float, deltas: np.ndarray) -> np.ndarray:
    r"""The linear-shift bound :math:`L_0 + m^2 V / (1 - m w_{\max})^2`,
    :math:`m = (\Delta_0 - \delta)_+ / V`, +inf where :math:`m w_{\max} \ge 1`.

    ``w_max`` = max_a |w_a| = 1 / min_a p_a. NaN and inf refused.

    >>> shift_bound(0.5, 0.2, 0.5, 4.0, np.array([0.2, 0.19, 0.0]))
    array([0.5       , 0.50023629,        inf])
    """
    owner = "shift_bound"
    L0, D0, V = _params(owner, L0, D0, V)
    w_max = check_real("w_max", owner, w_max, low=1.0)
    grid = _grid(owner, deltas)
    m = np.clip(D0 - grid, 0.0, None) / V
    room = 1.0 - m * w_max
    with np.errstate(divide="ignore"):
        return np.where(room > 0, L0 + m * m * V / np.where(room > 0, room, 1.0) ** 2, np.inf)


def chord_bound(L0: float, D0: float, H: float, deltas: np.ndarray) -> np.ndarray:
    r"""The chord :math:`L_0 + (1 - \delta/\Delta_0)_+ (H - L_0)` to the constant predictor,
    whose loss is H = H(P(Y = 1)) and whose DP gap is 0. NaN and inf refused.

    >>> chord_bound(0.5, 0.2, 0.6, np.array([0.0, 0.1, 0.3]))
    array([0.6 , 0.55, 0.5 ])
    """
    owner = "chord_bound"
    L0 = check_real("L0", owner, L0, low=0.0)
    D0 = check_real("D0", owner, D0, low=0.0, high=1.0)
    H = check_real("H", owner, H, low=0.0)
    grid = _grid(owner, deltas)
    if D0 == 0.0:
        return np.full(grid.shape, L0)
    return L0 + np.clip(1.0 - grid / D0, 0.0, None) * (H - L0)


class FrontierLaw:
    r"""The frontier law fitted from calibrated scores: L0_, D0_ (= Delta_0) and V_.

    ``fit(scores, y, A)`` sets

    - ``L0_`` = L(eta-hat) on (scores, y), ``D0_`` = |D(eta-hat)|, ``V_`` = E[w_A^2 eta(1-eta)],
    - ``H_`` = H(mean y) (loss of the constant predictor), ``w_max_`` = 1 / min_a p_a.

    ``predict(deltas)`` is the law :math:`L_0 + (\Delta_0 - \delta)_+^2 / (2V)`;
    ``upper_bound(deltas)`` the smaller of the shift and chord bounds (module docstring). The
    shift bound is rigorous for the expected loss under eta-hat (``y = scores``, or
    calibrated scores); the chord holds for any labels. NaN and inf refused.

    >>> rng = np.random.default_rng(0)
    >>> A = rng.integers(0, 2, 1000)
    >>> eta = 1 / (1 + np.exp(-(rng.normal(size=1000) + A)))
    >>> law = FrontierLaw().fit(eta, eta, A)
    >>> bool(np.all(law.predict([0.0, 0.1]) <= law.upper_bound([0.0, 0.1])))
    True
    """

    def fit(
        self, scores: np.ndarray, y: np.ndarray, A: np.ndarray, *, clip: bool = False
    ) -> FrontierLaw:
        """Estimate L0_, D0_, V_, H_ and w_max_ from scores (n,), labels y (n,) in [0, 1] (soft
        labels allowed) and binary groups A (n,). Returns self."""
        owner = "FrontierLaw.fit"
        dims: dict = {}
        clip = check_bool("clip", owner, clip)
        f = check_scores("scores", owner, scores, clip=clip, dims=dims)
        labels = check_labels("y", owner, y, dims=dims)
        groups = check_groups("A", owner, A, dims=dims)
        w = dp_weights(groups)
        self.L0_ = float(np.mean(-labels * np.log(f) - (1.0 - labels) * np.log1p(-f)))
        self.D0_ = float(abs(np.mean(w * f)))
        self.V_ = float(np.mean(w * w * f * (1.0 - f)))
        self.H_ = binary_entropy(float(labels.mean()))
        self.w_max_ = float(np.abs(w).max())
        return self

    def _fitted(self, method: str) -> None:
        if not hasattr(self, "V_"):
            raise ValueError(
                f"The 'self' parameter of FrontierLaw.{method} must be a fitted FrontierLaw "
                "(call fit first). Got an unfitted FrontierLaw instead."
            )

    def predict(self, deltas: np.ndarray) -> np.ndarray:
        """The law at each delta (``(k,)`` array)."""
        self._fitted("predict")
        grid = _grid("FrontierLaw.predict", deltas)
        return frontier_law(self.L0_, min(self.D0_, 1.0), self.V_, grid)

    def upper_bound(self, deltas: np.ndarray) -> np.ndarray:
        """min(shift bound, chord bound) at each delta (``(k,)`` array)."""
        self._fitted("upper_bound")
        grid = _grid("FrontierLaw.upper_bound", deltas)
        shift = shift_bound(self.L0_, self.D0_, self.V_, self.w_max_, grid)
        chord = chord_bound(self.L0_, self.D0_, self.H_, grid)
        return np.minimum(shift, chord)
