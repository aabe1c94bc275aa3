import numpy as np
import pytest

from paperkit.testing import assert_param_error
from portrouter import dual_objective, relaxed_assignment, resolve_alpha, solve_dual


def _instance(rng, L=40, M=4):
    d = rng.random((L, M))
    g = rng.uniform(0.2, 1.0, size=(L, M)) * np.linspace(0.5, 2.0, M)
    return d, g, np.full(M, 0.2 * L / M)


def test_objective_equals_a_double_loop():
    rng = np.random.default_rng(0)
    d, g, B = _instance(rng)
    gamma, eps, alpha = rng.random(4), 0.3, 0.7
    for skip in (False, True):
        ref = eps * sum(gamma[i] * B[i] for i in range(4))
        for j in range(len(d)):
            best = max(alpha * d[j, i] - gamma[i] * g[j, i] for i in range(4))
            ref += max(best, 0.0) if skip else best
        assert dual_objective(gamma, d, g, B, eps, alpha, skip) == pytest.approx(ref, rel=1e-12)


def test_lp_minimises_f():
    rng = np.random.default_rng(1)
    d, g, B = _instance(rng)
    eps, alpha = 0.5, 1.0
    gamma_lp = solve_dual(d, g, B, eps, alpha, solver="lp")
    gamma_bfgs = solve_dual(d, g, B, eps, alpha, solver="lbfgsb")
    f_lp = dual_objective(gamma_lp, d, g, B, eps, alpha)
    assert np.all((gamma_lp >= 0) & (gamma_lp <= 1))
    assert f_lp <= dual_objective(gamma_bfgs, d, g, B, eps, alpha) + 1e-9
    for gamma in rng.random((100, 4)):
        assert f_lp <= dual_objective(gamma, d, g, B, eps, alpha) + 1e-9


def test_strong_and_weak_duality_with_the_assignment_lp():
    """ε = 1, true features, skip form: F⁺ ≥ α LP* for every γ ≥ 0, with equality at the LP's γ."""
    rng = np.random.default_rng(2)
    d, g, B = _instance(rng, L=30, M=3)
    alpha = 0.5  # keeps the optimal prices inside the box [0, 1]
    lp_value, x = relaxed_assignment(d, g, B)
    assert np.all(x.sum(axis=1) <= 1 + 1e-9) and np.all((g * x).sum(axis=0) <= B + 1e-9)
    gamma = solve_dual(d, g, B, 1.0, alpha, solver="lp", allow_skip=True)
    assert gamma.max() < 1 - 1e-6  # the box bound is inactive
    f_star = dual_objective(gamma, d, g, B, 1.0, alpha, allow_skip=True)
    assert f_star == pytest.approx(alpha * lp_value, abs=1e-6)
    for other in rng.random((50, 3)) * 2:
        assert (
            dual_objective(other, d, g, B, 1.0, alpha, allow_skip=True) >= alpha * lp_value - 1e-9
        )


def test_alpha_auto_puts_quality_in_cost_units():
    d, g = np.full((5, 2), 0.5), np.full((5, 2), 2e-4)
    assert resolve_alpha("auto", d, g) == pytest.approx(4e-4)
    assert resolve_alpha(1e-4, d, g) == 1e-4
    assert_param_error(lambda: resolve_alpha("median", d, g), param="alpha")
    assert_param_error(lambda: resolve_alpha(-1.0, d, g), param="alpha")


def test_bad_input():
    rng = np.random.default_rng(3)
    d, g, B = _instance(rng, L=5, M=2)
    assert_param_error(lambda: solve_dual(d, g, -B, 0.1, 1.0), param="budgets")
    assert_param_error(lambda: solve_dual(d, g, B, 0.0, 1.0), param="eps")
    assert_param_error(lambda: solve_dual(d, g, B, 1.5, 1.0), param="eps")
    assert_param_error(lambda: solve_dual(d, g[:, :1], B, 0.1, 1.0), param="g_hat")
    assert_param_error(lambda: solve_dual(d, g, B, 0.1, 1.0, solver="adam"), param="solver")
    bad = d.copy()
    bad[0, 0] = np.nan
    assert_param_error(lambda: solve_dual(bad, g, B, 0.1, 1.0), param="d_hat")
