r"""Generic geometry of the manifold of global minimisers :math:`M = \{w : F(w) = y\}`.

Everything here works from two vectorised callables, the model :math:`F: \mathbb{R}^p \to
\mathbb{R}^q` and its Jacobian :math:`J`, and is used where a problem has no closed form:

* :func:`newton_projection`: the orthogonal projection :math:`\pi(w) = \arg\min_{x \in M}
  \|x - w\|` (the nearby one), as the solution of its first-order conditions
  :math:`x - w + J(x)^\top \mu = 0`, :math:`F(x) = y`. It starts where Gauss-Newton steps along
  the gradient reach :math:`M` (:func:`gauss_newton_to_manifold`: :math:`x \leftarrow x - (f -
  y)\,\nabla f / \|\nabla f\|^2` for a scalar output), then takes Newton steps on the
  first-order conditions, whose Jacobian :math:`[[I + \nabla^2(\mu \cdot F), J^\top], [J, 0]]`
  uses the Hessian of :math:`\mu \cdot F` by central differences of :math:`J^\top \mu`
  (:func:`hessian_times`), halving a step that increases the residual of the conditions.
* :func:`gram_sharpness`: :math:`S(w) = \lambda_{\max}(J J^\top)`, which on :math:`M` equals
  :math:`\lambda_{\max}(\nabla^2 L)` because :math:`\nabla^2 L = J^\top J + \sum_k r_k
  \nabla^2 F_k` and :math:`r = 0` there.
* :func:`slsqp_min_sharpness`: :math:`S^* = \min_{w \in M} S(w)` by scipy's SLSQP, best of
  several seeded starts on :math:`M`.

These are internal helpers: the public entry points are the methods of
:class:`eosgd.LeastSquaresProblem`, which check their arguments.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

Model = Callable[[np.ndarray], np.ndarray]

#: Iterations and tolerance of the projection (relative to the size of the point).
PROJECTION_ITERATIONS = 50
PROJECTION_TOL = 1e-13


def gram(J: np.ndarray) -> np.ndarray:
    r""":math:`J J^\top` for a stack of Jacobians ``(..., q, p)``."""
    return np.einsum("...qp,...rp->...qr", J, J)


def _solve(A: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Solve the stack ``A x = b`` (``A (..., q, q)`` symmetric PSD, ``b (..., q)``) with a
    relative ridge of 1e-15 of the mean diagonal, so a rank-deficient Gram matrix gives a huge
    (then rejected) step instead of an exception for the whole batch."""
    ridge = 1e-15 * np.trace(A, axis1=-2, axis2=-1) / A.shape[-1] + 1e-300
    A = A + ridge[..., None, None] * np.eye(A.shape[-1])
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.linalg.solve(A, b[..., None])[..., 0]


def gram_sharpness(J: np.ndarray) -> np.ndarray:
    r""":math:`\lambda_{\max}(J J^\top)` of a stack of Jacobians ``(..., q, p)``."""
    if J.shape[-2] == 1:
        return np.einsum("...p,...p->...", J[..., 0, :], J[..., 0, :])
    return np.linalg.eigvalsh(gram(J))[..., -1]


def hessian_times(J: Model, x: np.ndarray, mu: np.ndarray) -> np.ndarray:
    r""":math:`\nabla^2 (\mu \cdot F)(x)`, ``(n, p, p)``, by central differences of
    :math:`x \mapsto J(x)^\top \mu` (symmetrised); ``x (n, p)``, ``mu (n, q)``."""
    n, p = x.shape
    h = 1e-5 * (1.0 + np.abs(x).max(axis=-1))
    shift = h[:, None, None] * np.eye(p)
    points = np.concatenate([x[:, None] + shift, x[:, None] - shift], axis=1)
    jac = J(points.reshape(-1, p)).reshape(n, 2 * p, -1, p)
    grads = np.einsum("nkqp,nq->nkp", jac, mu)
    H = (grads[:, :p] - grads[:, p:]) / (2 * h[:, None, None])
    return (H + H.transpose(0, 2, 1)) / 2


