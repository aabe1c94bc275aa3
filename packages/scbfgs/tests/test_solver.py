import numpy as np
import pytest
from scipy.stats import ortho_group

from paperkit.testing import assert_close, assert_param_error
from scbfgs import (
    LineSearchError,
    affine_transform,
    bfgs,
    breast_cancer_logistic,
    check_wolfe,
    cubic_chain,
    log_barrier,
    logistic_l2,
    minimize,
    newton_solve,
    quadratic,
)
from scbfgs.solver import _update


def conditioned(d, cond, seed):
    """A random d x d matrix with singular values log-spaced from 1 to 1/cond."""
    rng = np.random.default_rng(seed)
    U = ortho_group.rvs(d, random_state=rng)
    V = ortho_group.rvs(d, random_state=rng)
    return U @ np.diag(np.logspace(0, -np.log10(cond), d)) @ V.T


@pytest.fixture(scope="module")
def chain():
    p = cubic_chain(10, 1e-3)
    x_star, f_star = newton_solve(p.f, p.grad, p.hess, np.zeros(10))
    return p, x_star, f_star


@pytest.fixture(scope="module")
def logistic():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((200, 8))
    b = np.where(A @ rng.standard_normal(8) + 0.5 * rng.standard_normal(200) > 0, 1.0, -1.0)
    p = logistic_l2(A, b, 1e-2)
    x_star, f_star = newton_solve(p.f, p.grad, p.hess, np.zeros(8))
    return p, x_star, f_star


def test_secant_equation_and_positive_definiteness(logistic):
    p, _, _ = logistic
    # replay the run: every update must satisfy H_{t+1} y = s and stay SPD
    x, H = np.zeros(8), np.eye(8)
    res = bfgs(p.f, p.grad, x, max_iter=30)
    for eta in res.eta_hist:
        g = p.grad(x)
        x_new = x - eta * (H @ g)
        s, y = x_new - x, p.grad(x_new) - g
        H = _update(H, s, y)
        assert_close(H @ y, s, rtol=1e-10, atol=1e-14 * np.abs(s).max())
        np.linalg.cholesky(H)  # raises when not positive definite
        x = x_new
    assert_close(H, res.H, rtol=1e-12, atol=1e-14)


def test_accepted_steps_satisfy_weak_wolfe(logistic):
    p, _, _ = logistic
    x, H = np.zeros(8), np.eye(8)
    res = bfgs(p.f, p.grad, x, alpha=0.1, beta=0.9, max_iter=40)
    assert res.nit > 5
    for eta in res.eta_hist:
        g = p.grad(x)
        d = -H @ g
        x_new = x + eta * d
        assert check_wolfe(p.f(x), g @ d, p.f(x_new), p.grad(x_new) @ d, eta, 0.1, 0.9)
        H = _update(H, x_new - x, p.grad(x_new) - g)
        x = x_new


@pytest.mark.parametrize("d", [2, 5, 10])
def test_finite_termination_on_quadratics(d):
    rng = np.random.default_rng(d)
    R = rng.standard_normal((d, d))
    Q = R @ R.T + 0.1 * np.eye(d)
    b = rng.standard_normal(d)
    p = quadratic(Q, b)
    res = bfgs(p.f, p.grad, np.zeros(d), line_search="exact_quadratic", hess=p.hess, tol=1e-13)
    assert res.nit <= d
    assert np.linalg.norm(p.grad(res.x)) < 1e-10
    if res.nit == d:  # with d conjugate steps the update has learned the whole inverse
        assert_close(res.H, np.linalg.inv(Q), rtol=1e-8, atol=1e-8 * np.abs(np.linalg.inv(Q)).max())


@pytest.mark.parametrize("cond", [1.0, 1e2, 1e4])
def test_affine_invariance(chain, cond):
    p, x_star, f_star = chain
    A = conditioned(10, cond, seed=3)
    c = np.linspace(-0.5, 0.5, 10)
    q = affine_transform(p, A, c)
    x0 = np.full(10, 0.3)
    B0 = np.diag(np.linspace(1.0, 3.0, 10))
    z0 = np.linalg.solve(A, x0 - c)
    kw = dict(f_star=f_star, f_tol=1e-10, tol=0.0)
    rf = bfgs(p.f, p.grad, x0, B0=B0, **kw)
    rg = bfgs(q.f, q.grad, z0, B0=A.T @ B0 @ A, **kw)
    assert rf.nit == rg.nit and rf.nit > 10
    assert np.array_equal(rf.eta_hist, rg.eta_hist)
    keep = rf.f_hist - f_star > 1e-10
    assert_close(rg.f_hist[keep], rf.f_hist[keep], rtol=1e-8, atol=0)


def test_superlinear_tail_and_unit_steps(chain):
    p, x_star, f_star = chain
    res = bfgs(p.f, p.grad, np.zeros(10), B0=None, f_star=f_star)
    gap = res.f_hist - f_star
    floor = 1e-12 * max(1.0, abs(f_star))
    n = int(np.argmax(gap < floor))  # first iterate below the floor
    assert n > 9
    ratios = gap[1:n] / gap[: n - 1]
    third = len(ratios) // 3
    first = np.exp(np.log(ratios[:third]).mean())
    last = np.exp(np.log(ratios[-third:]).mean())
    assert last < 0.1 and last < first
    assert res.t_unit is not None and res.t_unit < n - 1
    assert np.all(res.eta_hist[res.t_unit : n - 1] == 1.0)


