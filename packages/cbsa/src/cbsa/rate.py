r"""Coding rates (MCR^2 and the paper's Sec. 3 objective) and principal angles.

The coding rate of n vectors (the rows of X, n x p) at precision :math:`\varepsilon`:

.. math::

    R_\varepsilon(X) = \tfrac12 \log\det\!\Big(I_p + \frac{p}{n\varepsilon^2} X^\top X\Big),

and the compression of tokens Z (n x D) against K subspaces with orthonormal bases
:math:`U_k` (D x p): :math:`R^c_\varepsilon(Z) = \sum_k R_\varepsilon(Z U_k)`.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from paperkit import check_real, check_tensor, param_error

__all__ = ["coding_rate", "principal_angles", "subspace_compression"]


def coding_rate(X: torch.Tensor, eps: float = 0.5) -> torch.Tensor:
    r""":math:`\tfrac12 \log\det(I_p + \frac{p}{n\varepsilon^2} X^\top X)` over the last two
    axes of X (..., n, p); returns a tensor of shape (...).

    The public code of the paper (``coding_rate.py``) scales :math:`X^\top X` by
    :math:`p/(n\varepsilon)`: its ``eps`` plays the role of our :math:`\varepsilon^2`.

    NaN policy: NaN or inf in ``X`` is refused (ValueError).

    Closed form: if :math:`X^\top X = c I_p` then
    :math:`R = \frac p2 \log(1 + pc/(n\varepsilon^2))`.

    >>> X = torch.eye(4, dtype=torch.float64)           # n = p = 4, X^T X = I
    >>> float(coding_rate(X, eps=1.0))                  # 4/2 * log(1 + 4/4)
    1.3862943611198906
    """
    check_tensor("X", "coding_rate", X, ndim=None)
    if X.ndim < 2:
        raise param_error(
            "X", "coding_rate", "a tensor of at least 2 axes (..., n, p)", tuple(X.shape)
        )
    eps = check_real("eps", "coding_rate", eps, low=0, low_open=True)
    n, p = X.shape[-2], X.shape[-1]
    gram = X.transpose(-1, -2) @ X
    eye = torch.eye(p, dtype=X.dtype, device=X.device)
    return 0.5 * torch.linalg.slogdet(eye + (p / (n * eps**2)) * gram)[1]


def _check_bases(U_list: Sequence[torch.Tensor], D: int, Z: torch.Tensor, owner: str) -> None:
    if not isinstance(U_list, (list, tuple)) or not U_list:
        raise param_error(
            "U_list", owner, "a non-empty list of (D, p) bases", U_list, cls=TypeError
        )
    for U in U_list:
        check_tensor("U_list", owner, U, shape=(D, None), dtype=(Z.dtype,), device=Z.device)


def subspace_compression(
    Z: torch.Tensor, U_list: Sequence[torch.Tensor], eps: float = 0.5
) -> torch.Tensor:
    r""":math:`\sum_k R_\varepsilon(Z U_k)`: the coding rate of the tokens Z (..., n, D)
    projected on each subspace, summed (the compression term of MCR^2 that MSSA and CBSA descend).

    NaN policy: NaN or inf in ``Z`` or a basis is refused (ValueError).

    >>> Z = torch.randn(50, 6, dtype=torch.float64)
    >>> U = [torch.eye(6, dtype=torch.float64)[:, :3], torch.eye(6, dtype=torch.float64)[:, 3:]]
    >>> bool(subspace_compression(0 * Z, U) == 0)
    True
    """
    check_tensor("Z", "subspace_compression", Z)
    if Z.ndim < 2:
        raise param_error(
            "Z", "subspace_compression", "a tensor of at least 2 axes (..., n, D)", tuple(Z.shape)
        )
    _check_bases(U_list, Z.shape[-1], Z, "subspace_compression")
    eps = check_real("eps", "subspace_compression", eps, low=0, low_open=True)
    return sum(coding_rate(Z @ U, eps) for U in U_list)


def principal_angles(A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
    r"""Principal angles (radians, ascending) between the column spans of A (D x a) and B (D x b):
    :math:`\arccos` of the singular values of :math:`Q_A^\top Q_B` (orthonormalised by QR).

    NaN policy: NaN or inf is refused (ValueError).

    >>> E = torch.eye(3, dtype=torch.float64)
    >>> [round(a, 6) for a in principal_angles(E[:, :2], E[:, 1:]).tolist()]
    [0.0, 1.570796]
    """
    check_tensor("A", "principal_angles", A, shape=("D", None))
    check_tensor(
        "B", "principal_angles", B, shape=(A.shape[0], None), dtype=(A.dtype,), device=A.device
    )
    qa, qb = torch.linalg.qr(A)[0], torch.linalg.qr(B)[0]
    s = torch.linalg.svdvals(qa.transpose(0, 1) @ qb).clamp(-1, 1)
    return torch.arccos(s).sort().values
