r"""Subspace tracking on the Grassmannian and the change of basis of Adam's moments.

A basis :math:`P \in \mathbb{R}^{d\times r}` (orthonormal columns) is moved to reduce the
projection error :math:`F(P) = \|P A - G\|_F^2` with :math:`A = P^\top G`. The descent tangent is
:math:`D = 2\,(G - P A)A^\top` (so :math:`P^\top D = 0`); with its top singular triple
:math:`D \approx s\,u v^\top` the geodesic step of angle :math:`\theta = \eta s` is

.. math:: P_{new} = P + \big(P v(\cos\theta - 1) + u \sin\theta\big) v^\top,

a rotation of the column :math:`Pv` towards :math:`u` that keeps the columns orthonormal.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor

from paperkit import Described, check_choice, param_error

__all__ = ["grassmann_step", "principal_angles", "projection_error", "rotate_adam_moments"]


def _check_pair(P: Tensor, G: Tensor, owner: str) -> None:
    if P.ndim != 2 or G.ndim != 2 or P.shape[0] != G.shape[0]:
        raise param_error(
            "G", owner, "a 2-D tensor with as many rows as P", Described(f"shapes {tuple(P.shape)}")
        )


def projection_error(P: Tensor, G: Tensor) -> float:
    r"""Squared Frobenius error :math:`\|P P^\top G - G\|_F^2` of projecting ``G`` on span ``P``."""
    _check_pair(P, G, "projection_error")
    return float(torch.linalg.matrix_norm(P @ (P.mT @ G) - G) ** 2)


def grassmann_step(
    P: Tensor, G: Tensor, eta: float, max_angle: float | None = None
) -> tuple[Tensor, float]:
    r"""One rank-1 geodesic step of the basis ``P`` (d x r) towards the gradient ``G`` (d x n).

    Returns the new basis and the angle :math:`\theta = \eta s` used (clipped to ``max_angle``
    when given). When ``G`` lies in span ``P`` the tangent is 0 and ``P`` is returned unchanged.
    """
    _check_pair(P, G, "grassmann_step")
    if eta < 0:
        raise param_error("eta", "grassmann_step", "non-negative", eta)
    if max_angle is not None and max_angle < 0:
        raise param_error("max_angle", "grassmann_step", "non-negative or None", max_angle)
    A = P.mT @ G
    D = 2.0 * (G - P @ A) @ A.mT
    U, S, Vh = torch.linalg.svd(D, full_matrices=False)
    s = float(S[0])
    theta = eta * s
    if max_angle is not None:
        theta = min(theta, max_angle)
    if s == 0.0 or theta == 0.0:
        return P.clone(), 0.0
    u, v = U[:, :1], Vh[:1].mT
    P_new = P + (P @ v * (math.cos(theta) - 1.0) + u * math.sin(theta)) @ v.mT
    return P_new, theta


def rotate_adam_moments(
    M: Tensor, V: Tensor, C: Tensor, side: Literal["left", "right"]
) -> tuple[Tensor, Tensor]:
    r"""Express Adam's moments in a new basis, :math:`C = P_{new}^\top P_{old}` (r x r).

    Left (moments r x n): :math:`M' = C M`,
    :math:`V' = |(C\circ C)(V - M\circ M) + (CM)\circ(CM)|`.
    Right (moments m x r): :math:`M' = M C^\top`,
    :math:`V' = |(V - M\circ M)(C\circ C)^\top + (MC^\top)\circ(MC^\top)|`.
    The variance part rotates as a variance of independent coordinates, the mean part exactly.
    """
    check_choice("side", "rotate_adam_moments", side, ("left", "right"))
    if side == "left":
        M_new = C @ M
        V_new = (C * C) @ (V - M * M) + M_new * M_new
    else:
        M_new = M @ C.mT
        V_new = (V - M * M) @ (C * C).mT + M_new * M_new
    return M_new, V_new.abs()


def principal_angles(P: Tensor, Q: Tensor) -> Tensor:
    """Principal angles (radians) between the column spans of orthonormal ``P`` and ``Q``."""
    cosines = torch.linalg.svdvals(P.mT @ Q).clamp(-1.0, 1.0)
    return torch.arccos(cosines)
