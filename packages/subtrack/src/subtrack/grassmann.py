r"""Subspace tracking on the Grassmannian and the change of basis of Adam's moments.

A basis :math:`P \in \mathbb{R}^{d\times r}` (orthonormal columns) is moved to reduce the
projection error :math:`F(P) = \|P A - G\|_F^2` with :math:`A = P^\top G`. The descent tangent is
:math:`D = 2\,(G - P A)A^\top` (so :math:`P^\top D = 0`); with its top singular triple
:math:`D \approx s\,u v^\top` the geodesic step of angle :math:`\theta = \eta s` is

.. math:: P_{new} = P + \big(P v(\cos\theta - 1) + u \sin\theta\big) v^\top,

a rotation of the column :math:`Pv` towards :math:`u` that keeps the columns orthonormal.

The public functions check their inputs (shapes, one dtype and device, NaN and inf refused);
:func:`geodesic_step` and :func:`rotate` are the same maths without the checks, for the optimizer,
which checks the gradients once per step.
"""

from __future__ import annotations

import math
from typing import Literal

import torch
from torch import Tensor

from paperkit import check_choice, check_real, check_tensor, describe, param_error

__all__ = [
    "geodesic_step",
    "grassmann_step",
    "principal_angles",
    "projection_error",
    "rotate",
    "rotate_adam_moments",
]


def _pair(owner: str, first: str, P: Tensor, second: str, G: Tensor, cols: str) -> None:
    """``P`` (d, r) with r <= d and ``G`` (d, ``cols``) of P's dtype and device, both finite."""
    dims: dict = {}
    check_tensor(first, owner, P, shape=("d", "r"), dims=dims)
    if P.shape[1] > P.shape[0]:
        raise param_error(first, owner, "a (d, r) basis with r <= d", describe(P))
    check_tensor(second, owner, G, shape=("d", cols), dims=dims, device=P.device)
    _same_dtype(owner, second, G, first, P)


def _same_dtype(owner: str, name: str, x: Tensor, ref_name: str, ref: Tensor) -> None:
    if x.dtype != ref.dtype:
        raise param_error(
            name,
            owner,
            f"of the dtype of '{ref_name}' ({ref.dtype}; no silent cast)",
            describe(x),
            cls=TypeError,
        )


def projection_error(P: Tensor, G: Tensor) -> float:
    r"""Squared Frobenius error :math:`\|P P^\top G - G\|_F^2` of projecting ``G`` on span ``P``.

    Shapes: P (d, r) with orthonormal columns, r <= d; G (d, n) of P's dtype and device. NaN or
    inf in either is refused (ValueError).

    >>> P = torch.eye(3)[:, :1]
    >>> round(projection_error(P, torch.tensor([[1.0], [2.0], [2.0]])), 4)
    8.0
    """
    _pair("projection_error", "P", P, "G", G, "n")
    return float(torch.linalg.matrix_norm(P @ (P.mT @ G) - G) ** 2)


def grassmann_step(
    P: Tensor, G: Tensor, eta: float, max_angle: float | None = None
) -> tuple[Tensor, float]:
    r"""One rank-1 geodesic step of the basis ``P`` (d x r) towards the gradient ``G`` (d x n).

    Returns the new basis and the angle :math:`\theta = \eta s` used (clipped to ``max_angle``
    when given). When ``G`` lies in span ``P`` the tangent is 0 and ``P`` is returned unchanged.

    Shapes: P (d, r) with orthonormal columns (not checked), r <= d; G (d, n) of P's dtype and
    device. ``eta`` and ``max_angle`` are finite and >= 0. NaN or inf in P or G is refused.

    >>> P = torch.eye(4)[:, :1]
    >>> P_new, angle = grassmann_step(P, torch.ones(4, 3), eta=0.1)
    >>> round(angle, 4), P_new.shape  # theta = eta * s = 0.1 * 6 * sqrt(3)
    (1.0392, torch.Size([4, 1]))
    """
    owner = "grassmann_step"
    _pair(owner, "P", P, "G", G, "n")
    eta = check_real("eta", owner, eta, low=0)
    if max_angle is not None:
        max_angle = check_real("max_angle", owner, max_angle, low=0)
    return geodesic_step(P, G, eta, max_angle)


def geodesic_step(
    P: Tensor, G: Tensor, eta: float, max_angle: float | None = None
) -> tuple[Tensor, float]:
    """:func:`grassmann_step` on checked inputs (the optimizer's inner loop)."""
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

    Shapes: ``side="left"``: M, V (r, n); ``"right"``: M, V (m, r); C (r, r). One dtype and
    device; NaN or inf in any input is refused (ValueError).

    >>> M, V = torch.ones(2, 3), torch.ones(2, 3)
    >>> M2, V2 = rotate_adam_moments(M, V, torch.eye(2), "left")
    >>> bool(torch.equal(M2, M) and torch.equal(V2, V))
    True
    """
    owner = "rotate_adam_moments"
    check_choice("side", owner, side, ("left", "right"))
    shape = ("r", "n") if side == "left" else ("m", "r")
    dims: dict = {}
    check_tensor("M", owner, M, shape=shape, dims=dims)
    for name, x, want in (("V", V, shape), ("C", C, ("r", "r"))):
        check_tensor(name, owner, x, shape=want, dims=dims, device=M.device)
        _same_dtype(owner, name, x, "M", M)
    return rotate(M, V, C, side)


def rotate(
    M: Tensor, V: Tensor, C: Tensor, side: Literal["left", "right"]
) -> tuple[Tensor, Tensor]:
    """:func:`rotate_adam_moments` on checked inputs (the optimizer's inner loop)."""
    if side == "left":
        M_new = C @ M
        V_new = (C * C) @ (V - M * M) + M_new * M_new
    else:
        M_new = M @ C.mT
        V_new = (V - M * M) @ (C * C).mT + M_new * M_new
    return M_new, V_new.abs()


def principal_angles(P: Tensor, Q: Tensor) -> Tensor:
    """Principal angles (radians) between the column spans of orthonormal ``P`` and ``Q``.

    Shapes: P (d, r), Q (d, s) with orthonormal columns, r, s <= d, one dtype and device; NaN or
    inf refused. Returns min(r, s) angles in [0, pi/2], smallest first.

    >>> principal_angles(torch.eye(3)[:, :1], torch.eye(3)[:, 1:2])
    tensor([1.5708])
    """
    owner = "principal_angles"
    _pair(owner, "P", P, "Q", Q, "s")
    if Q.shape[1] > Q.shape[0]:
        raise param_error("Q", owner, "a (d, s) basis with s <= d", describe(Q))
    cosines = torch.linalg.svdvals(P.mT @ Q).clamp(-1.0, 1.0)
    return torch.arccos(cosines)
