"""The one-time optimisation of PORT: per-model prices γ from the learning-phase estimates.

The offline problem over a stream (relaxed assignment, x_ij = share of query j sent to model i)

    max Σ_ij d_ij x_ij   s.t.  Σ_j g_ij x_ij ≤ B_i,   Σ_i x_ij ≤ 1,   x ≥ 0

has the dual  min_{γ≥0, β≥0} Σ_i γ_i B_i + Σ_j β_j  with  β_j ≥ d_ij − γ_i g_ij.  PORT sees only
the first L = ⌈εN⌉ queries, whose share of the budgets is ε B, and estimated features, so it solves

    γ* = argmin_{γ ∈ [0,1]^M} F(γ),   F(γ) = ε Σ_i γ_i B_i + Σ_{j≤L} max_i (α d̂_ij − γ_i ĝ_ij),

α rescaling quality to the cost unit. With ``allow_skip`` the inner max also contains 0 (the
β_j ≥ 0 of the exact dual: a query may be left unserved). F is convex and piecewise linear. The
default solver is the paper code's L-BFGS-B from γ0 = 1/M (a smooth method on a kinked function:
it may stop short of the minimum); ``"lp"`` solves the exact LP in (γ, β) by HiGHS. A lower F
need not route better (the routing uses γ on queries the learning phase has not seen); the
reproduction compares the two on the same learning-phase draws.

NaN policy: NaN or inf in the estimates, the budgets or the prices is refused (``ValueError``);
budgets must be finite (an infinite budget has no price to learn).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, sparse

from paperkit import check_array, check_bool, check_choice, check_real, describe, param_error

__all__ = ["SOLVERS", "dual_objective", "optimal_prices", "resolve_alpha", "solve_dual"]

#: The solvers of the one-time optimisation.
SOLVERS = ("lp", "lbfgsb")


def _estimates(owner: str, d_hat: Any, g_hat: Any, dims: dict) -> tuple[np.ndarray, np.ndarray]:
    d_hat = check_array("d_hat", owner, d_hat, shape=("L", "M"), dims=dims)
    g_hat = check_array("g_hat", owner, g_hat, shape=("L", "M"), dims=dims)
    return d_hat.astype(np.float64), g_hat.astype(np.float64)


def _budgets(owner: str, budgets: Any, dims: dict) -> np.ndarray:
    budgets = check_array("budgets", owner, budgets, shape=("M",), dims=dims)
    if (budgets < 0).any():
        raise param_error("budgets", owner, "non-negative", describe(budgets))
    return budgets.astype(np.float64)


def _alpha(owner: str, alpha: Any, d_hat: np.ndarray, g_hat: np.ndarray) -> float:
    if isinstance(alpha, str):
        check_choice("alpha", owner, alpha, ("auto",))
        med_d = float(np.median(d_hat))
        return float(np.median(g_hat)) / (med_d if med_d > 0 else float(np.mean(d_hat)) or 1.0)
    return check_real("alpha", owner, alpha, low=0, low_open=True)


def resolve_alpha(alpha: float | str, d_hat: np.ndarray, g_hat: np.ndarray) -> float:
    """α as given (a positive real), or ``"auto"``: median(ĝ) / median(d̂), which puts quality in
    cost units. ``d_hat`` and ``g_hat`` are the (L, M) estimates; NaN or inf is refused."""
    d_hat, g_hat = _estimates("resolve_alpha", d_hat, g_hat, {})
    return _alpha("resolve_alpha", alpha, d_hat, g_hat)


def dual_objective(
    gamma: np.ndarray,
    d_hat: np.ndarray,
    g_hat: np.ndarray,
    budgets: np.ndarray,
    eps: float,
    alpha: float,
    allow_skip: bool = False,
) -> float:
    """F(γ) = ε γ·B + Σ_j max_i (α d̂_ij − γ_i ĝ_ij)  (inner max with 0 if ``allow_skip``).

    ``gamma`` (M,), ``d_hat`` and ``g_hat`` (L, M), ``budgets`` (M,) non-negative, ε in (0, 1],
    α > 0. NaN or inf in any of them is refused."""
    owner = "dual_objective"
    dims: dict = {}
    d_hat, g_hat = _estimates(owner, d_hat, g_hat, dims)
    budgets = _budgets(owner, budgets, dims)
    gamma = check_array("gamma", owner, gamma, shape=("M",), dims=dims).astype(np.float64)
    eps = check_real("eps", owner, eps, low=0, high=1, low_open=True)
    alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
    check_bool("allow_skip", owner, allow_skip)
    return _objective(gamma, d_hat, g_hat, budgets, eps, alpha, allow_skip)


def _objective(gamma, d_hat, g_hat, budgets, eps, alpha, allow_skip) -> float:
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
    solver: str = "lbfgsb",
    allow_skip: bool = False,
) -> np.ndarray:
    """γ* ∈ [0, 1]^M minimising F (see the module docstring) for the (L, M) estimates, budgets
    (M,) finite and non-negative, ε in (0, 1], α > 0 or ``"auto"``. NaN or inf is refused."""
    owner = "solve_dual"
    dims: dict = {}
    d_hat, g_hat = _estimates(owner, d_hat, g_hat, dims)
    budgets = _budgets(owner, budgets, dims)
    eps = check_real("eps", owner, eps, low=0, high=1, low_open=True)
    alpha = _alpha(owner, alpha, d_hat, g_hat)
    check_choice("solver", owner, solver, SOLVERS)
    check_bool("allow_skip", owner, allow_skip)
    return optimal_prices(d_hat, g_hat, budgets, eps, alpha, solver, allow_skip)


def optimal_prices(
    d_hat: np.ndarray,
    g_hat: np.ndarray,
    budgets: np.ndarray,
    eps: float,
    alpha: float,
    solver: str,
    allow_skip: bool,
) -> np.ndarray:
    """:func:`solve_dual` on validated inputs and a resolved α (the router's learning phase)."""
    if solver == "lp":
        return np.clip(_solve_lp(d_hat, g_hat, budgets, eps, alpha, allow_skip), 0.0, 1.0)
    M = d_hat.shape[1]
    res = optimize.minimize(
        _objective,
        np.full(M, 1.0 / M),
        args=(d_hat, g_hat, budgets, eps, alpha, allow_skip),
        method="L-BFGS-B",
        bounds=[(0.0, 1.0)] * M,
    )
    return res.x
