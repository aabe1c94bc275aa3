import numpy as np
import pytest

from paperkit.testing import assert_close, assert_param_error
from trussreg import inlier_scores, make_synthetic_pair, registration_metrics
from trussreg.data import SCENES, sample_scene
from trussreg.scoring import residuals


@pytest.mark.parametrize("scene", SCENES)
def test_pair_counts_and_ground_truth(scene):
    pair = make_synthetic_pair(
        n_corr=400, outlier_ratio=0.8, clustered_outlier_frac=0.1, scene=scene, seed=1
    )
    assert pair["P"].shape == pair["Q"].shape == (400, 3)
    assert pair["inlier_gt"].sum() == 80
    assert_close(pair["R_gt"] @ pair["R_gt"].T, np.eye(3), rtol=0, atol=1e-12)
    assert np.linalg.det(pair["R_gt"]) == pytest.approx(1.0)
    assert np.linalg.norm(pair["t_gt"]) <= 2.0
    r = residuals(pair["R_gt"], pair["t_gt"], pair["P"], pair["Q"])
    assert np.all(r[pair["inlier_gt"]] < 0.06)  # 0.01 m noise: |noise| < 6 sigma
    assert np.mean(r[~pair["inlier_gt"]] < 0.1) < 0.05


def test_clustered_outliers_follow_one_wrong_motion_in_a_small_ball():
    from trussreg import compatibility_graph, kabsch

    pair = make_synthetic_pair(
        n_corr=500, outlier_ratio=0.9, clustered_outlier_frac=0.1, noise=0.0, seed=2
    )
    wrong = np.flatnonzero(~pair["inlier_gt"])
    P, Q = pair["P"][wrong], pair["Q"][wrong]
    # noiseless: the clustered block is a clique of exactly length-preserving pairs
    degree = np.asarray((compatibility_graph(P, Q, 1e-9) != 0).sum(axis=1)).ravel()
    cluster = degree == 49
    assert cluster.sum() == 50
    assert np.linalg.norm(P[cluster] - P[cluster].mean(axis=0), axis=1).max() < 0.3 * 2
    R, t = kabsch(P[cluster], Q[cluster])
    assert residuals(R, t, P[cluster], Q[cluster]).max() < 1e-9
    assert not registration_metrics(R, t, pair["R_gt"], pair["t_gt"], 1.0, 0.01)["success"]


def test_seeded_and_shuffled():
    a = make_synthetic_pair(n_corr=300, seed=5)
    b = make_synthetic_pair(n_corr=300, seed=5)
    assert np.array_equal(a["P"], b["P"]) and np.array_equal(a["Q"], b["Q"])
    assert not a["inlier_gt"][:30].all()  # inliers are not all first


def test_scene_points_lie_on_their_surfaces():
    rng = np.random.default_rng(0)
    sphere = sample_scene("sphere", 100, rng)
    assert_close(np.linalg.norm(sphere, axis=1), np.full(100, 1.5), rtol=0, atol=1e-12)
    room = sample_scene("room", 200, rng)
    on_face = np.isclose(room, 0) | np.isclose(room, [5.0, 4.0, 2.5])
    assert on_face.any(axis=1).all()


def test_registration_metrics():
    from scipy.spatial.transform import Rotation

    R = Rotation.from_euler("z", 10, degrees=True).as_matrix()
    m = registration_metrics(R, np.array([0.1, 0, 0]), np.eye(3), np.zeros(3))
    assert m["re_deg"] == pytest.approx(10.0) and m["te"] == pytest.approx(0.1)
    assert m["success"]
    assert not registration_metrics(R, np.zeros(3), np.eye(3), np.zeros(3), re_thresh_deg=5)[
        "success"
    ]


def test_inlier_scores():
    truth = np.array([1, 1, 0, 0], bool)
    s = inlier_scores(np.array([1, 0, 1, 0], bool), truth)
    assert s == {"precision": 0.5, "recall": 0.5, "f1": 0.5}


def test_bad_inputs():
    assert_param_error(make_synthetic_pair, n_corr=2, param="n_corr")
    assert_param_error(make_synthetic_pair, outlier_ratio=1.5, param="outlier_ratio")
    assert_param_error(make_synthetic_pair, overlap=0.0, param="overlap")
    assert_param_error(make_synthetic_pair, noise=-1.0, param="noise")
    assert_param_error(make_synthetic_pair, scene="cave", param="scene")
    assert_param_error(
        make_synthetic_pair,
        outlier_ratio=0.5,
        clustered_outlier_frac=0.6,
        param="clustered_outlier_frac",
    )
