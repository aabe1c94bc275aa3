r"""Power laws in the model scale s (the paper's scaling law): :math:`g(s) = a + b\,s^{-\beta}`,
fitted by nonlinear least squares with beta in [0.05, 2] and, optionally, the asymptote a kept at
or above a floor (for the loss: a_L >= the Bayes risk, since every predictor's BCE is)."""

from __future__ import annotations

import warnings

import numpy as np
from scipy.optimize import OptimizeWarning, curve_fit

from paperkit import check_array, check_real, param_error

__all__ = ["BETA_BOUNDS", "fit_power_law", "power_law", "profile_fit"]

#: Bounds on the exponent beta.
BETA_BOUNDS = (0.05, 2.0)


def power_law(s: np.ndarray, a: float, b: float, beta: float) -> np.ndarray:
    """a + b s^(-beta) (no checks: the model function of the fit).

    >>> float(power_law(np.array([4.0]), 1.0, 2.0, 0.5)[0])
    2.0
    """
    return a + b * np.power(s, -beta)


def check_scales(owner: str, scales: object) -> np.ndarray:
    """At least 3 distinct positive finite scales, as floats."""
    s = check_array("scales", owner, scales, ndim=1).astype(float)
    if s.size < 3:
        raise param_error("scales", owner, "at least 3 scales", s.tolist())
    if s.min() <= 0:
        raise param_error("scales", owner, "positive", float(s.min()))
    if np.unique(s).size != s.size:
        raise param_error("scales", owner, "distinct", s.tolist())
    return s


_BETAS = np.linspace(*BETA_BOUNDS, 79)


def profile_fit(
    s: np.ndarray, v: np.ndarray, a_min: float | None = None
) -> tuple[np.ndarray, float]:
    """The grid-profiled fit: for each of 79 exponents in [0.05, 2], (a, b) by linear least
    squares (with ``a_min``: a = max(a, a_min) and b refitted, the constrained optimum of the
    convex problem in (a, b)); returns ``(a, b, beta)`` of the best and its residual sum of
    squares (no checks: the start of :func:`fit_power_law`, and the bootstrap's fast refit).

    >>> s = np.array([1.0, 2.0, 4.0])
    >>> params, sse = profile_fit(s, 1.0 + 2.0 * s ** -_BETAS[10])
    >>> bool(sse < 1e-20 and abs(params[2] - _BETAS[10]) < 1e-12)
    True
    >>> bool(profile_fit(s, 1.0 + 2.0 * s ** -_BETAS[10], a_min=1.5)[0][0] >= 1.5)
    True
    """
    basis = s[None, :, None] ** -_BETAS[:, None, None]  # (betas, points, 1)
    design = np.concatenate([np.ones_like(basis), basis], axis=2)  # (betas, points, 2)
    gram = np.einsum("kpi,kpj->kij", design, design)
    rhs = np.einsum("kpi,p->ki", design, v)
    coef = np.linalg.solve(gram, rhs[..., None])[..., 0]  # (betas, 2)
    if a_min is not None:
        low = coef[:, 0] < a_min
        b = basis[:, :, 0]  # (betas, points)
        coef[low, 0] = a_min
        coef[low, 1] = (b[low] @ (v - a_min)) / np.sum(b[low] ** 2, axis=1)
    sse = np.sum((np.einsum("kpi,ki->kp", design, coef) - v) ** 2, axis=1)
    k = int(np.argmin(sse))
    return np.array([coef[k, 0], coef[k, 1], _BETAS[k]]), float(sse[k])


def fit_power_law(
    scales: np.ndarray, values: np.ndarray, a_min: float | None = None
) -> tuple[float, float, float]:
    r"""Least-squares fit of :math:`a + b s^{-\beta}` with beta in [0.05, 2]: ``(a, b, beta)``.

    ``a_min`` (optional, finite): a lower bound on the asymptote a (for the loss: a known lower
    bound on the Bayes risk, which the limit of every model's BCE respects).

    The exponent is first profiled on a grid of 79 values (a, b by linear least squares), then
    the three are refined by ``scipy.optimize.curve_fit`` (trust-region reflective,
    bounded). Needs at least 3 distinct positive scales. NaN and inf refused.

    >>> s = np.array([250.0, 500, 1000, 2000])
    >>> np.round(fit_power_law(s, 0.4 + 3.0 * s ** -0.6), 6)
    array([0.4, 3. , 0.6])
    """
    owner = "fit_power_law"
    s = check_scales(owner, scales)
    v = check_array("values", owner, values, shape=(s.size,)).astype(float)
    if a_min is not None:
        a_min = check_real("a_min", owner, a_min)
    order = np.argsort(s)
    s, v = s[order], v[order]
    best, least = profile_fit(s, v, a_min)
    a_low = -np.inf if a_min is None else a_min
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", OptimizeWarning)
        try:
            params, _ = curve_fit(
                power_law,
                s,
                v,
                p0=best,
                bounds=([a_low, -np.inf, BETA_BOUNDS[0]], [np.inf, np.inf, BETA_BOUNDS[1]]),
                method="trf",
                x_scale="jac",
                ftol=1e-15,
                xtol=1e-15,
                gtol=1e-15,
            )
        except RuntimeError:  # no convergence: keep the profiled grid point
            params = best
    if np.sum((power_law(s, *params) - v) ** 2) <= least:
        best = params
    return float(best[0]), float(best[1]), float(best[2])
