r"""Baselines: gradient descent with Armijo backtracking, damped Newton, and scipy's BFGS."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy import optimize

from paperkit import (
    Described,
    check_array,
    check_callable,
    check_int,
    check_memory,
    check_real,
    param_error,
)

__all__ = ["damped_newton", "gradient_descent_armijo", "scipy_bfgs"]

Array = np.ndarray


def _stop(fx: float, f_star: float | None, f_tol: float | None) -> bool:
    return f_star is not None and f_tol is not None and fx - f_star <= f_tol


def _check_run(
    owner: str,
    functions: dict[str, object],
    x0: Array,
    max_iter: int,
    f_star: float | None = None,
    f_tol: float | None = None,
    *,
    matrices: bool = False,
) -> tuple[Array, int, float | None, float | None]:
    """The checks every baseline shares: callables, a finite 1-D start where ``f`` is finite
    (with room for d x d matrices when ``matrices``), the iteration limit and the stop."""
    for name, fn in functions.items():
        check_callable(name, owner, fn)
    x = check_array("x0", owner, x0, shape=("d",)).astype(float)
    if matrices:
        check_memory("x0", owner, Described(f"a point of dimension {x.size}"), 3 * 8 * x.size**2)
    max_iter = check_int("max_iter", owner, max_iter, low=0)
    f_star = None if f_star is None else check_real("f_star", owner, f_star)
    f_tol = None if f_tol is None else check_real("f_tol", owner, f_tol, low=0)
    fx = float(functions["f"](x))
    if not np.isfinite(fx):
        raise param_error(
            "x0", owner, "a point where f is finite", Described(f"a point with f(x0) = {fx}")
        )
    return x, max_iter, f_star, f_tol


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
    conditioning.

    Stops after ``max_iter`` iterations, at :math:`f-f^*\le` ``f_tol`` (given ``f_star``), at a
    zero gradient, or when no step decreases ``f``. NaN or inf in ``x0`` is refused, as is a start
    where ``f`` is not finite (ValueError); a trial step where ``f`` is NaN is rejected.

    >>> bool(gradient_descent_armijo(lambda x: x @ x, lambda x: 2 * x, np.ones(2))["fun"] < 1e-20)
    True
    """
    owner = "gradient_descent_armijo"
    x, max_iter, f_star, f_tol = _check_run(
        owner, {"f": f, "grad": grad}, x0, max_iter, f_star, f_tol
    )
    alpha = check_real("alpha", owner, alpha, low=0, high=1, low_open=True, high_open=True)
    eta0 = check_real("eta0", owner, eta0, low=0, low_open=True)
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
        if not f_new < fx:  # no measurable decrease (rounding floor), or f is NaN
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
    :math:`\lambda\ge\frac14`, full steps after (affine invariant).

    Stops after ``max_iter`` iterations, at :math:`f-f^*\le` ``f_tol`` (given ``f_star``) or at
    a decrement below 1e-15. NaN or inf in ``x0`` is refused, as is a start where ``f`` is not
    finite (ValueError).

    >>> run = damped_newton(lambda x: x @ x, lambda x: 2 * x, lambda x: 2 * np.eye(2), np.ones(2))
    >>> float(run["fun"])
    0.0
    """
    owner = "damped_newton"
    x, max_iter, f_star, f_tol = _check_run(
        owner, {"f": f, "grad": grad, "hess": hess}, x0, max_iter, f_star, f_tol, matrices=True
    )
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
    """``scipy.optimize.minimize(method="BFGS")`` with its history of f values in ``f_hist``.

    ``gtol > 0`` is scipy's gradient-norm tolerance. NaN or inf in ``x0`` is refused, as is a
    start where ``f`` is not finite (ValueError).

    >>> scipy_bfgs(lambda x: x @ x, lambda x: 2 * x, np.ones(2)).success
    True
    """
    owner = "scipy_bfgs"
    x0, max_iter, _, _ = _check_run(owner, {"f": f, "grad": grad}, x0, max_iter, matrices=True)
    gtol = check_real("gtol", owner, gtol, low=0, low_open=True)
    f_hist = [f(x0)]
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