@pytest.mark.parametrize("which", ["chain", "logistic"])
def test_parity_with_scipy(which, chain):
    from scbfgs import scipy_bfgs

    if which == "chain":
        p, x_star, _ = chain
    else:
        p = breast_cancer_logistic(1e-3)
        x_star, _ = newton_solve(p.f, p.grad, p.hess, np.zeros(p.dim))
    x0 = np.zeros(p.dim)
    ours = bfgs(p.f, p.grad, x0)
    theirs = scipy_bfgs(p.f, p.grad, x0, gtol=1e-9)
    assert np.linalg.norm(ours.x - x_star) < 1e-5
    assert np.linalg.norm(theirs.x - x_star) < 1e-5


def test_minimize_mirrors_scipy_calling_convention(logistic):
    p, x_star, _ = logistic
    res = minimize(
        lambda x, s: s * p.f(x),
        np.zeros(8),
        args=(2.0,),
        jac=lambda x, s: s * p.grad(x),
        options={"maxiter": 500, "B0": 2.0},
    )
    assert res.success and np.linalg.norm(res.x - x_star) < 1e-6
    assert {"x", "fun", "jac", "nit", "nfev", "njev", "message"} <= set(res)
    assert_param_error(minimize, p.f, np.zeros(8), param="jac", exc=TypeError)


def test_rounding_floor_ends_cleanly():
    p = breast_cancer_logistic(1e-2)
    res = bfgs(p.f, p.grad, np.zeros(p.dim), tol=1e-30)  # below what float64 can resolve
    assert res.converged and res.reason in ("rounding", "tol")


def test_bad_inputs(logistic):
    p, _, _ = logistic
    x0 = np.zeros(8)
    assert_param_error(bfgs, p.f, p.grad, x0, alpha=0.0, param="alpha")
    assert_param_error(bfgs, p.f, p.grad, x0, alpha=0.5, beta=0.4, param="beta")
    assert_param_error(bfgs, p.f, p.grad, x0, beta=1.0, param="beta")
    with pytest.warns(UserWarning, match="alpha = 0.6 >= 1/2"):
        bfgs(p.f, p.grad, x0, alpha=0.6, beta=0.9, max_iter=2)
    assert_param_error(bfgs, p.f, p.grad, x0, B0=-np.eye(8), param="B0")
    assert_param_error(bfgs, p.f, p.grad, x0, B0=np.triu(np.ones((8, 8))), param="B0")
    assert_param_error(bfgs, p.f, p.grad, x0, B0=np.eye(3), param="B0")
    assert_param_error(bfgs, p.f, p.grad, x0, B0=0.0, param="B0")
    assert_param_error(bfgs, p.f, p.grad, np.zeros((2, 4)), param="x0")
    assert_param_error(bfgs, p.f, lambda x: np.zeros(3), x0, param="grad")
    assert_param_error(bfgs, p.f, p.grad, x0, line_search="wolfe", param="line_search")
    assert_param_error(bfgs, p.f, p.grad, x0, line_search="exact_quadratic", param="hess")
    assert_param_error(bfgs, lambda x: float("nan"), p.grad, x0, param="x0")
    barrier = log_barrier(np.eye(2), np.ones(2), np.zeros(2), 1.0)
    assert_param_error(bfgs, barrier.f, barrier.grad, np.array([2.0, 0.0]), param="x0")
    for name, value in (("tol", -1.0), ("tol", float("nan")), ("M", -1.0), ("f_tol", -1e-8)):
        assert_param_error(bfgs, p.f, p.grad, x0, f_star=0.0, **{name: value}, param=name)
    assert_param_error(bfgs, p.f, p.grad, x0, tol="1e-8", param="tol", exc=TypeError)
    assert bfgs(p.f, p.grad, x0, M=float("inf"), f_star=0.0, max_iter=1).M_sqrt_delta0 == np.inf


def test_a_nan_gradient_is_named_not_taken_for_an_ascent_direction(logistic):
    p, _, _ = logistic
    nan_grad = lambda x: np.full(8, np.nan)  # noqa: E731
    error = assert_param_error(bfgs, p.f, nan_grad, np.zeros(8), param="grad")
    assert "8 NaN or inf entries" in str(error)
    late_nan = lambda x: p.grad(x) if np.all(x == 0) else nan_grad(x)  # noqa: E731
    assert_param_error(bfgs, p.f, late_nan, np.zeros(8), param="grad")  # mid-run too


def test_line_search_failure_far_from_the_solution_raises():
    # a gradient of the wrong sign: every trial step increases f, 100 trials fail
    with pytest.raises(LineSearchError, match="within 100 trials"):
        bfgs(lambda x: float(x @ x), lambda x: -2 * x, np.ones(3))
