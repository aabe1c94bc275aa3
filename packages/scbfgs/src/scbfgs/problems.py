r"""Test problems: strictly convex, strongly self-concordant objectives with their derivatives.

A function is :math:`M`-strongly self-concordant (Rodomanov and Nesterov) when
:math:`\nabla^2 f(y)-\nabla^2 f(x)\preceq M\lVert y-x\rVert_{\nabla^2 f(z)}\nabla^2 f(w)` for all
:math:`x,y,z,w`. A :math:`\mu`-strongly convex function with an :math:`L_2`-Lipschitz Hessian
qualifies with :math:`M=L_2/\mu^{3/2}`: each problem carries that bound as ``M_bound``.
:math:`M` is affine invariant, so :func:`affine_transform` keeps it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from paperkit import param_error

__all__ = [
    "Problem",
    "affine_transform",
    "breast_cancer_logistic",
    "cubic_chain",
    "log_barrier",
    "log_sum_exp",
    "logistic_l2",
    "quadratic",
]

Array = np.ndarray


@dataclass(frozen=True)
class Problem:
    """An objective with its gradient, Hessian and strong self-concordance bound ``M_bound``."""

    name: str
    f: Callable[[Array], float]
    grad: Callable[[Array], Array]
    hess: Callable[[Array], Array]
    M_bound: float
    dim: int


def _matrix(name: str, owner: str, A: Array, rows: int | None = None) -> Array:
    A = np.asarray(A, dtype=float)
    if A.ndim != 2 or (rows is not None and A.shape[0] != rows) or not np.isfinite(A).all():
        raise param_error(
            name, owner, "a finite 2-D array" + (f" with {rows} rows" if rows else ""), A.shape
        )
    return A


def _positive(name: str, owner: str, value: float) -> float:
    if not (np.isscalar(value) and np.isfinite(value) and value > 0):
        raise param_error(name, owner, "a positive number", value)
    return float(value)


def logistic_l2(A: Array, b: Array, mu: float) -> Problem:
    r"""L2-regularised logistic regression,
    :math:`f(x)=\frac1n\sum_i\log(1+e^{-b_ia_i^\top x})+\frac\mu2\lVert x\rVert^2`, labels
    :math:`b_i\in\{-1,1\}`.

    The loss :math:`\ell(z)=\log(1+e^{-z})` has :math:`|\ell'''|\le 1/(6\sqrt3)`, so the Hessian is
    :math:`L_2`-Lipschitz with :math:`L_2=\frac{1}{6\sqrt3}\frac1n\sum_i\lVert a_i\rVert^3` and
    :math:`M=L_2/\mu^{3/2}`.
    """
    A = _matrix("A", "logistic_l2", A)
    b = np.asarray(b, dtype=float)
    if b.shape != (A.shape[0],) or not np.isin(b, (-1.0, 1.0)).all():
        raise param_error(
            "b", "logistic_l2", f"labels in {{-1, +1}} of shape ({A.shape[0]},)", b.shape
        )
    mu = _positive("mu", "logistic_l2", mu)
    n, d = A.shape
    BA = b[:, None] * A

    def f(x: Array) -> float:
        return float(np.logaddexp(0.0, -BA @ x).mean() + 0.5 * mu * x @ x)

    def grad(x: Array) -> Array:
        sig = 0.5 * (1.0 - np.tanh(0.5 * (BA @ x)))  # sigmoid(-z), stable
        return -(BA.T @ sig) / n + mu * x

    def hess(x: Array) -> Array:
        z = BA @ x
        w = 0.25 / np.cosh(0.5 * z) ** 2  # sigmoid(z) sigmoid(-z)
        return (A.T * w) @ A / n + mu * np.eye(d)

    L2 = np.mean(np.linalg.norm(A, axis=1) ** 3) / (6.0 * np.sqrt(3.0))
    return Problem(f"logistic_l2(mu={mu:g})", f, grad, hess, float(L2 / mu**1.5), d)


def breast_cancer_logistic(mu: float) -> Problem:
    """:func:`logistic_l2` on scikit-learn's bundled breast-cancer data (569 x 30, standardised)."""
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    X = (data.data - data.data.mean(0)) / data.data.std(0)
    problem = logistic_l2(X, 2.0 * data.target - 1.0, mu)
    return Problem(
        f"breast_cancer {problem.name}",
        problem.f,
        problem.grad,
        problem.hess,
        problem.M_bound,
        problem.dim,
    )