def _kkt(F, J, y, w, x, mu):
    """The first-order conditions of the projection: ``x - w + J^T mu`` and ``F(x) - y``."""
    Jx = J(x)
    return Jx, x - w + np.einsum("nqp,nq->np", Jx, mu), F(x) - y


def newton_projection(
    F: Model,
    J: Model,
    y: np.ndarray,
    w: np.ndarray,
    *,
    tol: float = PROJECTION_TOL,
    max_iter: int = PROJECTION_ITERATIONS,
) -> tuple[np.ndarray, np.ndarray]:
    """Orthogonal projection of the points ``w (n, p)`` onto :math:`M`, and a mask of the rows
    whose first-order conditions hold to ``tol`` (relative to the size of the point and of y)."""
    n, p = w.shape
    scale = 1.0 + np.abs(w).max(axis=-1)
    yscale = 1.0 + np.abs(y).max()
    with np.errstate(over="ignore", invalid="ignore"):
        x = gauss_newton_to_manifold(F, J, y, w, max_iter=30)
        Jx = J(x)
        mu = _solve(gram(Jx), np.einsum("nqp,np->nq", Jx, w - x))  # least squares of the normal
        bad = ~(np.isfinite(x).all(axis=-1) & np.isfinite(mu).all(axis=-1))
        x[bad], mu[bad] = w[bad], 0.0
        q = mu.shape[-1]
        eye = np.eye(p)
        for _ in range(max_iter):
            Jx, g1, g2 = _kkt(F, J, y, w, x, mu)
            err = np.maximum(np.abs(g1).max(-1) / scale, np.abs(g2).max(-1) / yscale)
            todo = ~(err <= tol)
            if not todo.any():
                break
            i = np.flatnonzero(todo)
            A = np.zeros((len(i), p + q, p + q))
            A[:, :p, :p] = eye + hessian_times(J, x[i], mu[i])
            A[:, :p, p:] = Jx[i].transpose(0, 2, 1)
            A[:, p:, :p] = Jx[i]
            rhs = -np.concatenate([g1[i], g2[i]], axis=-1)
            try:
                step = np.linalg.solve(A, rhs[..., None])[..., 0]
            except np.linalg.LinAlgError:
                break
            merit = (g1[i] ** 2).sum(-1) + (g2[i] ** 2).sum(-1)
            alpha = np.ones(len(i))
            for _halving in range(8):  # backtrack where the full step makes things worse
                x_try = x[i] + alpha[:, None] * step[:, :p]
                mu_try = mu[i] + alpha[:, None] * step[:, p:]
                _, h1, h2 = _kkt(F, J, y, w[i], x_try, mu_try)
                worse = ~((h1**2).sum(-1) + (h2**2).sum(-1) <= merit)
                if not worse.any():
                    break
                alpha = np.where(worse, alpha / 2, alpha)
            keep = np.isfinite(x_try).all(-1) & np.isfinite(mu_try).all(-1)
            x[i[keep]], mu[i[keep]] = x_try[keep], mu_try[keep]
        _, g1, g2 = _kkt(F, J, y, w, x, mu)
        err = np.maximum(np.abs(g1).max(-1) / scale, np.abs(g2).max(-1) / yscale)
    return x, err <= 10 * tol


def gauss_newton_to_manifold(
    F: Model, J: Model, y: np.ndarray, w: np.ndarray, *, max_iter: int = 100
) -> np.ndarray:
    r"""Gauss-Newton on :math:`\tfrac12 \|F(w) - y\|^2` from the rows of ``w``: the minimum-norm
    step :math:`w \leftarrow w - J^\top (J J^\top)^{-1} (F(w) - y)`, halved while it does not
    decrease the residual. Returns the final points (on :math:`M` when it succeeded)."""
    x = w.copy()
    tiny = 1e-14 * (1.0 + np.abs(y).max())
    with np.errstate(over="ignore", invalid="ignore"):
        for _ in range(max_iter):
            Jx = J(x)
            r = F(x) - y
            norm = np.linalg.norm(r, axis=-1)
            todo = ~(norm <= tiny)
            if not todo.any():
                break
            step = np.einsum("nqp,nq->np", Jx, _solve(gram(Jx), r))
            for _halving in range(30):
                trial = x - step
                better = np.linalg.norm(F(trial) - y, axis=-1) < norm
                better &= np.isfinite(trial).all(axis=-1)
                if (better | ~todo).all():
                    break
                step = np.where(better[:, None], step, 0.5 * step)
            x = np.where((better & todo)[:, None], trial, x)
    return x


