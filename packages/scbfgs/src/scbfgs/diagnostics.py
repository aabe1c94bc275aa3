r"""The affine-invariant quantities of the analysis.

- Newton decrement :math:`\lambda(x)=\sqrt{g^\top\nabla^2f(x)^{-1}g}`; with an inverse-Hessian
  estimate :math:`H` in place of :math:`\nabla^2f(x)^{-1}`, :math:`\sqrt{g^\top Hg}`.
- The potential of the initial Hessian approximation, weighted at the solution:
  :math:`\bar B=\nabla^2f(x^*)^{-1/2}B\,\nabla^2f(x^*)^{-1/2}` and
  :math:`\Psi(\bar B)=\mathrm{tr}(\bar B)-d-\ln\det\bar B\ge0`, zero iff :math:`\bar B=I`.
- The solution :math:`x^*, f^*` by a damped Newton method, for the initial error
  :math:`\Delta_0=f(x_0)-f^*` and the dimensionless :math:`M\sqrt{\Delta_0}`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from paperkit import (
    Described,
    check_array,
    check_callable,
    check_int,
    check_memory,
    check_real,
    param_error,
)

__all__ = ["newton_decrement", "newton_solve", "psi", "smallest_eigenvalue"]

Array = np.ndarray


def smallest_eigenvalue(S: Array) -> Described:
    """A description of a symmetric matrix by its smallest eigenvalue, for error messages."""
    return Described(f"a matrix with smallest eigenvalue {np.linalg.eigvalsh(S).min():.3g}")


def newton_decrement(g: Array, H: Array) -> float:
    r""":math:`\sqrt{g^\top Hg}` for an inverse Hessian (or its estimate) ``H``.

    Shapes: g (d,), H (d, d). NaN or inf in either is refused (ValueError).

    >>> newton_decrement(np.array([3.0, 4.0]), np.eye(2))
    5.0
    """
    owner = "newton_decrement"
    dims: dict = {}
    g = check_array("g", owner, g, shape=("d",), dims=dims).astype(float)
    H = check_array("H", owner, H, shape=("d", "d"), dims=dims).astype(float)
    return float(np.sqrt(max(g @ H @ g, 0.0)))


def psi(B: Array, hess_star: Array) -> float:
    r""":math:`\Psi(\bar B)=\mathrm{tr}(\bar B)-d-\ln\det\bar B` with
    :math:`\bar B=\nabla^2f(x^*)^{-1/2}B\nabla^2f(x^*)^{-1/2}`; both matrices symmetric positive
    definite. Computed as
    :math:`\mathrm{tr}(\nabla^2f(x^*)^{-1}B)-d-\ln\det B+\ln\det\nabla^2f(x^*)`.

    Shapes: B and hess_star (d, d). NaN or inf in either is refused (ValueError).

    >>> round(psi(2.0 * np.eye(3), np.eye(3)), 12)  # 3 (2 - 1 - ln 2)
    0.92055845832
    """
    owner = "psi"
    dims: dict = {}
    B = check_array("B", owner, B, shape=("d", "d"), dims=dims).astype(float)
    S = check_array("hess_star", owner, hess_star, shape=("d", "d"), dims=dims).astype(float)
    d = B.shape[0]
    logdet_b = _logdet("B", owner, B)
    logdet_s = _logdet("hess_star", owner, S)
    trace = np.trace(np.linalg.solve(S, B))
    return float(trace - d - logdet_b + logdet_s)


def _logdet(name: str, owner: str, S: Array) -> float:
    r""":math:`\ln\det S` through a Cholesky factor; the worded error when S is not positive
    definite (a determinant's sign cannot tell: -I has det 1 in even dimensions)."""
    try:
        L = np.linalg.cholesky(S)
    except np.linalg.LinAlgError:
        raise param_error(name, owner, "positive definite", smallest_eigenvalue(S)) from None
    return float(2.0 * np.log(np.diag(L)).sum())


def newton_solve(
    f: Callable[[Array], float],
    grad: Callable[[Array], Array],
    hess: Callable[[Array], Array],
    x0: Array,
    tol: float = 1e-14,
    max_iter: int = 200,
) -> tuple[Array, float]:
    r"""Minimise a self-concordant ``f`` to high accuracy; return :math:`(x^*, f^*)`.

    Damped Newton steps :math:`x\leftarrow x-\frac{1}{1+\lambda}\nabla^2f^{-1}g` (globally
    convergent for self-concordant functions, affine invariant) while :math:`\lambda\ge\frac14`,
    then pure Newton steps until :math:`\lambda^2/2\le` ``tol`` (an estimate of :math:`f-f^*`),
    followed by one more step.

    Shapes: x0 (d,). NaN or inf in ``x0`` is refused, and so is a start where ``f`` is not finite
    (ValueError); a dimension whose d x d Hessian would not fit in memory is refused.

    >>> x, fx = newton_solve(lambda x: x @ x, lambda x: 2 * x, lambda x: 2 * np.eye(2), np.ones(2))
    >>> x, fx
    (array([0., 0.]), 0.0)
    """
    owner = "newton_solve"
    x = check_array("x0", owner, x0, shape=("d",)).astype(float)
    check_memory("x0", owner, Described(f"a point of dimension {x.size}"), 3 * 8 * x.size**2)
    check_real("tol", owner, tol, low=0)
    max_iter = check_int("max_iter", owner, max_iter, low=0)
    for name, fn in (("f", f), ("grad", grad), ("hess", hess)):
        check_callable(name, owner, fn)
    if not np.isfinite(f(x)):
        raise param_error(
            "x0", owner, "a point where f is finite", Described(f"a point with f(x0) = {f(x)}")
        )
    polish = False
    for _ in range(max_iter):
        g = grad(x)
        step = np.linalg.solve(hess(x), g)
        lam = float(np.sqrt(max(g @ step, 0.0)))
        x = x - (step / (1.0 + lam) if lam >= 0.25 else step)
        if polish:
            break
        polish = lam < 0.25 and lam * lam / 2.0 <= tol
    return x, float(f(x))
