"""Surrogate ERM over linear scores (paper, Sec. 4, Algorithm 1):

.. math:: \\hat\\Theta=\\arg\\min_{\\Theta}\\ \\frac1n\\sum_{i=1}^n\\psi(y_i, z_i^\\top\\Theta)
          +\\frac{\\rho}{2}\\lVert W\\rVert_F^2\\quad\\text{s.t. } \\lVert W\\rVert_F\\le B,

with :math:`z_i=(x_i,1)` when an intercept is fitted, :math:`\\Theta=(W; b)` of shape
``(p, s)``. ``solver="auto"``: damped Newton with the analytic Hessian when ``p·s ≤ 200``, else
L-BFGS (scipy) with the analytic gradient. A norm bound B that the unconstrained solution violates
is enforced by SLSQP on the constraint :math:`B^2-\\lVert W\\rVert_F^2\\ge0`.
Inputs are assumed checked (the estimators do it); NaN would propagate.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize

from rsmlearn.losses import Loss

__all__ = ["NEWTON_MAX_PARAMS", "fit_linear"]

#: Largest number of parameters p·s for which ``solver="auto"`` uses damped Newton.
NEWTON_MAX_PARAMS = 200


class _Objective:
    """Value, gradient and Hessian of the regularised empirical surrogate risk in vec(Θ)."""

    def __init__(self, loss: Loss, Z: np.ndarray, y: np.ndarray, s: int, ridge: float, pen):
        self.loss, self.Z, self.y, self.s, self.ridge = loss, Z, y, s, ridge
        self.pen = np.repeat(pen, s).astype(float)  # 1 for weights, 0 for the intercept
        self.n = Z.shape[0]
        self.squeeze = loss.kind == "binary" and y.ndim == 1

    def scores(self, theta: np.ndarray) -> np.ndarray:
        U = self.Z @ theta.reshape(-1, self.s)
        return U[:, 0] if self.squeeze else U

    def value(self, theta: np.ndarray) -> float:
        v = self.loss.value(self.y, self.scores(theta)).sum() / self.n
        return float(v + 0.5 * self.ridge * (self.pen * theta**2).sum())

    def grad(self, theta: np.ndarray) -> np.ndarray:
        G = self.loss.grad(self.y, self.scores(theta)).reshape(self.n, self.s)
        return (self.Z.T @ G).ravel() / self.n + self.ridge * self.pen * theta

    def hess(self, theta: np.ndarray) -> np.ndarray:
        h = self.loss.hess(self.y, self.scores(theta))
        p = self.Z.shape[1]
        if h.ndim == 3:  # (n, s, s): a coupled multiclass Hessian, one BLAS product
            A = (self.Z[:, :, None] * h.reshape(self.n, 1, -1)).reshape(self.n, -1)
            H = (self.Z.T @ A).reshape(p, p, self.s, self.s).transpose(0, 2, 1, 3)
        else:  # (n,) or (n, s): separable outputs
            h = h.reshape(self.n, self.s)
            H = np.zeros((p, self.s, p, self.s))
            for k in range(self.s):
                H[:, k, :, k] = (self.Z * h[:, k : k + 1]).T @ self.Z
        H = H.reshape(p * self.s, p * self.s) / self.n
        return H + np.diag(self.ridge * self.pen)


def _newton(obj: _Objective, theta: np.ndarray, max_iter: int, tol: float):
    """Damped Newton: direction −H⁻¹g, Armijo backtracking; stops when max|g| ≤ tol."""
    f = obj.value(theta)
    for it in range(1, max_iter + 1):
        g = obj.grad(theta)
        if np.max(np.abs(g)) <= tol:
            return theta, it - 1, True
        H = obj.hess(theta)
        try:
            step = -np.linalg.solve(H + 1e-12 * np.eye(len(g)), g)
        except np.linalg.LinAlgError:
            step = -np.linalg.lstsq(H, g, rcond=None)[0]
        t, slope = 1.0, float(g @ step)
        while t > 1e-12:
            new = theta + t * step
            f_new = obj.value(new)
            # Armijo, with slack for rounding in f near the optimum (quadratic region)
            if f_new <= f + 1e-4 * t * slope + 1e-15 * abs(f):
                break
            t *= 0.5
        else:  # no decrease possible in float64: at the optimum up to rounding
            return theta, it, True
        theta, f = new, f_new
    return theta, max_iter, np.max(np.abs(obj.grad(theta))) <= tol


def _lbfgs(obj: _Objective, theta: np.ndarray, max_iter: int, tol: float):
    res = minimize(
        obj.value,
        theta,
        jac=obj.grad,
        method="L-BFGS-B",
        options={"maxiter": max_iter, "gtol": tol, "ftol": 1e-15, "maxcor": 20},
    )
    return res.x, int(res.nit), bool(res.success)


def _bounded(obj: _Objective, theta: np.ndarray, bound: float, max_iter: int, tol: float):
    pen = obj.pen.astype(bool)
    cons = {
        "type": "ineq",
        "fun": lambda t: bound**2 - float((t[pen] ** 2).sum()),
        "jac": lambda t: -2.0 * np.where(pen, t, 0.0),
    }
    scale = min(1.0, bound / max(np.linalg.norm(theta[pen]), 1e-300))
    start = np.where(pen, theta * scale, theta)
    res = minimize(
        obj.value,
        start,
        jac=obj.grad,
        method="SLSQP",
        constraints=[cons],
        options={"maxiter": max_iter, "ftol": min(tol, 1e-12)},
    )
    return res.x, int(res.nit), bool(res.success)


def fit_linear(
    loss: Loss,
    X: np.ndarray,
    y: np.ndarray,
    n_outputs: int,
    *,
    fit_intercept: bool = True,
    ridge: float = 1e-6,
    norm_bound: float | None = None,
    max_iter: int = 500,
    tol: float = 1e-10,
    solver: str = "auto",
) -> tuple[np.ndarray, np.ndarray, int, bool]:
    """Minimise the regularised empirical surrogate risk; return ``(W (d, s), b (s,), n_iter,
    converged)``. ``y``: binary targets ``(n,)`` or ``(n, s)`` (separable outputs), or class
    labels ``(n,)`` for a multiclass loss."""
    n, d = X.shape
    Z = np.hstack([X, np.ones((n, 1))]) if fit_intercept else X
    pen = np.r_[np.ones(d), np.zeros(Z.shape[1] - d)]
    obj = _Objective(loss, Z, y, n_outputs, ridge, pen)
    theta = np.zeros(Z.shape[1] * n_outputs)
    if solver == "auto":
        solver = "newton" if theta.size <= NEWTON_MAX_PARAMS else "lbfgs"
    run = _newton if solver == "newton" else _lbfgs
    theta, n_iter, ok = run(obj, theta, max_iter, tol)
    Theta = theta.reshape(-1, n_outputs)
    if norm_bound is not None and np.linalg.norm(Theta[:d]) > norm_bound:
        theta, more, ok = _bounded(obj, theta, norm_bound, max_iter, tol)
        n_iter += more
        Theta = theta.reshape(-1, n_outputs)
    b = Theta[d] if fit_intercept else np.zeros(n_outputs)
    return Theta[:d].copy(), b.copy(), n_iter, ok
