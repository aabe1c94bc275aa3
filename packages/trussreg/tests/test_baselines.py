import numpy as np
import pytest

from paperkit.testing import assert_param_error
from trussreg import (
    kcore_registration,
    make_synthetic_pair,
    maximal_clique_registration,
    ransac,
    registration_metrics,
    spectral_registration,
)

BASELINES = [ransac, kcore_registration, spectral_registration, maximal_clique_registration]


@pytest.fixture(scope="module")
def pair():
    return make_synthetic_pair(n_corr=400, outlier_ratio=0.8, seed=3)


@pytest.mark.parametrize("method", BASELINES)
def test_baselines_register_an_easy_pair(pair, method):
    res = method(pair["P"], pair["Q"], tau=0.1)
    assert res.success and res.seconds > 0
    assert registration_metrics(res.R, res.t, pair["R_gt"], pair["t_gt"])["success"]
    assert res.inliers.shape == (400,)


def test_ransac_seeded(pair):
    a = ransac(pair["P"], pair["Q"], iters=300, seed=7)
    b = ransac(pair["P"], pair["Q"], iters=300, seed=7)
    assert np.array_equal(a.R, b.R) and np.array_equal(a.inliers, b.inliers)


def test_ransac_stops_early_at_low_outlier_ratio():
    easy = make_synthetic_pair(n_corr=300, outlier_ratio=0.2, seed=0)
    fast = ransac(easy["P"], easy["Q"], iters=200_000)
    assert fast.success and fast.seconds < 5.0  # 200k samples would take far longer


def test_failure_is_reported_not_hidden():
    rng = np.random.default_rng(0)
    P, Q = rng.uniform(0, 5, (50, 3)), rng.uniform(0, 5, (50, 3))
    res = kcore_registration(P, Q, tau=1e-9)
    assert not res.success and np.array_equal(res.R, np.eye(3))


def test_bad_inputs(pair):
    P, Q = pair["P"], pair["Q"]
    assert_param_error(ransac, P, Q, iters=0, param="iters")
    assert_param_error(ransac, P, Q, confidence=1.0, param="confidence")
    assert_param_error(maximal_clique_registration, P, Q, m=400, param="m")
    assert_param_error(spectral_registration, P[:2], Q[:2], param="P")
    assert_param_error(kcore_registration, P, Q, tau=0, param="tau")
