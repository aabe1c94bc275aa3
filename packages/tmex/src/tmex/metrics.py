"""Comparison scores (R², MCC) and the downstream ATE by linear adjustment.

* r2_matrix: r2_ik = R² of the least-squares regression Z_k ~ 1 + Ẑ_i; for a one-column block
  this is corr(Ẑ_i, Z_k)². Summary used in the paper: mean_i max_k r2_ik.
* mcc: mean |corr| over the pairs matched by the Hungarian algorithm
  (``scipy.optimize.linear_sum_assignment`` on −|corr|) between the columns of Ẑ and of Z.
* ate_adjustment: the coefficient of x in the least-squares fit y ~ 1 + x + adjust.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from paperkit import check_array
from tmex._checks import blocks, matrix


def _r2(target: np.ndarray, design: np.ndarray) -> float:
    A = np.column_stack([np.ones(len(design)), design])
    coef, *_ = np.linalg.lstsq(A, target, rcond=None)
    resid = target - A @ coef
    total = np.sum((target - target.mean()) ** 2)
    return float(1.0 - np.sum(resid**2) / total) if total > 0 else 0.0


def r2_matrix(Z: Any, Z_hat: Any) -> np.ndarray:
    """(m, K) matrix of R²(Z_k ~ Ẑ_i) (= corr² for one-column blocks).

    NaN policy: NaN or inf in Z or Z_hat is refused with a ValueError; a constant Z_k gives 0.

    >>> Z = np.random.default_rng(0).standard_normal((100, 2))
    >>> np.round(r2_matrix(Z, -3 * Z[:, ::-1]), 6).tolist()[0][1]
    1.0
    """
    dims: dict = {}
    Z = matrix("Z", "r2_matrix", check_array("Z", "r2_matrix", Z, ndim=2), dims)
    hats = blocks("Z_hat", "r2_matrix", Z_hat, dims)
    return np.array([[_r2(Z[:, k], h) for k in range(Z.shape[1])] for h in hats])


def _abs_corr(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    A = A - A.mean(axis=0)
    B = B - B.mean(axis=0)
    na, nb = np.linalg.norm(A, axis=0), np.linalg.norm(B, axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        c = np.abs(A.T @ B) / np.outer(na, nb)
    return np.nan_to_num(c, nan=0.0, posinf=0.0)


def mcc(Z: Any, Z_hat: Any) -> float:
    """Mean correlation coefficient: mean |corr| after Hungarian matching of the columns of
    Ẑ (all blocks' columns side by side) to those of Z.

    NaN policy: NaN or inf is refused with a ValueError; a constant column has correlation 0.

    >>> Z = np.random.default_rng(0).standard_normal((100, 3))
    >>> round(mcc(Z, -2 * Z[:, [2, 0, 1]] + 1), 12)
    1.0
    """
    dims: dict = {}
    Z = matrix("Z", "mcc", check_array("Z", "mcc", Z, ndim=2), dims)
    hats = np.column_stack(blocks("Z_hat", "mcc", Z_hat, dims))
    c = _abs_corr(hats, Z)
    rows, cols = linear_sum_assignment(-c)
    return float(c[rows, cols].mean())


def ate_adjustment(y: Any, x: Any, adjust: Any = None) -> float:
    """Average treatment effect of x on y by linear adjustment: the coefficient of x in the
    least-squares fit y ~ 1 + x + adjust (adjust (n,) / (n, q) or None).

    NaN policy: NaN or inf in y, x or adjust is refused with a ValueError.

    >>> x = np.arange(10.0); a = np.sin(x)
    >>> round(ate_adjustment(2 * x + 3 * a, x, a), 10)
    2.0
    """
    owner = "ate_adjustment"
    dims: dict = {}
    y = check_array("y", owner, y, ndim=1, shape=("n",), dims=dims, kind="real")
    x = check_array("x", owner, x, ndim=1, shape=("n",), dims=dims, kind="real")
    cols = [np.ones(len(y)), np.asarray(x, dtype=float)]
    if adjust is not None:
        cols.append(matrix("adjust", owner, adjust, dims))
    coef, *_ = np.linalg.lstsq(np.column_stack(cols), np.asarray(y, dtype=float), rcond=None)
    return float(coef[1])