def _difference(d: int) -> Array:
    """D with rows e_i - e_{i+1} (i < d) and e_d: (Dx)_i = x_i - x_{i+1}, (Dx)_d = x_d."""
    return np.eye(d) - np.eye(d, k=1)


def cubic_chain(d: int, mu: float, delta: float = 1.0) -> Problem:
    r"""The "hard cubic" chain
    :math:`f(x)=\frac13\sum_{i<d}g(x_i-x_{i+1})+\frac13g(x_d)-x_1+\frac\mu2\lVert x\rVert^2`.

    :math:`g(w)=|w|^3` for :math:`|w|\le\delta`, continued by its second-order Taylor expansion at
    :math:`\delta`: :math:`g(w)=\delta^3+3\delta^2(|w|-\delta)+3\delta(|w|-\delta)^2`, so
    :math:`g''(w)=6\min(|w|,\delta)` is bounded and 6-Lipschitz. With the difference matrix
    :math:`D`, :math:`\nabla^2f=\frac13D^\top\mathrm{diag}(g''(Dx))D+\mu I` is Lipschitz with
    :math:`L_2=2\lVert D\rVert_2^3` and :math:`M=L_2/\mu^{3/2}`.
    """
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or d < 2:
        raise param_error("d", "cubic_chain", "an integer >= 2", d)
    mu = _positive("mu", "cubic_chain", mu)
    delta = _positive("delta", "cubic_chain", delta)
    D = _difference(d)

    def g(w: Array) -> Array:
        a = np.abs(w)
        over = np.maximum(a - delta, 0.0)
        return np.where(a <= delta, a**3, delta**3 + 3 * delta**2 * over + 3 * delta * over**2)

    def g1(w: Array) -> Array:
        a = np.abs(w)
        return np.sign(w) * np.where(a <= delta, 3 * a**2, 3 * delta**2 + 6 * delta * (a - delta))

    def f(x: Array) -> float:
        return float(g(D @ x).sum() / 3.0 - x[0] + 0.5 * mu * x @ x)

    def grad(x: Array) -> Array:
        out = D.T @ g1(D @ x) / 3.0 + mu * x
        out[0] -= 1.0
        return out

    def hess(x: Array) -> Array:
        curv = 6.0 * np.minimum(np.abs(D @ x), delta)
        return (D.T * curv) @ D / 3.0 + mu * np.eye(d)

    L2 = 2.0 * np.linalg.norm(D, 2) ** 3
    return Problem(f"cubic_chain(d={d}, mu={mu:g})", f, grad, hess, float(L2 / mu**1.5), d)


def quadratic(Q: Array, b: Array) -> Problem:
    r""":math:`f(x)=\frac12x^\top Qx-b^\top x` with :math:`Q\succ0`; its Hessian is constant, so
    :math:`M=0`."""
    Q = _matrix("Q", "quadratic", Q)
    if Q.shape[0] != Q.shape[1] or not np.allclose(Q, Q.T):
        raise param_error("Q", "quadratic", "a symmetric square matrix", Q.shape)
    try:
        np.linalg.cholesky(Q)
    except np.linalg.LinAlgError:
        raise param_error("Q", "quadratic", "positive definite", "a matrix that is not") from None
    b = np.asarray(b, dtype=float)
    if b.shape != (Q.shape[0],):
        raise param_error("b", "quadratic", f"of shape ({Q.shape[0]},)", b.shape)
    return Problem(
        "quadratic",
        lambda x: float(0.5 * x @ Q @ x - b @ x),
        lambda x: Q @ x - b,
        lambda x: Q.copy(),
        0.0,
        Q.shape[0],
    )


