import numpy as np
import pytest

from paperkit.testing import assert_close, assert_param_error
from trussreg import kabsch, spatial_distribution_score


@pytest.mark.parametrize("seed", range(5))
def test_kabsch_recovers_random_motion(rigid, seed):
    R, t = rigid(seed)
    P = np.random.default_rng(seed).uniform(-1, 1, (30, 3))
    R_hat, t_hat = kabsch(P, P @ R.T + t)
    assert_close(R_hat, R, rtol=0, atol=1e-10)
    assert_close(t_hat, t, rtol=0, atol=1e-10)


def test_kabsch_proper_rotation_for_planar_and_mirrored(rigid):
    rng = np.random.default_rng(0)
    planar = np.column_stack([rng.uniform(-1, 1, (20, 2)), 1e-9 * rng.standard_normal(20)])
    R, t = rigid(3)
    R_hat, t_hat = kabsch(planar, planar @ R.T + t)
    assert np.linalg.det(R_hat) == pytest.approx(1.0, abs=1e-12)
    assert_close(planar @ R_hat.T + t_hat, planar @ R.T + t, rtol=0, atol=1e-8)
    P = rng.uniform(-1, 1, (20, 3))
    mirrored = P * np.array([1, 1, -1])  # the best orthogonal fit is a reflection
    R_m, _ = kabsch(P, mirrored)
    assert np.linalg.det(R_m) == pytest.approx(1.0, abs=1e-12)
    assert_close(R_m @ R_m.T, np.eye(3), rtol=0, atol=1e-12)


def test_kabsch_weights_scale_invariant_and_select(rigid):
    rng = np.random.default_rng(1)
    P = rng.uniform(-1, 1, (12, 3))
    R, t = rigid(4)
    Q = P @ R.T + t
    Q[8:] += rng.uniform(-1, 1, (4, 3))  # corrupted rows get zero weight
    w = np.r_[rng.uniform(0.5, 2, 8), np.zeros(4)]
    R1, t1 = kabsch(P, Q, w)
    R2, t2 = kabsch(P, Q, 1000 * w)
    assert_close(R1, R, rtol=0, atol=1e-10)
    assert_close(R1, R2, rtol=0, atol=1e-13)
    assert_close(t1, t2, rtol=0, atol=1e-13)


def test_kabsch_bad_inputs():
    P = np.random.default_rng(0).uniform(size=(5, 3))
    assert_param_error(kabsch, P[:2], P[:2], param="P")
    assert_param_error(kabsch, P, P[:4], param="Q")
    line = np.outer(np.arange(5.0), [1, 2, 3])
    assert_param_error(kabsch, line, line, param="P")  # collinear: rotation undetermined
    assert_param_error(kabsch, P, P, w=-np.ones(5), param="w")
    assert_param_error(kabsch, P, P, w=np.ones(4), param="w")
    assert_param_error(kabsch, P.astype(str), P, param="P", exc=TypeError)


def grid(n=4):
    return (
        np.stack(np.meshgrid(*[np.arange(n)] * 3, indexing="ij"), -1).reshape(-1, 3).astype(float)
    )


def test_sds_is_one_for_even_full_coverage():
    P = grid()
    assert spatial_distribution_score(P, np.ones(len(P), bool), voxel_size=1.0) == pytest.approx(1)


def test_sds_zero_when_all_inliers_share_a_voxel():
    P = grid()
    mask = np.all(P == 0, axis=1)
    assert spatial_distribution_score(P, mask, voxel_size=1.0) == 0.0
    assert spatial_distribution_score(P, np.zeros(len(P), bool), voxel_size=1.0) == 0.0


def test_sds_drops_when_half_the_voxels_lose_their_inliers():
    P = grid()
    full = spatial_distribution_score(P, np.ones(len(P), bool), voxel_size=1.0)
    half = spatial_distribution_score(P, P[:, 0] < 2, voxel_size=1.0)
    assert half < full
    assert half == pytest.approx(np.sqrt(0.5))  # coverage 1/2, uniformity 1


def test_sds_in_unit_interval_on_random_masks():
    rng = np.random.default_rng(0)
    P = rng.uniform(0, 3, (300, 3))
    for _ in range(20):
        s = spatial_distribution_score(P, rng.random(300) < rng.random())
        assert 0.0 <= s <= 1.0


def test_sds_uneven_counts_lower_uniformity():
    P = grid(2)
    even = np.ones(len(P), bool)
    heavy = np.concatenate([P, np.repeat(P[:1], 20, axis=0)])
    mask = np.ones(len(heavy), bool)
    assert spatial_distribution_score(heavy, mask, 1.0) < spatial_distribution_score(P, even, 1.0)


def test_sds_bad_inputs():
    P = grid(2)
    assert_param_error(spatial_distribution_score, P, np.ones(3, bool), param="inlier_mask")
    assert_param_error(
        spatial_distribution_score, P, np.ones(8), param="inlier_mask", exc=TypeError
    )
    assert_param_error(
        spatial_distribution_score, P, np.ones(8, bool), voxel_size=0.0, param="voxel_size"
    )
