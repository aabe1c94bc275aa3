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

from paperkit import (
    Described,
    check_array,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)
from scbfgs.diagnostics import smallest_eigenvalue

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


def _positive(name: str, owner: str, value: float) -> float:
    return check_real(name, owner, value, low=0, low_open=True)


def logistic_l2(A: Array, b: Array, mu: float) -> Problem:
    r"""L2-regularised logistic regression,
    :math:`f(x)=\frac1n\sum_i\log(1+e^{-b_ia_i^\top x})+\frac\mu2\lVert x\rVert^2`, labels
    :math:`b_i\in\{-1,1\}`.

    The loss :math:`\ell(z)=\log(1+e^{-z})` has :math:`|\ell'''|\le 1/(6\sqrt3)`, so the Hessian is
    :math:`L_2`-Lipschitz with :math:`L_2=\frac{1}{6\sqrt3}\frac1n\sum_i\lVert a_i\rVert^3` and
    :math:`M=L_2/\mu^{3/2}`.

    Shapes: A (n, d), b (n,). NaN or inf in ``A`` is refused (ValueError), as are labels other
    than -1 and +1 and ``mu <= 0``.

    >>> p = logistic_l2(np.eye(2), np.array([1.0, -1.0]), mu=1.0)
    >>> round(p.f(np.zeros(2)), 6)  # log 2
    0.693147
    """
    owner = "logistic_l2"
    dims: dict = {}
    A = check_array("A", owner, A, shape=("n", "d"), dims=dims).astype(float)
    b = check_array("b", owner, b, shape=("n",), dims=dims).astype(float)
    if not np.isin(b, (-1.0, 1.0)).all():
        labels = np.unique(b)[:5].tolist()
        raise param_error("b", owner, "labels in {-1, +1}", Described(f"labels {labels}"))
    mu = _positive("mu", owner, mu)
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
    """:func:`logistic_l2` on scikit-learn's bundled breast-cancer data (569 x 30, standardised);
    ``mu > 0`` (finite)."""
    mu = _positive("mu", "breast_cancer_logistic", mu)
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

    ``d >= 2``; ``mu`` and ``delta`` positive and finite; a ``d`` whose dense d x d matrices would
    not fit in memory is refused.

    >>> p = cubic_chain(d=3, mu=1.0)
    >>> p.f(np.zeros(3)), p.grad(np.zeros(3))
    (0.0, array([-1.,  0.,  0.]))
    """
    owner = "cubic_chain"
    d = check_int("d", owner, d, low=2)
    mu = _positive("mu", owner, mu)
    delta = _positive("delta", owner, delta)
    check_memory("d", owner, d, 4 * 8 * d * d)  # D, the Hessian and its products
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
    :math:`M=0`.

    Shapes: Q (d, d) symmetric positive definite, b (d,). NaN or inf is refused (ValueError).

    >>> quadratic(2.0 * np.eye(2), np.ones(2)).grad(np.zeros(2))
    array([-1., -1.])
    """
    owner = "quadratic"
    dims: dict = {}
    Q = check_array("Q", owner, Q, shape=("d", "d"), dims=dims).astype(float)
    b = check_array("b", owner, b, shape=("d",), dims=dims).astype(float)
    if not np.allclose(Q, Q.T):
        raise param_error("Q", owner, "symmetric", Described("a non-symmetric matrix"))
    try:
        np.linalg.cholesky(Q)
    except np.linalg.LinAlgError:
        raise param_error("Q", owner, "positive definite", smallest_eigenvalue(Q)) from None
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

    Shapes: A (m, d), b (m,). NaN or inf is refused (ValueError); ``mu > 0``.

    >>> round(log_sum_exp(np.eye(2), np.zeros(2), mu=1.0).f(np.zeros(2)), 6)  # log 2
    0.693147
    """
    owner = "log_sum_exp"
    dims: dict = {}
    A = check_array("A", owner, A, shape=("m", "d"), dims=dims).astype(float)
    b = check_array("b", owner, b, shape=("m",), dims=dims).astype(float)
    mu = _positive("mu", owner, mu)
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

    Shapes: A (m, d), b (m,), c (d,). NaN or inf is refused (ValueError); ``mu > 0``.

    >>> p = log_barrier(np.eye(1), np.ones(1), np.zeros(1), mu=1.0)
    >>> p.f(np.zeros(1)), p.f(np.full(1, 2.0))  # outside the domain: inf
    (0.0, inf)
    """
    owner = "log_barrier"
    dims: dict = {}
    A = check_array("A", owner, A, shape=("m", "d"), dims=dims).astype(float)
    b = check_array("b", owner, b, shape=("m",), dims=dims).astype(float)
    c = check_array("c", owner, c, shape=("d",), dims=dims).astype(float)
    mu = _positive("mu", owner, mu)
    m, d = A.shape

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
    :math:`A^\top\nabla^2fA`. :math:`M` is affine invariant, so ``M_bound`` is unchanged.

    Shapes: A (d, d) invertible, c (d,) with d = ``problem.dim``. NaN or inf is refused.

    >>> q = affine_transform(quadratic(np.eye(2), np.zeros(2)), 2.0 * np.eye(2), np.ones(2))
    >>> q.f(-0.5 * np.ones(2))  # A z + c = 0
    0.0
    """
    owner = "affine_transform"
    if not isinstance(problem, Problem):
        raise param_error("problem", owner, "a Problem", describe(problem), cls=TypeError)
    d = problem.dim
    A = check_array("A", owner, A, shape=(d, d)).astype(float)
    c = check_array("c", owner, c, shape=(d,)).astype(float)
    if np.linalg.matrix_rank(A) < d:
        raise param_error(
            "A", owner, "invertible", Described(f"a matrix of rank {np.linalg.matrix_rank(A)}")
        )
    return Problem(
        f"{problem.name} o affine",
        lambda z: problem.f(A @ z + c),
        lambda z: A.T @ problem.grad(A @ z + c),
        lambda z: A.T @ problem.hess(A @ z + c) @ A,
        problem.M_bound,
        problem.dim,
    )