def log_sum_exp(A: Array, b: Array, mu: float) -> Problem:
    r""":math:`f(x)=\log\sum_ie^{a_i^\top x-b_i}+\frac\mu2\lVert x\rVert^2`.

    With :math:`u=Ah` and softmax weights :math:`p`, :math:`D^3f[h,h,h]=\sum_ip_i(u_i-\bar u)^3`, so
    :math:`|D^3f[h,h,h]|\le 8\max_i\lVert a_i\rVert^3\lVert h\rVert^3`:
    :math:`L_2=8\max_i\lVert a_i\rVert^3`.
    """
    A = _matrix("A", "log_sum_exp", A)
    b = np.asarray(b, dtype=float)
    if b.shape != (A.shape[0],):
        raise param_error("b", "log_sum_exp", f"of shape ({A.shape[0]},)", b.shape)
    mu = _positive("mu", "log_sum_exp", mu)
    d = A.shape[1]

    def softmax(x: Array) -> Array:
        z = A @ x - b
        e = np.exp(z - z.max())
        return e / e.sum()

    def f(x: Array) -> float:
        z = A @ x - b
        return float(z.max() + np.log(np.exp(z - z.max()).sum()) + 0.5 * mu * x @ x)

    def grad(x: Array) -> Array:
        return A.T @ softmax(x) + mu * x

    def hess(x: Array) -> Array:
        p = softmax(x)
        Ap = A.T @ p
        return (A.T * p) @ A - np.outer(Ap, Ap) + mu * np.eye(d)

    L2 = 8.0 * np.max(np.linalg.norm(A, axis=1)) ** 3
    return Problem(f"log_sum_exp(mu={mu:g})", f, grad, hess, float(L2 / mu**1.5), d)


def log_barrier(A: Array, b: Array, c: Array, mu: float) -> Problem:
    r"""A barrier objective
    :math:`f(x)=c^\top x-\sum_i\log(b_i-a_i^\top x)+\frac\mu2\lVert x\rVert^2` on the open
    polytope :math:`Ax<b`; ``f`` is :math:`+\infty` outside it.

    It is self-concordant in the classical sense (constant 2) but its Hessian is not globally
    Lipschitz, so there is no finite strong self-concordance bound: ``M_bound`` is ``inf``. It is
    the case of a start outside the domain.
    """
    A = _matrix("A", "log_barrier", A)
    m, d = A.shape
    b, c = np.asarray(b, dtype=float), np.asarray(c, dtype=float)
    if b.shape != (m,):
        raise param_error("b", "log_barrier", f"of shape ({m},)", b.shape)
    if c.shape != (d,):
        raise param_error("c", "log_barrier", f"of shape ({d},)", c.shape)
    mu = _positive("mu", "log_barrier", mu)

    def f(x: Array) -> float:
        slack = b - A @ x
        if np.any(slack <= 0):
            return float("inf")
        return float(c @ x - np.log(slack).sum() + 0.5 * mu * x @ x)

    def grad(x: Array) -> Array:
        return c + A.T @ (1.0 / (b - A @ x)) + mu * x

    def hess(x: Array) -> Array:
        w = 1.0 / (b - A @ x) ** 2
        return (A.T * w) @ A + mu * np.eye(d)

    return Problem("log_barrier", f, grad, hess, float("inf"), d)


def affine_transform(problem: Problem, A: Array, c: Array) -> Problem:
    r"""The problem :math:`z\mapsto f(Az+c)`: gradient :math:`A^\top\nabla f`, Hessian
    :math:`A^\top\nabla^2fA`. :math:`M` is affine invariant, so ``M_bound`` is unchanged."""
    A = _matrix("A", "affine_transform", A, rows=problem.dim)
    if A.shape[1] != problem.dim or abs(np.linalg.det(A)) == 0:
        raise param_error(
            "A", "affine_transform", f"an invertible {problem.dim} x {problem.dim} matrix", A.shape
        )
    c = np.asarray(c, dtype=float)
    if c.shape != (problem.dim,):
        raise param_error("c", "affine_transform", f"of shape ({problem.dim},)", c.shape)
    return Problem(
        f"{problem.name} o affine",
        lambda z: problem.f(A @ z + c),
        lambda z: A.T @ problem.grad(A @ z + c),
        lambda z: A.T @ problem.hess(A @ z + c) @ A,
        problem.M_bound,
        problem.dim,
    )
