"""The one-time optimisation of PORT: per-model prices γ from the learning-phase estimates.

The offline problem over a stream (relaxed assignment, x_ij = share of query j sent to model i)

    max Σ_ij d_ij x_ij   s.t.  Σ_j g_ij x_ij ≤ B_i,   Σ_i x_ij ≤ 1,   x ≥ 0

has the dual  min_{γ≥0, β≥0} Σ_i γ_i B_i + Σ_j β_j  with  β_j ≥ d_ij − γ_i g_ij.  PORT sees only
the first L = ⌈εN⌉ queries, whose share of the budgets is ε B, and estimated features, so it solves

    γ* = argmin_{γ ∈ [0,1]^M} F(γ),   F(γ) = ε Σ_i γ_i B_i + Σ_{j≤L} max_i (α d̂_ij − γ_i ĝ_ij),

α rescaling quality to the cost unit. With ``allow_skip`` the inner max also contains 0 (the
β_j ≥ 0 of the exact dual: a query may be left unserved). F is convex and piecewise linear, so
the default solver is the exact LP in (γ, β) by HiGHS; ``"lbfgsb"`` is the paper code's
L-BFGS-B from γ0 = 1/M (a smooth-method on a kinked function: it may stop short of the minimum).
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, sparse

from paperkit import Described, check_choice, param_error
from portrouter.features import check_table

__all__ = ["dual_objective", "resolve_alpha", "solve_dual"]


def _check(d_hat, g_hat, budgets, eps, owner):
    d_hat = check_table(d_hat, "d_hat", owner)
    g_hat = check_table(g_hat, "g_hat", owner, d_hat.shape[1])
    if len(g_hat) != len(d_hat):
        raise param_error("g_hat", owner, f"{len(d_hat)} rows like d_hat", len(g_hat))
    budgets = np.asarray(budgets, dtype=np.float64)
    if budgets.shape != (d_hat.shape[1],) or not np.all(budgets >= 0):
        raise param_error(
            "budgets", owner, f"{d_hat.shape[1]} non-negative numbers", Described(str(budgets))
        )
    if not 0 < eps <= 1:
        raise param_error("eps", owner, "in (0, 1]", eps)
    return d_hat, g_hat, budgets


def resolve_alpha(alpha: float | str, d_hat: np.ndarray, g_hat: np.ndarray) -> float:
    """α as given, or ``"auto"``: median(ĝ) / median(d̂), which puts quality in cost units."""
    if isinstance(alpha, str):
        check_choice("alpha", "resolve_alpha", alpha, ("auto",))
        med_d = float(np.median(d_hat))
        return float(np.median(g_hat)) / (med_d if med_d > 0 else float(np.mean(d_hat)) or 1.0)
    if not alpha > 0:
        raise param_error("alpha", "resolve_alpha", "positive or 'auto'", alpha)
    return float(alpha)


def dual_objective(
    gamma: np.ndarray,
    d_hat: np.ndarray,
    g_hat: np.ndarray,
    budgets: np.ndarray,
    eps: float,
    alpha: float,
    allow_skip: bool = False,
) -> float:
    """F(γ) = ε γ·B + Σ_j max_i (α d̂_ij − γ_i ĝ_ij)  (inner max with 0 if ``allow_skip``)."""
    d_hat, g_hat, budgets = _check(d_hat, g_hat, budgets, eps, "dual_objective")
    gamma = np.asarray(gamma, dtype=np.float64)
    scores = alpha * d_hat - gamma[None, :] * g_hat
    best = scores.max(axis=1)
    if allow_skip:
        best = np.maximum(best, 0.0)
    return float(eps * gamma @ budgets + best.sum())


def _solve_lp(d_hat, g_hat, budgets, eps, alpha, allow_skip):
    L, M = d_hat.shape
    # costs are ~1e-4 $: solve F/s with s the typical cost so HiGHS's tolerances are relative
    s = float(np.median(g_hat[g_hat > 0])) if (g_hat > 0).any() else 1.0
    g_hat, budgets, alpha = g_hat / s, budgets / s, alpha / s
    # variables z = (γ_1..γ_M, β_1..β_L); rows: −ĝ_ij γ_i − β_j ≤ −α d̂_ij for every (j, i)
    rows = np.arange(L * M)
    j, i = np.divmod(rows, M)
    A = sparse.csr_matrix(
        (
            np.concatenate([-g_hat.ravel(), -np.ones(L * M)]),
            (np.concatenate([rows, rows]), np.concatenate([i, M + j])),
        ),
        shape=(L * M, M + L),
    )
    c = np.concatenate([eps * budgets, np.ones(L)])
    bounds = [(0.0, 1.0)] * M + [(0.0 if allow_skip else None, None)] * L
    res = optimize.linprog(c, A_ub=A, b_ub=-alpha * d_hat.ravel(), bounds=bounds, method="highs")
    if res.status != 0:
        raise RuntimeError(f"the dual LP did not solve: {res.message}")
    return res.x[:M]


def solve_dual(
    d_hat: np.ndarray,
    g_hat: np.ndarray,
    budgets: np.ndarray,
    eps: float,
    alpha: float | str,
    solver: str = "lp",
    allow_skip: bool = False,
) -> np.ndarray:
    """γ* ∈ [0, 1]^M minimising F (see the module docstring)."""
    check_choice("solver", "solve_dual", solver, ("lp", "lbfgsb"))
    d_hat, g_hat, budgets = _check(d_hat, g_hat, budgets, eps, "solve_dual")
    alpha = resolve_alpha(alpha, d_hat, g_hat)
    if solver == "lp":
        return np.clip(_solve_lp(d_hat, g_hat, budgets, eps, alpha, allow_skip), 0.0, 1.0)
    M = d_hat.shape[1]
    res = optimize.minimize(
        dual_objective,
        np.full(M, 1.0 / M),
        args=(d_hat, g_hat, budgets, eps, alpha, allow_skip),
        method="L-BFGS-B",
        bounds=[(0.0, 1.0)] * M,
    )
    return res.x
