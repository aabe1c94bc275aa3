"""Rigid fitting (weighted Kabsch) and the spatial distribution score of an inlier set."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import Described, check_array, check_real, describe, param_error

__all__ = [
    "is_degenerate",
    "kabsch",
    "kabsch_unchecked",
    "default_voxel",
    "point_pair",
    "points",
    "sds_unchecked",
    "spatial_distribution_score",
]

#: Centred point sets whose second singular value is below this fraction of the first are
#: treated as collinear: the rotation about their line is not determined.
COLLINEAR_RTOL = 1e-9


def points(
    name: str,
    owner: str,
    value: Any,
    *,
    dims: dict | None = None,
    label: str = "N",
    nonempty: bool = True,
) -> np.ndarray:
    """A finite (n, 3) array of real numbers as float64 (integers are cast; NaN, inf refused)."""
    array = check_array(name, owner, value, shape=(label, 3), dims=dims, nonempty=nonempty)
    return array.astype(np.float64)


def point_pair(owner: str, P: Any, Q: Any, *, min_points: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Source and target points of N >= ``min_points`` correspondences, each (N, 3)."""
    dims: dict = {}
    P = points("P", owner, P, dims=dims)
    if len(P) < min_points:
        expected = f"at least {min_points} points (one per correspondence)"
        raise param_error("P", owner, expected, describe(P))
    return P, points("Q", owner, Q, dims=dims)


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

    Shapes:
        P, Q: (N, 3) source and target points, N >= 3 (integers are cast to float64).
        w: (N,) non-negative weights, not all 0, or None (equal weights).
        returns: ``(R, t)``, (3, 3) and (3,).

    Raises:
        ValueError: shapes differ, fewer than 3 points, NaN or inf, negative weights, or the
            weighted source points are collinear (the rotation is then not determined).

    >>> P = np.eye(3)
    >>> R, t = kabsch(P, P + [1.0, 2.0, 3.0])
    >>> bool(np.allclose(R, np.eye(3))), np.round(t, 12).tolist()
    (True, [1.0, 2.0, 3.0])
    """
    P, Q = point_pair("kabsch", P, Q)
    if w is not None:
        w = check_array("w", "kabsch", w, shape=(len(P),)).astype(np.float64)
        if (w < 0).any() or w.sum() <= 0:
            expected = "non-negative weights, not all 0"
            raise param_error(
                "w", "kabsch", expected, Described(f"weights in [{w.min():g}, {w.max():g}]")
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

    Shapes:
        P_all: (N, 3) source points of every correspondence (NaN and inf refused).
        inlier_mask: (N,) boolean.
    """
    owner = "spatial_distribution_score"
    dims: dict = {}
    P = points("P_all", owner, P_all, dims=dims)
    mask = check_array("inlier_mask", owner, inlier_mask, shape=("N",), dims=dims, kind="bool")
    if voxel_size is None:
        voxel_size = default_voxel(P)
    voxel_size = check_real("voxel_size", owner, voxel_size, low=0, low_open=True)
    return sds_unchecked(P, mask, voxel_size)


def default_voxel(P: np.ndarray) -> float:
    """diag(bbox(P)) / 10, the default voxel of :func:`spatial_distribution_score` (1 for one
    point)."""
    diag = float(np.linalg.norm(P.max(axis=0) - P.min(axis=0)))
    return diag / 10 if diag > 0 else 1.0


def sds_unchecked(P: np.ndarray, mask: np.ndarray, voxel_size: float | None = None) -> float:
    """:func:`spatial_distribution_score` without argument checks (scoring loops)."""
    voxel_size = default_voxel(P) if voxel_size is None else voxel_size
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
