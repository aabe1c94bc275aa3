"""The MIFPO program for one fairness level gamma (the paper's compact discrete problem).

Representation points are z = (i, j, kappa): one level of each group and a copy kappa = 1..k.
Variables, all nonnegative, for every copy:

- R1[kappa] (n, m): the fraction of group-1 bin i sent to z = (i, j, kappa);
- R0[kappa] (m, n): the fraction of group-0 bin j sent to the same point;
- slacks X1[kappa] (n, m) and X0[kappa] (m, n).

Constraints:

1. sum_{kappa, j} R1[kappa][i, j] = 1 and sum_{kappa, i} R0[kappa][j, i] = 1 (all mass assigned);
2. sum X1 = 1 and sum X0 = 1 (the slacks are probability vectors);
3. U_i R1[kappa][i, j] + gamma X1[kappa][i, j] = V_j R0[kappa][j, i] + gamma X0[kappa][j, i],
   i.e. P(Z | A = 1) - P(Z | A = 0) = gamma (chi0 - chi1), which holds for some probability
   vectors chi exactly when TV(Z | A = 1, Z | A = 0) <= gamma.

With q1_z = alpha U_i R1, q0_z = (1 - alpha) V_j R0, q_z = q1_z + q0_z and
pi_z = u_i q1_z + v_j q0_z, the objective E = sum_z q_z h(pi_z / q_z) is concave
(:mod:`fairpareto.performance`); it is minimised by DCCP (convex-concave programming with random
restarts). The objective is then recomputed in numpy from the returned plan, and the plan's
feasibility is checked.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from fairpareto.binning import GroupBins
from fairpareto.performance import perspective_cvxpy, perspective_numpy

__all__ = ["FEASIBILITY_TOL", "Plan", "closed_form_endpoint", "plan_masses", "solve_mifpo"]

#: Tolerance of the feasibility checks on a returned plan (row sums, signs, TV <= gamma).
FEASIBILITY_TOL = 1e-6


@dataclass(frozen=True)
class Plan:
    """A solution of MIFPO at one gamma.

    Attributes:
        gamma: the fairness level.
        R1: (k, n, m) transport fractions of group 1 (rows sum to 1 over copies and columns).
        R0: (k, m, n) transport fractions of group 0.
        value: E recomputed in numpy from the plan.
        solver_value: the objective value the solver reported.
        tv: TV(Z | A = 1, Z | A = 0) recomputed from the plan.
        feasible: whether the plan passed the checks within :data:`FEASIBILITY_TOL`.
    """

    gamma: float
    R1: np.ndarray
    R0: np.ndarray
    value: float
    solver_value: float
    tv: float
    feasible: bool


def plan_masses(
    bins: GroupBins, R1: np.ndarray, R0: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per point (k, n, m): P(Z = z | A = 1), P(Z = z | A = 0), joint mass q, positive mass pi."""
    p1 = bins.U[None, :, None] * R1
    p0 = np.transpose(bins.V[None, :, None] * R0, (0, 2, 1))
    q1, q0 = bins.alpha * p1, (1.0 - bins.alpha) * p0
    pi = bins.u[None, :, None] * q1 + bins.v[None, None, :] * q0
    return p1, p0, q1 + q0, pi


def closed_form_endpoint(bins: GroupBins, performance: str) -> float:
    """E(1) = alpha sum_i U_i h(u_i) + (1 - alpha) sum_j V_j h(v_j): the unmerged representation
    (every level its own point), the global minimum of E, reached once gamma >= its TV.

    >>> from fairpareto.binning import GroupBins
    >>> b = GroupBins(np.array([0.2, 0.9]), np.array([0.5, 0.5]), np.array([0.4]), np.ones(1), 0.5)
    >>> round(closed_form_endpoint(b, "error"), 10)  # 0.5 (0.5 * 0.2 + 0.5 * 0.1) + 0.5 * 0.4
    0.275
    """
    from fairpareto.performance import h_value

    return float(
        bins.alpha * np.dot(bins.U, h_value(performance, bins.u))
        + (1.0 - bins.alpha) * np.dot(bins.V, h_value(performance, bins.v))
    )


def _check_plan(
    bins: GroupBins, gamma: float, R1: np.ndarray, R0: np.ndarray
) -> tuple[float, bool]:
    p1, p0, _, _ = plan_masses(bins, R1, R0)
    tv = 0.5 * float(np.abs(p1 - p0).sum())
    ok = (
        np.all(R1 >= -FEASIBILITY_TOL)
        and np.all(R0 >= -FEASIBILITY_TOL)
        and np.allclose(R1.sum(axis=(0, 2)), 1.0, atol=FEASIBILITY_TOL, rtol=0)
        and np.allclose(R0.sum(axis=(0, 2)), 1.0, atol=FEASIBILITY_TOL, rtol=0)
        and tv <= gamma + FEASIBILITY_TOL
    )
    return tv, bool(ok)


