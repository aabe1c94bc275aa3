"""Concave performance measures h and their perspectives: the MIFPO objective.

A representation point z holds joint mass q_z = P(Z = z) and positive mass
pi_z = P(Z = z, Y = 1). The best classifier on Z loses h(P(Y = 1 | z)) at z, so a representation
costs

.. math:: E = \\sum_z q_z\\, h(\\pi_z / q_z),

the perspective of h summed over the points. For a concave h the perspective is jointly concave in
(pi, q), so E is concave in the transport plan and MIFPO minimises a concave function over a
polytope. Three measures are built in:

========== ===================================== ==============================================
name       h(p)                                  perspective q h(pi / q) as a DCP-concave form
========== ===================================== ==============================================
error      min(p, 1 - p)                         minimum(pi, q - pi)
log_loss   -p log p - (1 - p) log(1 - p)         -rel_entr(pi, q) - rel_entr(q - pi, q)
brier      p (1 - p)                             pi - quad_over_lin(pi, q) (scalar atoms)
========== ===================================== ==============================================

A custom measure is a callable ``(pi, q) -> cvxpy expression`` giving the summed perspective; it
must be DCP-concave in (pi, q), and its numpy value is then read from cvxpy itself.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["PERFORMANCES", "h_value", "perspective_cvxpy", "perspective_numpy"]

#: The built-in concave losses h of the posterior p = P(Y = 1 | z).
PERFORMANCES = ("error", "log_loss", "brier")


def h_value(performance: str, p: np.ndarray) -> np.ndarray:
    """h(p) of a built-in measure, elementwise (0 log 0 = 0 for log-loss).

    >>> h_value("error", np.array([0.2, 0.7])).tolist()
    [0.2, 0.30000000000000004]
    >>> float(h_value("brier", np.array(0.5)))
    0.25
    """
    p = np.clip(np.asarray(p, dtype=float), 0.0, 1.0)
    if performance == "error":
        return np.minimum(p, 1.0 - p)
    if performance == "brier":
        return p * (1.0 - p)
    if performance == "log_loss":
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(p > 0, -p * np.log(p), 0.0)
            b = np.where(p < 1, -(1.0 - p) * np.log1p(-p), 0.0)
        return a + b
    raise ValueError(f"unknown performance {performance!r}")


def perspective_numpy(performance: str, pi: np.ndarray, q: np.ndarray) -> float:
    """sum_z q_z h(pi_z / q_z) over the points with q_z > 0 (a point without mass costs 0)."""
    pi = np.asarray(pi, dtype=float).ravel()
    q = np.asarray(q, dtype=float).ravel()
    keep = q > 0
    p = np.clip(pi[keep] / q[keep], 0.0, 1.0)
    return float(np.sum(q[keep] * h_value(performance, p)))


def perspective_cvxpy(performance: str | Callable[..., Any], pi: Any, q: Any) -> Any:
    """The summed perspective as a DCP-concave cvxpy expression of the affine ``pi`` and ``q``
    (same shape); for a callable measure, ``performance(pi, q)``."""
    import cvxpy as cp

    if callable(performance):
        return performance(pi, q)
    if performance == "error":
        return cp.sum(cp.minimum(pi, q - pi))
    if performance == "log_loss":
        return cp.sum(-cp.rel_entr(pi, q) - cp.rel_entr(q - pi, q))
    if performance == "brier":
        # quad_over_lin needs a scalar denominator: one atom per point
        flat_pi, flat_q = cp.vec(pi, order="F"), cp.vec(q, order="F")
        terms = [cp.quad_over_lin(flat_pi[i], flat_q[i]) for i in range(flat_pi.shape[0])]
        return cp.sum(flat_pi) - cp.sum(cp.hstack(terms))
    raise ValueError(f"unknown performance {performance!r}")
