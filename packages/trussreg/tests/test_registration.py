import numpy as np
import pytest

from paperkit.testing import assert_close, assert_param_error
from trussreg import (
    TrussRegistration,
    candidate_sets,
    inlier_scores,
    make_synthetic_pair,
    registration_metrics,
)


def test_exact_transform_without_outliers_or_noise():
    pair = make_synthetic_pair(n_corr=300, outlier_ratio=0.0, noise=0.0, seed=3)
    reg = TrussRegistration().fit(pair["P"], pair["Q"])
    metrics = registration_metrics(reg.R_, reg.t_, pair["R_gt"], pair["t_gt"])
    assert reg.success_ and metrics["re_deg"] < 1e-6 and metrics["te"] < 1e-8
    assert reg.inliers_.all()
    assert_close(reg.transform(pair["P"]), pair["Q"], rtol=0, atol=1e-9)


def test_high_outlier_ratio_recovers_inliers():
    pair = make_synthetic_pair(n_corr=1000, outlier_ratio=0.95, seed=0)
    reg = TrussRegistration().fit(pair["P"], pair["Q"])
    assert registration_metrics(reg.R_, reg.t_, pair["R_gt"], pair["t_gt"])["success"]
    scores = inlier_scores(reg.inliers_, pair["inlier_gt"])
    assert scores["recall"] > 0.95 and scores["precision"] > 0.9
    assert reg.k_max_ >= 40 and reg.n_hypotheses_ >= 1
    assert set(reg.timings_) >= {"graph", "sample", "truss", "hypotheses", "total"}


def test_invariant_to_permuting_correspondences():
    pair = make_synthetic_pair(n_corr=400, outlier_ratio=0.8, seed=1)
    perm = np.random.default_rng(0).permutation(400)
    a = TrussRegistration(m=500).fit(pair["P"], pair["Q"])
    b = TrussRegistration(m=500).fit(pair["P"][perm], pair["Q"][perm])
    assert_close(a.R_, b.R_, rtol=0, atol=1e-10)
    assert_close(a.t_, b.t_, rtol=0, atol=1e-10)
    assert np.array_equal(a.inliers_[perm], b.inliers_)


def test_deterministic():
    pair = make_synthetic_pair(n_corr=500, outlier_ratio=0.9, seed=2)
    a = TrussRegistration().fit(pair["P"], pair["Q"])
    b = TrussRegistration().fit(pair["P"], pair["Q"])
    assert np.array_equal(a.R_, b.R_) and np.array_equal(a.inliers_, b.inliers_)


@pytest.mark.parametrize("seed", [0, 2])
def test_sds_rejects_a_dense_wrong_cluster(seed):
    """100 clustered wrong matches in one 0.3 m ball against 80 spread-out inliers: the inlier
    score alone picks the cluster; the spatial distribution score picks the true motion."""
    pair = make_synthetic_pair(
        n_corr=1000, outlier_ratio=0.92, clustered_outlier_frac=0.1, seed=seed
    )

    def success(sds_weight):
        reg = TrussRegistration(sds_weight=sds_weight).fit(pair["P"], pair["Q"])
        return registration_metrics(reg.R_, reg.t_, pair["R_gt"], pair["t_gt"])["success"]

    assert success(1.0)
    assert not success(0.0)


def test_core_structure_ablation_runs_the_same_pipeline():
    pair = make_synthetic_pair(n_corr=500, outlier_ratio=0.8, seed=5)
    reg = TrussRegistration(structure="core").fit(pair["P"], pair["Q"])
    assert registration_metrics(reg.R_, reg.t_, pair["R_gt"], pair["t_gt"])["success"]


def test_no_hypothesis_returns_identity_and_failure():
    rng = np.random.default_rng(0)
    P = rng.uniform(0, 5, (60, 3))
    Q = rng.uniform(0, 5, (60, 3))  # pure outliers, tiny threshold: no triangles
    reg = TrussRegistration(tau_c=1e-6).fit(P, Q)
    assert not reg.success_
    assert np.array_equal(reg.R_, np.eye(3)) and not reg.inliers_.any()


def test_candidate_sets_from_levels():
    edges = np.array([[0, 1], [0, 2], [1, 2], [2, 3], [3, 4], [3, 5], [4, 5]])
    levels = np.array([3, 3, 3, 2, 3, 3, 3])
    sets = candidate_sets(edges, levels, 6, delta_k=3, n_seeds=6)
    assert [s.tolist() for s in sets] == [[0, 1, 2], [3, 4, 5]]


def test_bad_inputs():
    P = np.random.default_rng(0).uniform(size=(10, 3))
    reg = TrussRegistration()
    assert_param_error(reg.fit, P[:2], P[:2], param="P")
    assert_param_error(reg.fit, P, P[:9], param="Q")
    bad = P.copy()
    bad[0, 0] = np.inf
    assert_param_error(reg.fit, P, bad, param="Q")
    assert_param_error(reg.fit, P.astype(object), P, param="P", exc=TypeError)
    line = np.outer(np.arange(10.0), [1, 0, 0])
    assert_param_error(reg.fit, line, line, param="P")
    assert_param_error(TrussRegistration, tau_c=0, param="tau_c")
    assert_param_error(TrussRegistration, tau_in=-1.0, param="tau_in")
    assert_param_error(TrussRegistration, m=2, param="m")
    assert_param_error(TrussRegistration, m=2.5, param="m", exc=TypeError)
    assert_param_error(TrussRegistration, backend="cupy", param="backend")
    assert_param_error(TrussRegistration, structure="clique", param="structure")
    assert_param_error(TrussRegistration, sds_weight=-1.0, param="sds_weight")
    with pytest.raises(RuntimeError, match="not fitted"):
        TrussRegistration().transform(P)
