"""Rigid fitting (weighted Kabsch) and the spatial distribution score of an inlier set."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import Described, param_error
from trussreg.checks import as_points, check_positive

__all__ = ["is_degenerate", "kabsch", "kabsch_unchecked", "spatial_distribution_score"]

#: Centred point sets whose second singular value is below this fraction of the first are
#: treated as collinear: the rotation about their line is not determined.
COLLINEAR_RTOL = 1e-9


def is_degenerate(P: np.ndarray, w: np.ndarray | None = None) -> bool:
    """True when fewer than 3 points carry weight or the weighted points are (nearly) collinear."""
    if w is not None:
        P = P[w > 0]
    if len(P) < 3:
        return True
    s = np.linalg.svd(P - P.mean(axis=0), compute_uv=False)
    return bool(s[1] <= COLLINEAR_RTOL * max(s[0], np.finfo(float).tiny))


def kabsch_unchecked(
    P: np.ndarray, Q: np.ndarray, w: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`kabsch` without argument checks (inner loops); stacks of sets are allowed.

    ``P`` and ``Q`` are (..., n, 3), ``w`` (..., n) or None.
    """
    if w is None:
        w = np.ones(P.shape[:-1])
    w = w / w.sum(axis=-1, keepdims=True)
    p_bar = np.einsum("...n,...nd->...d", w, P)
    q_bar = np.einsum("...n,...nd->...d", w, Q)
    H = np.einsum("...n,...ni,...nj->...ij", w, P - p_bar[..., None, :], Q - q_bar[..., None, :])
    U, _, Vt = np.linalg.svd(H)
    V = np.swapaxes(Vt, -1, -2)
    D = np.zeros(H.shape)
    D[..., 0, 0] = 1.0
    D[..., 1, 1] = 1.0
    D[..., 2, 2] = np.sign(np.linalg.det(V @ np.swapaxes(U, -1, -2)))
    D[..., 2, 2] = np.where(D[..., 2, 2] == 0, 1.0, D[..., 2, 2])
    R = V @ D @ np.swapaxes(U, -1, -2)
    t = q_bar - np.einsum("...ij,...j->...i", R, p_bar)
    return R, t


def kabsch(P: Any, Q: Any, w: Any = None) -> tuple[np.ndarray, np.ndarray]:
    r"""Weighted least-squares rigid transform.

    .. math:: \min_{R \in SO(3),\, t} \sum_i w_i \|R p_i + t - q_i\|^2

    .. math:: \bar p = \sum_i \hat w_i p_i,\ \bar q = \sum_i \hat w_i q_i,\quad
              H = \sum_i \hat w_i (p_i - \bar p)(q_i - \bar q)^\top = U \Sigma V^\top,

    .. math:: R = V \operatorname{diag}(1, 1, \det(V U^\top))\, U^\top, \qquad t = \bar q - R \bar p

    with :math:`\hat w = w / \sum w`; R is always a proper rotation (det R = +1), also for planar
    or mirrored configurations. Weights are scale-invariant.

    Raises:
        ValueError: shapes differ, fewer than 3 points, non-finite values, negative weights, or
            the weighted source points are collinear (the rotation is then not determined).
    """
    P = as_points(P, "P", "kabsch", min_rows=3)
    Q = as_points(Q, "Q", "kabsch", min_rows=3)
    if P.shape != Q.shape:
        raise param_error("Q", "kabsch", f"of the shape of P, {P.shape}", Described(Q.shape))
    if w is not None:
        w = np.asarray(w)
        if w.dtype.kind not in "biuf":
            raise param_error(
                "w", "kabsch", "numeric", Described(f"dtype {w.dtype}"), cls=TypeError
            )
        w = w.astype(np.float64)
        if w.shape != (len(P),) or not np.isfinite(w).all() or (w < 0).any() or w.sum() <= 0:
            raise param_error(
                "w", "kabsch", f"finite non-negative weights of shape ({len(P)},), not all 0", w
            )
    if is_degenerate(P, w):
        raise param_error(
            "P", "kabsch", "at least 3 non-collinear weighted points", Described("collinear points")
        )
    return kabsch_unchecked(P, Q, w)


def spatial_distribution_score(
    P_all: Any, inlier_mask: Any, voxel_size: float | None = None
) -> float:
    r"""How evenly an inlier set covers the space the correspondences occupy, in [0, 1].

    Voxelise the source points of all N correspondences (voxel size v, default
    diag(bbox(P_all)) / 10); V_all = occupied voxels, V_I = voxels holding inliers, c_j = inliers
    in voxel j. Then

    .. math:: \mathrm{cov} = \frac{|V_I|}{|V_{all}|},\quad
              \mathrm{unif} = \frac{-\sum_j \pi_j \log \pi_j}{\log |V_I|},\ \pi_j = c_j / \sum c,
              \quad \mathrm{SDS} = \sqrt{\mathrm{cov} \cdot \mathrm{unif}}

    with unif = 0 when |V_I| < 2. A dense cluster of consistent wrong matches in one small region
    scores 0; inliers spread evenly over the overlap score near 1.
    """
    P = as_points(P_all, "P_all", "spatial_distribution_score")
    mask = np.asarray(inlier_mask)
    if mask.dtype != bool or mask.shape != (len(P),):
        raise param_error(
            "inlier_mask",
            "spatial_distribution_score",
            f"a boolean array of shape ({len(P)},)",
            Described(f"dtype {mask.dtype}, shape {mask.shape}"),
        )
    if voxel_size is None:
        diag = float(np.linalg.norm(P.max(axis=0) - P.min(axis=0)))
        voxel_size = diag / 10 if diag > 0 else 1.0
    voxel_size = check_positive(voxel_size, "voxel_size", "spatial_distribution_score")
    keys = np.floor((P - P.min(axis=0)) / voxel_size).astype(np.int64)
    n_all = len(np.unique(keys, axis=0))
    if not mask.any():
        return 0.0
    _, counts = np.unique(keys[mask], axis=0, return_counts=True)
    if len(counts) < 2:
        return 0.0
    pi = counts / counts.sum()
    uniformity = float(-(pi * np.log(pi)).sum() / np.log(len(counts)))
    coverage = len(counts) / n_all
    return float(np.sqrt(coverage * min(uniformity, 1.0)))