def _build(
    bins: GroupBins, gamma: float, performance: str | Callable[..., Any], k: int
) -> tuple[Any, Any, Any]:
    """The cvxpy problem; the copies of R1 (n, m) and R0 (m, n) sit side by side in one
    variable each, R1 (n, k m) and R0 (m, k n)."""
    import cvxpy as cp

    n, m, a = bins.n, bins.m, bins.alpha
    U, V, u, v = bins.U[:, None], bins.V[:, None], bins.u[:, None], bins.v[None, :]
    R1 = cp.Variable((n, k * m), nonneg=True, name="R1")
    R0 = cp.Variable((m, k * n), nonneg=True, name="R0")
    X1 = cp.Variable((n, k * m), nonneg=True, name="X1")
    X0 = cp.Variable((m, k * n), nonneg=True, name="X0")
    constraints = [
        cp.sum(R1, axis=1) == 1,
        cp.sum(R0, axis=1) == 1,
        cp.sum(X1) == 1,
        cp.sum(X0) == 1,
    ]
    pis, qs = [], []
    for c in range(k):
        b1, b0 = slice(c * m, (c + 1) * m), slice(c * n, (c + 1) * n)
        p1 = cp.multiply(U, R1[:, b1])  # (n, m): P(z | A = 1)
        p0 = cp.multiply(V, R0[:, b0]).T  # (n, m): P(z | A = 0)
        constraints.append(p1 + gamma * X1[:, b1] == p0 + gamma * X0[:, b0].T)
        q1, q0 = a * p1, (1.0 - a) * p0
        qs.append(q1 + q0)
        pis.append(cp.multiply(u, q1) + cp.multiply(np.broadcast_to(v, (n, m)), q0))
    pi, q = cp.hstack(pis), cp.hstack(qs)  # (n, k m)
    problem = cp.Problem(cp.Minimize(perspective_cvxpy(performance, pi, q)), constraints)
    return problem, R1, R0


def solve_mifpo(
    bins: GroupBins,
    gamma: float,
    performance: str | Callable[..., Any] = "error",
    k: int = 2,
    n_restarts: int = 3,
    random_state: int = 0,
) -> Plan:
    """Solve MIFPO at one gamma with DCCP (``k_ccp = n_restarts`` random initialisations from
    ``random_state``, sequential; the best run is kept by DCCP).

    Arguments are assumed checked (see :class:`fairpareto.MIFPO`). The plan's negative round-off
    is clipped and its rows renormalised before the objective and TV are recomputed in numpy; a
    plan that then fails the checks (or a failed solve) is returned with ``feasible=False`` and
    value NaN.
    """
    import dccp  # noqa: F401 - registers cvxpy's solve method "dccp"

    problem, R1v, R0v = _build(bins, gamma, performance, k)
    n, m = bins.n, bins.m
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            result = problem.solve(
                method="dccp", k_ccp=n_restarts, seed=random_state, parallel=False
            )
        except Exception:  # a numerical failure of the solver: reported as an infeasible plan
            result = None
    solver_value = float(result[0] if isinstance(result, tuple) else (result or np.nan))
    if R1v.value is None or R0v.value is None:
        nan = np.full((k, bins.n, bins.m), np.nan)
        return Plan(gamma, nan, nan.transpose(0, 2, 1), np.nan, solver_value, np.nan, False)
    R1 = np.clip(R1v.value.reshape(n, k, m).transpose(1, 0, 2), 0.0, None)
    R0 = np.clip(R0v.value.reshape(m, k, n).transpose(1, 0, 2), 0.0, None)
    R1 /= R1.sum(axis=(0, 2), keepdims=True)
    R0 /= R0.sum(axis=(0, 2), keepdims=True)
    tv, feasible = _check_plan(bins, gamma, R1, R0)
    _, _, q, pi = plan_masses(bins, R1, R0)
    if callable(performance):
        wide = (np.concatenate(list(pi), axis=1), np.concatenate(list(q), axis=1))
        value = float(perspective_cvxpy(performance, *wide).value)  # the solver's (n, k m) layout
    else:
        value = perspective_numpy(performance, pi, q)
    return Plan(gamma, R1, R0, value if feasible else np.nan, solver_value, tv, feasible)
