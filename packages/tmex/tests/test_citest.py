"""Checks of the GCM (Shah & Peters 2020, as used for T-MEX in arXiv 2505.17708, Sec. 4)."""

import numpy as np
import pytest
from scipy import stats

from tmex import CITestResult, gcm_test, kci_test


def _naive_t(x, y, z):
    """GCM statistics by hand: lstsq residuals on [1, z], products, √n mean / sd (ddof 0)."""
    A = np.column_stack([np.ones(len(z)), z])
    rx = x - A @ np.linalg.lstsq(A, x, rcond=None)[0]
    ry = y - A @ np.linalg.lstsq(A, y, rcond=None)[0]
    prod = (rx[:, :, None] * ry[:, None, :]).reshape(len(x), -1)
    return np.sqrt(len(x)) * prod.mean(0) / prod.std(0)


def test_linear_gcm_statistic_matches_naive_numpy():
    # check 1: tolerance 1e-10
    rng = np.random.default_rng(0)
    z = rng.standard_normal((300, 3))
    x = z[:, :1] + 0.3 * rng.standard_normal((300, 1))
    y = np.column_stack([z[:, 0] + x[:, 0], z[:, 1]]) + rng.standard_normal((300, 2))
    t = _naive_t(x, y, z)
    got = gcm_test(x, y, z, rng=0)
    assert abs(got.statistic - np.abs(t).max()) < 1e-10
    quad = gcm_test(x, y[:, :1], z, test_type="quadratic")
    assert abs(quad.statistic - t[0] ** 2) < 1e-10
    assert abs(quad.pvalue - 2 * stats.norm.sf(abs(t[0]))) < 1e-10


def test_calibration_under_the_null():
    # check 2: 300 p-values, KS against U(0, 1) p > 0.01, rejection rate in [0.02, 0.08]
    rng = np.random.default_rng(1)
    pvals = []
    for _ in range(300):
        z = rng.standard_normal((200, 2))
        x = z @ [1.0, -0.5] + rng.standard_normal(200)
        y = z @ [0.3, 0.8] + rng.standard_normal(200)
        pvals.append(gcm_test(x, y, z, B=199, rng=rng).pvalue)
    pvals = np.array(pvals)
    assert stats.kstest(pvals, "uniform").pvalue > 0.01
    assert 0.02 <= np.mean(pvals < 0.05) <= 0.08


def test_power_against_dependence():
    # check 3: Y = X + 0.5 noise given Z, n = 500 → p < 1e-6 (normal-approximation test,
    # the bootstrap's smallest p-value being 1/(B+1))
    rng = np.random.default_rng(2)
    z = rng.standard_normal((500, 2))
    x = z.sum(1) + rng.standard_normal(500)
    y = x + 0.5 * rng.standard_normal(500)
    assert gcm_test(x, y, z, test_type="quadratic").pvalue < 1e-6
    assert gcm_test(x, y, z, rng=0).pvalue == 1 / 500


def test_max_test_with_one_column_is_the_normal_test():
    # check 4: |diff| < 0.035 with B = 2000 (bootstrap SE ≤ 0.011)
    rng = np.random.default_rng(3)
    for shift in (0.0, 0.08, 0.12):
        z = rng.standard_normal((400, 1))
        x = z[:, 0] + rng.standard_normal(400)
        y = z[:, 0] + shift * x + rng.standard_normal(400)
        boot = gcm_test(x, y, z, B=2000, rng=rng).pvalue
        normal = 2 * stats.norm.sf(abs(_naive_t(x[:, None], y[:, None], z)[0]))
        assert abs(boot - normal) < 0.035


def test_degenerate_target_gives_p_one_not_nan():
    # check 4: Ẑ equal to a conditioning variable → p = 1
    rng = np.random.default_rng(4)
    z = rng.standard_normal((200, 2))
    x = rng.standard_normal(200)
    for test_type in ("max", "quadratic"):
        out = gcm_test(x, 3 * z[:, 1] - 1, z, test_type=test_type, rng=0)
        assert out.pvalue == 1.0 and out.statistic == 0.0
    # one degenerate column in a block: the live column still carries the evidence
    y = np.column_stack([z[:, 0], x + 0.1 * rng.standard_normal(200)])
    assert gcm_test(x, y, z, rng=0).pvalue < 0.01
    constant = gcm_test(x, np.ones(200), None, rng=0)
    assert constant.pvalue == 1.0


@pytest.mark.parametrize("regressor", ["krr", "rf"])
def test_nonlinear_regressors_remove_a_nonlinear_confounder(regressor):
    rng = np.random.default_rng(5)
    z = rng.uniform(-2, 2, (300, 1))
    x = np.sin(2 * z[:, 0]) + 0.3 * rng.standard_normal(300)
    y = np.sin(2 * z[:, 0]) + 0.3 * rng.standard_normal(300)
    assert gcm_test(x, y, z, regressor="linear", rng=0).pvalue < 0.01  # misspecified
    assert gcm_test(x, y, z, regressor=regressor, rng=0).pvalue > 0.01
    assert gcm_test(x, x + 0.3 * y, z, regressor=regressor, rng=0).pvalue < 0.01


def test_sklearn_regressor_and_result_type():
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(6)
    z = rng.standard_normal((200, 2))
    x, y = z[:, 0] + rng.standard_normal(200), z[:, 0] + rng.standard_normal(200)
    out = gcm_test(x, y, z, regressor=Ridge(alpha=1e-8), rng=0)
    ref = gcm_test(x, y, z, regressor="linear", rng=0)
    assert isinstance(out, CITestResult) and out.method == "gcm-max-Ridge"
    assert abs(out.statistic - ref.statistic) < 1e-6


def test_kci_agrees_with_gcm_on_clear_cases():
    # check 10 (needs the optional causal-learn)
    pytest.importorskip("causallearn")
    rng = np.random.default_rng(7)
    z = rng.standard_normal((300, 1))
    x = z[:, 0] + rng.standard_normal(300)
    assert kci_test(x, z[:, 0] + rng.standard_normal(300), z).pvalue > 0.05
    assert kci_test(x, x + 0.3 * rng.standard_normal(300), z).pvalue < 0.01


def test_kci_checks_arguments_before_importing():
    with pytest.raises(ValueError, match="'Y'"):
        kci_test(np.zeros(5), np.zeros(4))
