r"""The loss-optimal predictor under a demographic-parity constraint, in closed form.

Minimising the Lagrangian E[l(Y, f)] + mu E[w_A f] pointwise (the
constrained optimum of BCE under a DP constraint) gives, at (x, a) with eta = P(Y = 1 | x, a)
and c = mu w_a, the root in (0, 1) of

.. math::  c f^2 - (1 + c) f + \eta = 0, \qquad
   f_\mu = \frac{2\eta}{(1 + c) + \sqrt{(1 + c)^2 - 4 c \eta}},

the rationalised form, exact at c = 0 (f = eta), free of cancellation for small |c| and with a
positive denominator for every real c. D(f_mu) decreases strictly in mu, so the multiplier that
meets a DP target is found by a bracketed root search. BCE is convex and the constraint linear,
so with the Bayes posterior eta the pairs (Delta(f_mu), L(f_mu)) trace the exact Pareto
frontier PF(delta) = min {L(f) : Delta(f) <= delta}; with calibrated model scores they trace an
achievable frontier (an upper bound on the PF, certified on held-out data).
"""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import brentq

from ldafront._checks import check_groups, check_labels, check_scores, dp_weights
from paperkit import check_array, check_bool, check_choice, check_real

__all__ = ["fair_shift", "optimal_fair_postprocess", "postprocessed_frontier"]

_OWNER = "optimal_fair_postprocess"


def _f_mu(eta: np.ndarray, c: np.ndarray) -> np.ndarray:
    """The root in (0, 1) of c f^2 - (1 + c) f + eta = 0, in the rationalised form."""
    b = 1.0 + c
    return 2.0 * eta / (b + np.sqrt(b * b - 4.0 * c * eta))


def fair_shift(eta: np.ndarray, A: np.ndarray, mu: float, *, clip: bool = False) -> np.ndarray:
    r"""The Lagrangian optimum :math:`f_\mu(x, a) = 2\eta / [(1+c) + \sqrt{(1+c)^2 - 4c\eta}]`,
    :math:`c = \mu w_a`, w_1 = 1/p_1 and w_0 = -1/p_0 (group frequencies of ``A``).

    ``mu`` > 0 lowers the signed DP gap, ``mu`` < 0 raises it; ``mu = 0`` returns eta.
    NaN and inf refused; eta in (0, 1) unless ``clip=True``.

    >>> f = fair_shift(np.array([0.7, 0.6, 0.3, 0.2]), np.array([1, 1, 0, 0]), 0.3)
    >>> bool(np.all((f > 0) & (f < 1)))
    True
    """
    dims: dict = {}
    clip = check_bool("clip", "fair_shift", clip)
    eta = check_scores("eta", "fair_shift", eta, clip=clip, dims=dims)
    groups = check_groups("A", "fair_shift", A, dims=dims)
    mu = check_real("mu", "fair_shift", mu)
    return _f_mu(eta, mu * dp_weights(groups))


def _solve(
    eta: np.ndarray, groups: np.ndarray, target: float, xtol: float = 1e-14
) -> tuple[float, np.ndarray]:
    """The multiplier mu with D(f_mu) = target (signed) and f_mu; Brent's method on a bracket
    grown by doubling (D is strictly decreasing in mu)."""
    w = dp_weights(groups)

    def gap(mu: float) -> float:
        return float(np.mean(w * _f_mu(eta, mu * w))) - target

    d0 = gap(0.0)
    if d0 == 0.0:
        return 0.0, eta.copy()
    step = 1.0 if d0 > 0 else -1.0  # D > target: raise mu
    hi = step
    while np.sign(gap(hi)) == np.sign(d0):
        hi *= 2.0
    lo, hi = sorted((0.0, hi))
    mu = brentq(gap, lo, hi, xtol=xtol, rtol=8.9e-16, maxiter=200)
    return mu, _f_mu(eta, mu * w)


