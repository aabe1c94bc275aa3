"""Ridge least squares with a bias column and closed-form leave-one-out choice of the penalty.

The paper (Sec. 4, "least-squares conversions") maps features to labels and back with the ridge
solution of
:math:`\\min_{W,b} \\lVert [A\\;1][W;b] - B \\rVert^2 + \\lambda^2 \\lVert [W;b]\\rVert^2`
(the bias row is penalised too), with :math:`\\lambda` chosen from a small grid by
cross-validation. Here the choice uses the exact leave-one-out (LOO) error of ridge, which depends
on no random fold assignment and so keeps the maps equivariant to node permutations.

With :math:`\\tilde A = [A\\;1] = U S V^\\top` (full SVD, :math:`s_j = 0` past the rank), the hat
matrix is
:math:`H = U\\,\\mathrm{diag}(s^2/(s^2+\\lambda^2))\\,U^\\top`, the residual
:math:`E = (I-H)B` and the LOO residual of row :math:`i` is :math:`E_i / (1 - H_{ii})`.
Both :math:`I-H = U\\,\\mathrm{diag}(\\lambda^2/(s^2+\\lambda^2))\\,U^\\top` and
:math:`1-H_{ii}` are formed from these shrinkage factors without a subtraction, so the ratio
stays exact in float64 even for :math:`\\lambda = 10^{-15}`. Singular values at
round-off level count as zero (as LAPACK ``gelss``, which the paper's code calls, does): a
direction that exists only through rounding (e.g. :math:`\\mathrm{mean}_C Y = 1/C` on every
context row, collinear with the bias column) would otherwise get a weight of order
:math:`1/s \\approx 10^{13}`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import Tensor

from paperkit import check_choice, check_real, check_tensor, param_error

__all__ = ["DEFAULT_LAMBDAS", "ridge_loo_errors", "ridge_ls"]

#: The penalty grid of the paper's code (log scale).
DEFAULT_LAMBDAS = (1e-15, 1e-8, 1e-6, 1e-4, 1e-2)


def _check(owner: str, A: Tensor, B: Tensor, lambdas: Sequence[float]) -> tuple[float, ...]:
    dims: dict = {}
    check_tensor("A", owner, A, shape=("n", "p"), dims=dims)
    check_tensor("B", owner, B, shape=("n", "q"), dims=dims)
    if B.dtype != A.dtype:
        raise param_error("B", owner, f"of the dtype of A ({A.dtype})", B.dtype, cls=TypeError)
    if isinstance(lambdas, (str, bytes)) or not isinstance(lambdas, Sequence) or not lambdas:
        raise param_error("lambdas", owner, "a non-empty sequence of reals", lambdas, cls=TypeError)
    return tuple(
        check_real("lambdas", owner, lam, low=0, low_open=True, high=1e6) for lam in lambdas
    )


def _svd(A: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Full SVD of :math:`[A\\;1]` in float64: ``U`` ``(n, n)``, ``s`` ``(n,)`` (zero-padded when
    :math:`n > p + 1`; values at round-off level, :math:`s \\le \\epsilon \\max(n, p+1)\\,
    s_{max}` as LAPACK ``gelss`` cuts, set to 0) and ``Vh`` ``(r, p + 1)``,
    ``r = min(n, p + 1)``."""
    aug = torch.cat([A, torch.ones_like(A[:, :1])], dim=1).double()
    U, s, Vh = torch.linalg.svd(aug, full_matrices=True)
    tol = torch.finfo(torch.float64).eps * max(aug.shape) * s.max()
    s = torch.where(s > tol, s, torch.zeros_like(s))
    r = s.shape[0]
    return U, torch.cat([s, s.new_zeros(U.shape[0] - r)]), Vh[:r]


def _loo(U: Tensor, s: Tensor, B: Tensor, lambdas: Sequence[float]) -> Tensor:
    UtB, U2 = U.T @ B, U * U
    errors = []
    for lam in lambdas:
        shrink = lam**2 / (s**2 + lam**2)  # 1 on the null directions of [A 1]
        resid = U @ (shrink[:, None] * UtB)  # (I - H) B, no cancellation
        one_minus_h = U2 @ shrink  # 1 - H_ii
        errors.append(((resid / one_minus_h[:, None]) ** 2).mean())
    return torch.stack(errors)


