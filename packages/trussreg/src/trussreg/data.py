"""Synthetic, feature-free correspondence sets with controlled outlier ratios.

Points are sampled on procedural surfaces; inlier matches map a source point by the ground-truth
motion (plus Gaussian noise), random outliers pair a source point with an unrelated target-surface
point, and "clustered" outliers are mutually consistent with a wrong motion inside one 0.3 m ball,
the failure mode that the spatial distribution score targets.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.spatial.transform import Rotation

from paperkit import check_choice, check_int, check_memory, check_real, param_error

__all__ = ["SCENES", "make_synthetic_pair", "sample_scene"]

SCENES = ("boxes", "sphere", "room")
CLUSTER_RADIUS = 0.3
#: Scene points sampled per correspondence.
CLOUD_PER_CORRESPONDENCE = 20
#: Bytes the generator holds per scene point: the cloud, its overlap slab, distances, masks.
BYTES_PER_POINT = 64


def _box_surface(rng: np.random.Generator, n: int, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """n points uniform on the surface of the axis-aligned box [lo, hi] (area-weighted faces)."""
    size = hi - lo
    areas = np.array([size[1] * size[2], size[0] * size[2], size[0] * size[1]]).repeat(2)
    face = rng.choice(6, size=n, p=areas / areas.sum())
    pts = lo + rng.random((n, 3)) * size
    axis, side = face // 2, face % 2
    pts[np.arange(n), axis] = np.where(side == 1, hi[axis], lo[axis])
    return pts


def sample_scene(scene: str, n: int, rng: np.random.Generator) -> np.ndarray:
    """n points on a procedural surface: ``"boxes"`` (5 boxes on a 4 m x 4 m floor), ``"room"``
    (floor, walls and ceiling of a 5 m x 4 m x 2.5 m room) or ``"sphere"`` (radius 1.5 m)."""
    scene = check_choice("scene", "sample_scene", scene, SCENES)
    n = check_int("n", "sample_scene", n, low=1)
    if scene == "sphere":
        x = rng.standard_normal((n, 3))
        return 1.5 * x / np.linalg.norm(x, axis=1, keepdims=True)
    if scene == "room":
        return _box_surface(rng, n, np.zeros(3), np.array([5.0, 4.0, 2.5]))
    n_floor = n // 3
    floor = np.column_stack([rng.random((n_floor, 2)) * 4.0, np.zeros(n_floor)])
    centres = np.array([[0.8, 0.8], [2.8, 1.0], [1.5, 2.6], [3.2, 3.1], [0.7, 3.3]])
    sizes = np.array(
        [[0.6, 0.5, 0.8], [0.9, 0.6, 0.5], [0.5, 0.5, 1.2], [0.7, 0.8, 0.6], [0.4, 0.6, 0.4]]
    )
    which = rng.integers(0, 5, n - n_floor)
    boxes = np.empty((n - n_floor, 3))
    for b in range(5):
        idx = np.flatnonzero(which == b)
        lo = np.array([*(centres[b] - sizes[b, :2] / 2), 0.0])
        boxes[idx] = _box_surface(rng, len(idx), lo, lo + sizes[b])
    return np.concatenate([floor, boxes])


def make_synthetic_pair(
    n_corr: int = 2000,
    outlier_ratio: float = 0.9,
    noise: float = 0.01,
    clustered_outlier_frac: float = 0.0,
    scene: str = "boxes",
    overlap: float = 0.6,
    seed: int = 0,
) -> dict[str, Any]:
    r"""N putative correspondences between a scene and its rigidly moved copy.

    Ground truth: R_gt uniform on SO(3), t_gt uniform direction with length U(0, 2) m. The source
    view is the scene; the overlap region is the slab of source points whose x coordinate lies in
    the lowest ``overlap`` fraction. With n_in = round((1 - outlier_ratio) N) and
    n_cl = round(clustered_outlier_frac N):

    - inliers: p in the overlap, q = R_gt p + t_gt + N(0, noise^2 I);
    - clustered outliers: p within 0.3 m of one random source point, q = R' p + t' + noise for one
      wrong motion (R', t') (mutually consistent, so they form a dense clique);
    - the other outliers: p anywhere, q = R_gt x + t_gt for an unrelated scene point x.

    Rows are shuffled. ``n_corr`` is refused when its scene cloud would not fit in memory; NaN
    and inf ratios, noise or overlap are refused.

    Shapes:
        returns: a dict with ``P``, ``Q`` (N, 3), ``R_gt`` (3, 3), ``t_gt`` (3,) and
        ``inlier_gt`` (N,) bool.
    """
    owner = "make_synthetic_pair"
    n_corr = check_int("n_corr", owner, n_corr, low=3)
    cloud_points = CLOUD_PER_CORRESPONDENCE * n_corr
    check_memory("n_corr", owner, n_corr, BYTES_PER_POINT * cloud_points)
    outlier_ratio = check_real("outlier_ratio", owner, outlier_ratio, low=0, high=1)
    noise = check_real("noise", owner, noise, low=0)
    clustered_outlier_frac = check_real(
        "clustered_outlier_frac", owner, clustered_outlier_frac, low=0, high=1
    )
    scene = check_choice("scene", owner, scene, SCENES)
    overlap = check_real("overlap", owner, overlap, low=0, high=1, low_open=True)
    seed = check_int("seed", owner, seed, low=0)
    n_in = int(round((1 - outlier_ratio) * n_corr))
    n_cl = int(round(clustered_outlier_frac * n_corr))
    if n_in + n_cl > n_corr:
        raise param_error(
            "clustered_outlier_frac",
            owner,
            f"at most outlier_ratio = {outlier_ratio}",
            clustered_outlier_frac,
        )
    n_out = n_corr - n_in - n_cl
    rng = np.random.default_rng(seed)
    R_gt = Rotation.random(random_state=rng).as_matrix()
    direction = rng.standard_normal(3)
    t_gt = direction / np.linalg.norm(direction) * rng.uniform(0, 2.0)
    cloud = sample_scene(scene, cloud_points, rng)
    cut = np.quantile(cloud[:, 0], overlap)
    shared = cloud[cloud[:, 0] <= cut]
    p_in = shared[rng.choice(len(shared), n_in, replace=len(shared) < n_in)]
    q_in = p_in @ R_gt.T + t_gt + noise * rng.standard_normal((n_in, 3))
    centre = cloud[rng.integers(len(cloud))]
    ball = cloud[np.linalg.norm(cloud - centre, axis=1) < CLUSTER_RADIUS]
    p_cl = ball[rng.choice(len(ball), n_cl, replace=len(ball) < n_cl)]
    R_wrong = Rotation.random(random_state=rng).as_matrix()
    t_wrong = t_gt + rng.uniform(-1.0, 1.0, 3)
    q_cl = p_cl @ R_wrong.T + t_wrong + noise * rng.standard_normal((n_cl, 3))
    p_out = cloud[rng.integers(0, len(cloud), n_out)]
    q_out = cloud[rng.integers(0, len(cloud), n_out)] @ R_gt.T + t_gt
    P = np.concatenate([p_in, p_cl, p_out])
    Q = np.concatenate([q_in, q_cl, q_out])
    inlier = np.concatenate([np.ones(n_in, bool), np.zeros(n_cl + n_out, bool)])
    order = rng.permutation(n_corr)
    return {"P": P[order], "Q": Q[order], "R_gt": R_gt, "t_gt": t_gt, "inlier_gt": inlier[order]}
