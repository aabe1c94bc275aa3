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

from paperkit import Described, param_error

__all__ = ["newton_decrement", "newton_solve", "psi"]

Array = np.ndarray


def newton_decrement(g: Array, H: Array) -> float:
    r""":math:`\sqrt{g^\top Hg}` for an inverse Hessian (or its estimate) ``H``."""
    g = np.asarray(g, dtype=float)
    H = np.asarray(H, dtype=float)
    if H.shape != (g.size, g.size):
        raise param_error("H", "newton_decrement", f"of shape ({g.size}, {g.size})", H.shape)
    return float(np.sqrt(max(g @ H @ g, 0.0)))


def psi(B: Array, hess_star: Array) -> float:
    r""":math:`\Psi(\bar B)=\mathrm{tr}(\bar B)-d-\ln\det\bar B` with
    :math:`\bar B=\nabla^2f(x^*)^{-1/2}B\nabla^2f(x^*)^{-1/2}`; both matrices symmetric positive
    definite. Computed as
    :math:`\mathrm{tr}(\nabla^2f(x^*)^{-1}B)-d-\ln\det B+\ln\det\nabla^2f(x^*)`."""
    B = np.asarray(B, dtype=float)
    S = np.asarray(hess_star, dtype=float)
    if B.ndim != 2 or B.shape != S.shape or B.shape[0] != B.shape[1]:
        raise param_error("B", "psi", f"a square matrix shaped like hess_star {S.shape}", B.shape)
    d = B.shape[0]
    sign_b, logdet_b = np.linalg.slogdet(B)
    sign_s, logdet_s = np.linalg.slogdet(S)
    if sign_b <= 0 or sign_s <= 0:
        raise param_error("B", "psi", "positive definite, as hess_star", "a matrix that is not")
    trace = np.trace(np.linalg.solve(S, B))
    return float(trace - d - logdet_b + logdet_s)


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
    """
    x = np.array(x0, dtype=float)
    if not np.isfinite(f(x)):
        raise param_error(
            "x0", "newton_solve", "a point where f is finite", Described(f"f(x0) = {f(x)}")
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
