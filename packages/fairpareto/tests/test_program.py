"""The MIFPO program against the exact LP, the closed-form endpoint and the structure the paper
proves: feasibility of the plans, front shape, symmetry, trivial fairness."""

import numpy as np
import pytest

from conftest import make_bins
from fairpareto import MIFPO
from fairpareto.lp import lp_error
from fairpareto.program import closed_form_endpoint, plan_masses, solve_mifpo

GAMMAS = np.array([0.0, 0.3, 0.6, 1.0])


def _fit(bins, gammas, **kw):
    return MIFPO(gammas=gammas, **kw).fit_bins(bins.u, bins.U, bins.v, bins.V, bins.alpha)


@pytest.fixture(scope="module")
def fitted():
    """One random 4 x 4 instance, k = 2, 5 restarts, gamma in {0, 0.3, 0.6, 1}."""
    bins = make_bins(4, 4, seed=3)
    return bins, _fit(bins, GAMMAS, n_restarts=5)


def test_error_front_equals_lp(fitted):
    # for the error, the representation front is the fair-classification LP front (paper);
    # tolerance 2e-3: DCCP is a local method, the LP is exact
    bins, mf = fitted
    lp = lp_error(bins, GAMMAS)
    np.testing.assert_allclose(mf.raw_values_, lp, atol=2e-3, rtol=0)
    np.testing.assert_allclose(mf.values_, lp, atol=2e-3, rtol=0)


def test_returned_plans_are_feasible(fitted):
    bins, mf = fitted
    for plan in mf.plans_:
        assert plan.feasible
        assert plan.R1.shape == (2, 4, 4) and plan.R0.shape == (2, 4, 4)
        assert plan.R1.min() >= 0 and plan.R0.min() >= 0
        np.testing.assert_allclose(plan.R1.sum(axis=(0, 2)), 1.0, atol=1e-6)
        np.testing.assert_allclose(plan.R0.sum(axis=(0, 2)), 1.0, atol=1e-6)
        p1, p0, _, _ = plan_masses(bins, plan.R1, plan.R0)
        assert 0.5 * np.abs(p1 - p0).sum() <= plan.gamma + 1e-6  # TV recomputed from the R's


def test_recomputed_objective_matches_solver(fitted):
    _, mf = fitted
    for plan in mf.plans_:
        assert abs(plan.value - plan.solver_value) <= 1e-5


def test_front_is_nonincreasing_convex_and_below_raw(fitted):
    _, mf = fitted
    assert np.all(np.diff(mf.values_) <= 1e-12)
    assert np.all(np.diff(mf.values_, 2) >= -1e-9)
    assert np.all(mf.raw_values_ >= mf.values_ - 1e-12)
    np.testing.assert_allclose(mf.accuracy_, 1.0 - mf.values_)


def test_error_endpoint_is_closed_form(fitted):
    # E(1) = alpha sum U_i h(u_i) + (1 - alpha) sum V_j h(v_j): the unmerged representation
    bins, mf = fitted
    closed = closed_form_endpoint(bins, "error")
    assert abs(mf.raw_values_[-1] - closed) <= 1e-6
    assert np.all(mf.raw_values_ >= closed - 1e-9)  # the global minimum of E


@pytest.mark.parametrize(
    ("performance", "n"),
    [
        ("log_loss", 4),
        ("brier", 2),  # one cvxpy atom per point for Brier: n = 3 is slow (below)
        pytest.param("brier", 3, marks=pytest.mark.slow),
    ],
)
def test_endpoint_closed_form_other_measures(performance, n):
    # k = 1 suffices at gamma = 1: the levels of the two groups can sit on distinct points
    # (i, j) (e.g. group 1 on the diagonal, group 0 off it), which is the unmerged representation
    bins = make_bins(n, n, seed=5)
    plan = solve_mifpo(bins, 1.0, performance, k=1)
    closed = closed_form_endpoint(bins, performance)
    assert plan.feasible
    assert abs(plan.value - closed) <= 1e-6
    assert plan.value >= closed - 1e-9


def test_swapping_groups_leaves_front_unchanged(fitted):
    bins, mf = fitted
    swapped = _fit(bins.swapped(), GAMMAS[:2], n_restarts=2)
    np.testing.assert_allclose(swapped.raw_values_, mf.raw_values_[:2], atol=1e-4, rtol=0)


def test_identical_groups_give_a_flat_front():
    # no information in A: gamma = 0 already reaches E(1), and E is nonincreasing in gamma and
    # never below E(1), so the front is flat
    rng = np.random.default_rng(7)
    u, U = np.sort(rng.uniform(size=3)), rng.dirichlet(np.ones(3))
    mf = MIFPO(gammas=[0.0]).fit_bins(u, U, u, U, 0.4)
    closed = 0.4 * U @ np.minimum(u, 1 - u) + 0.6 * U @ np.minimum(u, 1 - u)
    np.testing.assert_allclose(mf.raw_values_, closed, atol=1e-6, rtol=0)


def test_perfect_parity_with_one_bin_is_the_base_rate():
    # one level per group: Z carries no information beyond A, and at gamma = 0 not even A, so
    # the error is min(pi_bar, 1 - pi_bar) with pi_bar the overall base rate (by hand)
    mf = MIFPO(gammas=[0.0]).fit_bins([0.8], [1.0], [0.3], [1.0], 0.25)
    pi_bar = 0.25 * 0.8 + 0.75 * 0.3
    assert abs(mf.raw_values_[0] - min(pi_bar, 1 - pi_bar)) <= 1e-6


def test_deterministic_under_random_state():
    bins = make_bins(3, 2, seed=11)
    a = solve_mifpo(bins, 0.2, n_restarts=1, random_state=4)
    b = solve_mifpo(bins, 0.2, n_restarts=1, random_state=4)
    np.testing.assert_array_equal(a.R1, b.R1)
    np.testing.assert_array_equal(a.R0, b.R0)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_error_front_equals_lp_six_bins(seed):
    bins = make_bins(6, 6, seed=100 + seed)
    gammas = np.round(np.linspace(0, 1, 11), 10)
    mf = _fit(bins, gammas)
    np.testing.assert_allclose(mf.raw_values_, lp_error(bins, gammas), atol=2e-3, rtol=0)
