r"""Baselines: gradient descent with Armijo backtracking, damped Newton, and scipy's BFGS."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import optimize

__all__ = ["damped_newton", "gradient_descent_armijo", "scipy_bfgs"]

Array = np.ndarray


def _stop(fx: float, f_star: float | None, f_tol: float | None) -> bool:
    return f_star is not None and f_tol is not None and fx - f_star <= f_tol


def gradient_descent_armijo(
    f: Callable[[Array], float],
    grad: Callable[[Array], Array],
    x0: Array,
    max_iter: int = 10_000,
    f_star: float | None = None,
    f_tol: float | None = None,
    alpha: float = 0.1,
    eta0: float = 1.0,
) -> dict:
    r""":math:`x_{t+1}=x_t-\eta_tg_t`, :math:`\eta_t` the first of :math:`\eta_0 2^{-k}` with
    :math:`f(x_t-\eta g_t)\le f(x_t)-\alpha\eta\lVert g_t\rVert^2`; each search starts from twice
    the last accepted step. Not affine invariant: its iteration count grows with the
    conditioning."""
    x = np.array(x0, dtype=float)
    fx, eta, nfev = f(x), eta0, 1
    f_hist = [fx]
    for _ in range(max_iter):
        if _stop(fx, f_star, f_tol):
            break
        g = grad(x)
        gg = g @ g
        if gg == 0.0:
            break
        eta *= 2.0
        while True:
            x_new = x - eta * g
            f_new = f(x_new)
            nfev += 1
            if f_new <= fx - alpha * eta * gg or eta < 1e-30:
                break
            eta /= 2.0
        if f_new >= fx:  # no measurable decrease: rounding floor
            break
        x, fx = x_new, f_new
        f_hist.append(fx)
    return {"x": x, "fun": fx, "f_hist": np.array(f_hist), "nit": len(f_hist) - 1, "nfev": nfev}


def damped_newton(
    f: Callable[[Array], float],
    grad: Callable[[Array], Array],
    hess: Callable[[Array], Array],
    x0: Array,
    max_iter: int = 500,
    f_star: float | None = None,
    f_tol: float | None = None,
) -> dict:
    r"""Newton's method with the self-concordant damping :math:`1/(1+\lambda)` while
    :math:`\lambda\ge\frac14`, full steps after (affine invariant)."""
    x = np.array(x0, dtype=float)
    f_hist = [f(x)]
    for _ in range(max_iter):
        if _stop(f_hist[-1], f_star, f_tol):
            break
        g = grad(x)
        step = np.linalg.solve(hess(x), g)
        lam = float(np.sqrt(max(g @ step, 0.0)))
        if lam < 1e-15:
            break
        x = x - (step / (1.0 + lam) if lam >= 0.25 else step)
        f_hist.append(f(x))
    return {"x": x, "fun": f_hist[-1], "f_hist": np.array(f_hist), "nit": len(f_hist) - 1}


def scipy_bfgs(
    f: Callable[[Array], float],
    grad: Callable[[Array], Array],
    x0: Array,
    gtol: float = 1e-9,
    max_iter: int = 10_000,
) -> optimize.OptimizeResult:
    """``scipy.optimize.minimize(method="BFGS")`` with its history of f values in ``f_hist``."""
    f_hist = [f(np.asarray(x0, dtype=float))]
    result = optimize.minimize(
        f,
        x0,
        jac=grad,
        method="BFGS",
        callback=lambda xk: f_hist.append(f(xk)),
        options={"gtol": gtol, "maxiter": max_iter},
    )
    result.f_hist = np.array(f_hist)
    return result