def optimal_fair_postprocess(
    eta_hat: np.ndarray,
    A: np.ndarray,
    delta: float,
    *,
    on_infeasible: str = "warn",
    clip: bool = False,
    return_mu: bool = False,
) -> np.ndarray | tuple[np.ndarray, float]:
    r"""The BCE-optimal predictor with DP gap :math:`\Delta(f) = \delta`, given scores eta-hat.

    Solves :math:`\min_f E[\ell(\hat\eta, f)]` s.t. :math:`|D(f)| \le \delta` through the
    closed-form Lagrangian optimum :math:`f_\mu` (see :func:`fair_shift`), with mu found so that
    :math:`D(f_\mu) = \mathrm{sign}(D_0)\,\delta` (Brent's bracketed root search to
    ``xtol = 1e-14`` on mu; the DP of the result matches delta to about 1e-12).

    Args:
        eta_hat: ``(n,)`` calibrated scores P(Y = 1 | x, a) in (0, 1) (clipped with ``clip``).
        A: ``(n,)`` binary groups, both present; p_a are their frequencies here.
        delta: the target DP gap, in [0, 1].
        on_infeasible: when delta >= Delta_0 = |D(eta_hat)| the constraint is inactive:
            ``"warn"`` (warn and return the input) or ``"raise"`` (ValueError).
        clip: clip the scores into (0, 1) instead of refusing them.
        return_mu: also return the multiplier mu.

    Returns:
        ``(n,)`` adjusted probabilities (and mu with ``return_mu``).

    NaN and inf are refused.

    >>> eta = np.array([0.9, 0.6, 0.5, 0.2, 0.3, 0.4])
    >>> A = np.array([1, 1, 1, 0, 0, 0])
    >>> f = optimal_fair_postprocess(eta, A, delta=0.1)
    >>> round(float(f[:3].mean() - f[3:].mean()), 9)
    0.1
    """
    dims: dict = {}
    clip = check_bool("clip", _OWNER, clip)
    eta = check_scores("eta_hat", _OWNER, eta_hat, clip=clip, dims=dims)
    groups = check_groups("A", _OWNER, A, dims=dims)
    delta = check_real("delta", _OWNER, delta, low=0.0, high=1.0)
    on_infeasible = check_choice("on_infeasible", _OWNER, on_infeasible, ("warn", "raise"))
    return_mu = check_bool("return_mu", _OWNER, return_mu)
    d0 = float(np.mean(dp_weights(groups) * eta))
    if delta >= abs(d0):
        message = f"delta = {delta:g} >= Delta_0 = {abs(d0):.6g}: the constraint is inactive"
        if on_infeasible == "raise":
            raise ValueError(
                f"The 'delta' parameter of {_OWNER} must be below the DP gap of the scores "
                f"({abs(d0):.6g}). Got {delta!r} instead."
            )
        warnings.warn(message + "; returning the input", stacklevel=2)
        return (eta.copy(), 0.0) if return_mu else eta.copy()
    mu, f = _solve(eta, groups, np.sign(d0) * delta)
    return (f, mu) if return_mu else f


def postprocessed_frontier(
    eta_hat: np.ndarray,
    A: np.ndarray,
    deltas: np.ndarray,
    y: np.ndarray | None = None,
    *,
    clip: bool = False,
) -> np.ndarray:
    r"""The loss of :func:`optimal_fair_postprocess` at each target delta: the frontier traced
    by post-processing the scores.

    With the Bayes posterior and ``y=None`` (the expected loss under eta itself) this is the
    exact Pareto frontier PF(delta); with model scores and held-out labels ``y`` it is an
    achievable frontier. Targets at or above Delta_0 give L(eta_hat). NaN and inf refused.

    >>> eta = np.array([0.9, 0.6, 0.5, 0.2, 0.3, 0.4])
    >>> A = np.array([1, 1, 1, 0, 0, 0])
    >>> pf = postprocessed_frontier(eta, A, np.array([0.0, 0.1, 0.3, 0.4, 0.5]))
    >>> bool(np.all(np.diff(pf) <= 0) and pf[-2] == pf[-1])
    True
    """
    owner = "postprocessed_frontier"
    dims: dict = {}
    clip = check_bool("clip", owner, clip)
    eta = check_scores("eta_hat", owner, eta_hat, clip=clip, dims=dims)
    groups = check_groups("A", owner, A, dims=dims)
    grid = check_array("deltas", owner, deltas, ndim=1).astype(float)
    if grid.min() < 0:
        raise ValueError(
            f"The 'deltas' parameter of {owner} must be nonnegative. Got {grid.min()!r} instead."
        )
    labels = eta if y is None else check_labels("y", owner, y, dims=dims)
    d0 = float(np.mean(dp_weights(groups) * eta))

    def loss(f: np.ndarray) -> float:
        return float(np.mean(-labels * np.log(f) - (1.0 - labels) * np.log1p(-f)))

    out = np.empty(grid.shape)
    for i, delta in enumerate(grid):
        f = eta if delta >= abs(d0) else _solve(eta, groups, np.sign(d0) * delta)[1]
        out[i] = loss(f)
    return out
