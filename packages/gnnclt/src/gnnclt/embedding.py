"""The polynomial (linear) GNN embedding ``H = p(A) X = sum_j a_j A^j X`` (the paper's poly-GNN),
computed by Horner's scheme with k sparse mat-vecs: ``H <- a_k X``, then ``H <- A H + a_j X`` for
j = k-1, ..., 0. Cost O(k nnz(A) d)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp

from paperkit import param_error
from paperkit.checks import check_array, check_real, describe

__all__ = ["as_adjacency", "check_coeffs", "poly_gnn_embed"]

_OWNER = "poly_gnn_embed"


def as_adjacency(owner: str, A: Any) -> sp.csr_matrix:
    """``A`` as a float64 CSR matrix: a scipy sparse matrix or a dense 2-D real array, square,
    finite."""
    if sp.issparse(A):
        A = sp.csr_matrix(A)
        if A.dtype.kind not in "iuf":
            raise param_error("A", owner, "a real matrix", describe(A), cls=TypeError)
        if A.nnz and not np.isfinite(A.data).all():
            raise param_error("A", owner, "finite (no NaN or inf)", describe(A))
    else:
        A = sp.csr_matrix(check_array("A", owner, A, ndim=2))
    if A.shape[0] != A.shape[1]:
        raise param_error("A", owner, "a square (n, n) matrix", describe(A))
    return A.astype(np.float64)


def check_coeffs(owner: str, coeffs: Any) -> np.ndarray:
    """``coeffs`` ``(a_0, ..., a_k)``: a non-empty sequence of finite reals with ``a_k != 0``."""
    if isinstance(coeffs, (str, bytes)) or not isinstance(coeffs, (Sequence, np.ndarray)):
        raise param_error("coeffs", owner, "a sequence of numbers", describe(coeffs), cls=TypeError)
    a = check_array("coeffs", owner, np.asarray(coeffs), ndim=1)
    for c in a.tolist():
        check_real("coeffs", owner, c)
    if a[-1] == 0:
        raise param_error("coeffs", owner, "a sequence whose last entry a_k is non-zero", list(a))
    return a.astype(np.float64)


def poly_gnn_embed(A: Any, X: Any, coeffs: Sequence[float]) -> np.ndarray:
    """``H = sum_{j=0}^k coeffs[j] A^j X`` by Horner's scheme (k = len(coeffs) - 1).

    Args:
        A: ``(n, n)`` adjacency, scipy sparse (any format) or a dense real array.
        X: ``(n, d)`` real features.
        coeffs: ``(a_0, ..., a_k)``, finite, ``a_k != 0`` (``[0, 0, 1]``: a 2-layer linear GNN).

    Returns:
        ``H`` ``(n, d)`` float64.

    NaN or inf in ``A``, ``X`` or ``coeffs`` raises ``ValueError``.

    >>> import numpy as np
    >>> A = np.array([[0.0, 1.0], [1.0, 0.0]])
    >>> poly_gnn_embed(A, np.array([[1.0], [2.0]]), [1.0, 0.0, 3.0]).ravel().tolist()
    [4.0, 8.0]
    """
    A = as_adjacency(_OWNER, A)
    X = check_array("X", _OWNER, X, shape=(A.shape[0], None)).astype(np.float64)
    a = check_coeffs(_OWNER, coeffs)
    H = a[-1] * X
    for aj in a[-2::-1]:
        H = A @ H + aj * X
    return np.asarray(H)