def feasible_points(
    F: Model,
    J: Model,
    y: np.ndarray,
    dim: int,
    seed: int,
    *,
    count: int = 8,
    scale: float = 1.0,
) -> np.ndarray:
    r"""Points of :math:`M` where :math:`J J^\top` is well conditioned, reached by Gauss-Newton
    from ``count`` seeded normal draws of scale ``scale``; shape ``(k, p)``, ``k`` possibly 0 (then
    :math:`M` is empty, or degenerate where it was reached: :math:`\nabla f = 0` there)."""
    rng = np.random.default_rng(seed)
    starts = scale * rng.standard_normal((count, dim))
    x = gauss_newton_to_manifold(F, J, y, starts)
    with np.errstate(over="ignore", invalid="ignore"):
        resid = np.abs(F(x) - y).max(axis=-1)
        low = np.linalg.eigvalsh(gram(J(x)))[..., 0]
    yscale = 1.0 + np.abs(y).max()
    keep = np.isfinite(x).all(axis=-1) & (resid <= 1e-10 * yscale) & (low >= 1e-6 * yscale)
    return x[keep]


def sharpness_gradient(J: Model, w: np.ndarray) -> np.ndarray:
    r""":math:`\nabla S(w)` for :math:`S = \lambda_{\max}(J J^\top)` at one point ``w (p,)``:
    with :math:`v` the top eigenvector of :math:`J J^\top` and :math:`g = J^\top v`,
    :math:`\nabla S = 2 \nabla^2 (v \cdot F)\, g`, the Hessian-vector product taken by a central
    difference of :math:`x \mapsto J(x)^\top v` along :math:`g`."""
    Jw = J(w[None])[0]
    _, vecs = np.linalg.eigh(gram(Jw))
    v = vecs[:, -1]
    g = Jw.T @ v
    norm = np.linalg.norm(g)
    if norm == 0:
        return np.zeros_like(w)
    h = 1e-6 * (1.0 + np.linalg.norm(w)) / norm
    pair = J(np.stack([w + h * g, w - h * g]))
    return (pair[0].T @ v - pair[1].T @ v) / h  # 2 * (difference / 2h)


def slsqp_min_sharpness(
    F: Model,
    J: Model,
    y: np.ndarray,
    starts: np.ndarray,
    *,
    ftol: float = 1e-14,
    maxiter: int = 500,
) -> tuple[float, np.ndarray]:
    r""":math:`\min_{w \in M} \lambda_{\max}(J J^\top)` by SLSQP (equality constraint
    :math:`F(w) = y` with its exact Jacobian) from each start; the best feasible result.

    Raises ``RuntimeError`` when no start ends on :math:`M` (the caller words the error)."""
    from scipy.optimize import minimize

    def objective(w: np.ndarray) -> float:
        return float(gram_sharpness(J(w[None]))[0])

    def constraint(w: np.ndarray) -> np.ndarray:
        return F(w[None])[0] - y

    best: tuple[float, np.ndarray] | None = None
    yscale = 1.0 + np.abs(y).max()
    for start in starts:
        res = minimize(
            objective,
            start,
            jac=lambda w: sharpness_gradient(J, w),
            method="SLSQP",
            constraints=[{"type": "eq", "fun": constraint, "jac": lambda w: J(w[None])[0]}],
            options={"ftol": ftol, "maxiter": maxiter},
        )
        w = np.asarray(res.x, dtype=float)
        x, ok = newton_projection(F, J, y, w[None])
        if not ok[0] or np.abs(constraint(x[0])).max() > 1e-10 * yscale:
            continue
        value = objective(x[0])
        if best is None or value < best[0]:
            best = (value, x[0])
    if best is None:
        raise RuntimeError("SLSQP ended on M from none of the starts")
    return best