def ridge_loo_errors(A: Tensor, B: Tensor, lambdas: Sequence[float] = DEFAULT_LAMBDAS) -> Tensor:
    """Mean squared leave-one-out error of the bias-augmented ridge fit, one per ``lambdas``.

    :math:`\\mathrm{LOO}(\\lambda) = \\frac{1}{nq}\\sum_{i,j} \\big(E_{ij}/(1-H_{ii})\\big)^2` with
    :math:`E = (I-H)B`,
    :math:`H = \\tilde A(\\tilde A^\\top\\tilde A+\\lambda^2 I)^{-1}\\tilde A^\\top`,
    :math:`\\tilde A = [A\\;1]`: exactly the error of refitting without row :math:`i` and predicting
    it (the Sherman-Morrison identity). Computed in float64; returned as float64
    ``(len(lambdas),)``.

    Args:
        A: inputs ``(n, p)``, floating, finite (NaN and inf refused).
        B: targets ``(n, q)``, same dtype.
        lambdas: penalties :math:`\\lambda > 0` (the penalty is :math:`\\lambda^2`).

    >>> A = torch.arange(6.0).reshape(3, 2)
    >>> ridge_loo_errors(A, A[:, :1], lambdas=(1e-8,)).shape
    torch.Size([1])
    """
    lambdas = _check("ridge_loo_errors", A, B, lambdas)
    U, s, _ = _svd(A)
    return _loo(U, s, B.double(), lambdas)


def ridge_ls(
    A: Tensor,
    B: Tensor,
    lambdas: Sequence[float] = DEFAULT_LAMBDAS,
    cv: str = "loo",
) -> tuple[Tensor, Tensor]:
    """Ridge least squares with a bias column: ``(W, b)`` minimising
    :math:`\\lVert A W + 1 b^\\top - B\\rVert^2
    + \\lambda^2(\\lVert W\\rVert^2 + \\lVert b\\rVert^2)`.

    The closed form is
    :math:`[W; b] = (\\tilde A^\\top \\tilde A + \\lambda^2 I)^{-1}\\tilde A^\\top B`
    with :math:`\\tilde A = [A\\;1]`, evaluated through the SVD of :math:`\\tilde A` in float64.
    :math:`\\lambda` is the grid value with the least leave-one-out error
    (:func:`ridge_loo_errors`; the first on ties), so the result is invariant to permuting the
    rows of ``A`` and ``B`` together and equivariant to permuting the columns of either.

    Args:
        A: ``(n, p)`` floating inputs; NaN and inf are refused.
        B: ``(n, q)`` targets, same dtype as ``A``.
        lambdas: the penalty grid (each > 0); one value fixes :math:`\\lambda`.
        cv: ``"loo"`` (the only choice: closed-form leave-one-out).

    Returns:
        ``W`` ``(p, q)`` and ``b`` ``(q,)`` in the dtype of ``A``.

    >>> A = torch.tensor([[0.0], [1.0], [2.0]], dtype=torch.float64)
    >>> W, b = ridge_ls(A, 2 * A + 1, lambdas=(1e-8,))
    >>> round(W.item(), 6), round(b.item(), 6)
    (2.0, 1.0)
    """
    lambdas = _check("ridge_ls", A, B, lambdas)
    check_choice("cv", "ridge_ls", cv, ("loo",))
    U, s, Vh = _svd(A)
    B64 = B.double()
    lam = lambdas[int(torch.argmin(_loo(U, s, B64, lambdas)))] if len(lambdas) > 1 else lambdas[0]
    r = Vh.shape[0]
    coef = Vh.T @ ((s[:r] / (s[:r] ** 2 + lam**2))[:, None] * (U[:, :r].T @ B64))
    return coef[:-1].to(A.dtype), coef[-1].to(A.dtype)
