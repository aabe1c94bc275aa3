r"""Fits of the two kinds of convergence the paper's rates describe: linear (geometric)
:math:`v_t \approx c \rho^t` and power law :math:`v_t \approx c\, t^a`."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, check_real, describe, param_error

__all__ = ["fit_linear_rate", "fit_power_law"]


def _series(owner: str, t: Any, v: Any) -> tuple[np.ndarray, np.ndarray]:
    dims: dict = {}
    t = check_array("t", owner, t, shape=("T",), dims=dims).astype(float)
    v = check_array("v", owner, v, shape=("T",), dims=dims).astype(float)
    return t, v


def fit_power_law(
    t: np.ndarray, v: np.ndarray, t_min: float | None = None, t_max: float | None = None
) -> tuple[float, float, float]:
    r"""Fit :math:`v \approx c\, t^a` on :math:`t \in [t_{\min}, t_{\max}]` (default: all
    points); returns ``(a, c, r2)``.

    Weighted least squares of :math:`\log v` on :math:`\log t`, each point weighted by its share
    of the :math:`\log t` axis (half the distance to its neighbours), so every decade counts
    equally whether ``t`` is dense (every step) or log-spaced. ``r2`` is the weighted coefficient
    of determination. At the critical step size the paper's rates give :math:`a = -1/2` for
    :math:`|r_t|` and :math:`a = -1` for the loss.

    NaN policy: NaN or inf in ``t`` or ``v`` is refused; the points in the window must have
    ``t > 0`` and ``v > 0`` (pass :math:`|r_t|`, not the alternating :math:`r_t`), at least 3.

    >>> t = np.arange(1, 10_001)
    >>> a, c, r2 = fit_power_law(t, 3.0 / np.sqrt(t), 100, 10_000)
    >>> round(a, 6), round(c, 6), round(r2, 6)
    (-0.5, 3.0, 1.0)
    """
    owner = "fit_power_law"
    t, v = _series(owner, t, v)
    lo = -np.inf if t_min is None else check_real("t_min", owner, t_min, low=0, low_open=True)
    hi = np.inf if t_max is None else check_real("t_max", owner, t_max, low=0, low_open=True)
    if hi <= lo:
        raise param_error("t_max", owner, f"larger than t_min = {lo:g}", hi)
    keep = (t >= lo) & (t <= hi)
    if keep.sum() < 3:
        raise param_error("t", owner, "with at least 3 points in [t_min, t_max]", describe(t))
    t, v = t[keep], v[keep]
    if not (t > 0).all():
        raise param_error("t", owner, "positive in [t_min, t_max]", describe(t))
    if not (v > 0).all():
        raise param_error("v", owner, "positive in [t_min, t_max] (pass |r|)", describe(v))
    order = np.argsort(t)
    x, z = np.log(t[order]), np.log(v[order])
    if x[-1] == x[0]:
        raise param_error("t", owner, "with at least 2 distinct values", describe(t))
    edges = np.concatenate([[x[0]], (x[1:] + x[:-1]) / 2, [x[-1]]])
    weight = np.diff(edges)
    weight = np.where(weight > 0, weight, 0.0) + 1e-300
    xm = np.average(x, weights=weight)
    zm = np.average(z, weights=weight)
    a = np.sum(weight * (x - xm) * (z - zm)) / np.sum(weight * (x - xm) ** 2)
    b = zm - a * xm
    total = np.sum(weight * (z - zm) ** 2)
    r2 = 1.0 - np.sum(weight * (z - b - a * x) ** 2) / total if total > 0 else 1.0
    return float(a), float(np.exp(b)), float(r2)


def fit_linear_rate(t: np.ndarray, v: np.ndarray) -> float:
    r"""The per-step rate :math:`\rho` of :math:`v_t \approx c \rho^t`: ``exp`` of the
    least-squares slope of :math:`\log v` on :math:`t`.

    Below the critical step size the paper's rate is :math:`\rho = |1 - \eta S_\infty|` for
    :math:`|r_t|`, with :math:`S_\infty` the sharpness of the limit.

    NaN policy: NaN or inf is refused; ``v`` must be positive (pass :math:`|r_t|`), at least 2
    distinct ``t``.

    >>> t = np.arange(50)
    >>> round(fit_linear_rate(t, 2.0 * 0.8**t), 12)
    0.8
    """
    owner = "fit_linear_rate"
    t, v = _series(owner, t, v)
    if len(t) < 2 or np.ptp(t) == 0:
        raise param_error("t", owner, "with at least 2 distinct values", describe(t))
    if not (v > 0).all():
        raise param_error("v", owner, "positive (pass |r|)", describe(v))
    slope = np.polyfit(t, np.log(v), 1)[0]
    return float(np.exp(slope))
