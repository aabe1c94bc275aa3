"""Scoring transformation hypotheses on all correspondences, and least-squares refinement."""

from __future__ import annotations

import numpy as np

from trussreg.geometry import default_voxel, is_degenerate, kabsch_unchecked, sds_unchecked

__all__ = ["RESIDUAL_BLOCK", "mae_scores", "refine", "residuals", "score_hypotheses"]

#: Hypotheses per block when computing residuals (bounds memory at RESIDUAL_BLOCK x N).
RESIDUAL_BLOCK = 1024


def residuals(R: np.ndarray, t: np.ndarray, P: np.ndarray, Q: np.ndarray) -> np.ndarray:
    r"""r_i = ||R p_i + t - q_i|| for one (R (3, 3), t (3,)) or a stack (H, 3, 3), (H, 3)."""
    diff = np.swapaxes(R @ P.T, -1, -2) + t[..., None, :] - Q
    return np.sqrt((diff * diff).sum(axis=-1))


def mae_scores(r: np.ndarray, tau_in: float) -> np.ndarray:
    r"""The MAE-style base score :math:`\sum_{i : r_i < \tau} (\tau - r_i)/\tau` (last axis)."""
    return np.where(r < tau_in, (tau_in - r) / tau_in, 0.0).sum(axis=-1)


def score_hypotheses(
    Rs: np.ndarray,
    ts: np.ndarray,
    P: np.ndarray,
    Q: np.ndarray,
    tau_in: float,
    sds_weight: float,
    voxel_size: float | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Scores base * (1 + lambda * SDS), inlier counts and SDS of every hypothesis (H,)."""
    base, counts, sds = np.zeros(len(Rs)), np.zeros(len(Rs), dtype=np.int64), np.zeros(len(Rs))
    voxel = default_voxel(P) if voxel_size is None else voxel_size
    for start in range(0, len(Rs), RESIDUAL_BLOCK):
        block = slice(start, start + RESIDUAL_BLOCK)
        r = residuals(Rs[block], ts[block], P, Q)
        base[block] = mae_scores(r, tau_in)
        inliers = r < tau_in
        counts[block] = inliers.sum(axis=1)
        if sds_weight != 0:
            sds[block] = [sds_unchecked(P, m, voxel) for m in inliers]
    return base * (1 + sds_weight * sds), counts, sds


def refine(
    R: np.ndarray, t: np.ndarray, P: np.ndarray, Q: np.ndarray, tau_in: float, iters: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Re-fit (R, t) by least squares on its inliers {r_i < tau_in}, ``iters`` times.

    Stops early when the inlier set is unchanged or degenerate; returns (R, t, inlier mask).
    """
    inliers = residuals(R, t, P, Q) < tau_in
    for _ in range(iters):
        if is_degenerate(P[inliers]):
            break
        R, t = kabsch_unchecked(P[inliers], Q[inliers])
        updated = residuals(R, t, P, Q) < tau_in
        if np.array_equal(updated, inliers):
            break
        inliers = updated
    return R, t, inliers
