"""The closed-form constrained optimum f_mu (Lagrangian closed form) and its DP targeting."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from ldafront import (
    bce,
    dp_gap,
    fair_shift,
    optimal_fair_postprocess,
    postprocessed_frontier,
    train_dp_penalized,
)
from ldafront.postprocess import _f_mu


def test_root_formula_solves_the_quadratic_and_minimises_the_pointwise_objective():
    # check 1: f_mu solves c f^2 - (1 + c) f + eta = 0, lies in (0, 1), and minimises
    # -eta log f - (1 - eta) log(1 - f) + c f (compared with minimize_scalar), 1000 random pairs
    rng = np.random.default_rng(0)
    eta = rng.uniform(0.01, 0.99, 1000)
    c = rng.uniform(-5.0, 5.0, 1000)
    f = _f_mu(eta, c)
    assert np.all((f > 0) & (f < 1))
    np.testing.assert_allclose(c * f**2 - (1 + c) * f + eta, 0.0, atol=1e-12)
    for e, ci, fi in zip(eta, c, f, strict=True):
        res = minimize_scalar(
            lambda x, e=e, ci=ci: -e * np.log(x) - (1 - e) * np.log1p(-x) + ci * x,
            bounds=(1e-12, 1 - 1e-12),
            method="bounded",
            options={"xatol": 1e-12},
        )
        assert abs(res.x - fi) < 1e-6


def test_rationalised_form_is_exact_at_zero_and_stable_for_small_c():
    eta = np.array([0.1, 0.5, 0.9])
    np.testing.assert_array_equal(_f_mu(eta, np.zeros(3)), eta)
    # first order in c: f = eta - c eta^2 (1 - eta) / ... ; compare with the quadratic's
    # textbook root in extended precision
    c = np.full(3, 1e-9)
    textbook = ((1 + c) - np.sqrt((1 + c) ** 2 - 4 * c * eta)) / (2 * c)
    exact = eta - c * eta * (1 - eta)  # d f / d c at 0 is -eta (1 - eta) (implicit function)
    assert np.max(np.abs(_f_mu(eta, c) - exact)) < 1e-15
    assert np.max(np.abs(textbook - exact)) > 1e-9  # the cancellation the form avoids


def test_denominator_positive_for_c_below_minus_one():
    eta = np.linspace(0.01, 0.99, 50)
    f = _f_mu(eta, np.full(50, -30.0))
    assert np.all((f > 0) & (f < 1)) and np.all(f >= eta)


def _population(seed=0, n=20_000):
    rng = np.random.default_rng(seed)
    A = (rng.random(n) < 0.3).astype(int)
    eta = 1 / (1 + np.exp(-(rng.normal(size=n) + 0.8 * A)))
    return eta, A


def test_dp_decreases_strictly_in_mu_and_frontier_is_convex_nonincreasing():
    # check 3
    eta, A = _population()
    mus = np.linspace(-2, 4, 25)
    gaps = [dp_gap(fair_shift(eta, A, mu), A, signed=True) for mu in mus]
    assert np.all(np.diff(gaps) < 0)
    d0 = dp_gap(eta, A)
    deltas = np.linspace(0, d0, 21)
    pf = postprocessed_frontier(eta, A, deltas)
    assert np.all(np.diff(pf) <= 1e-15)
    assert np.all(np.diff(pf, 2) >= -1e-12)  # convex on an even grid


def test_target_dp_met_to_1e_6():
    # check 2 (second part): the bisection meets the DP target
    eta, A = _population(1)
    for delta in (0.0, 0.03, 0.1):
        f = optimal_fair_postprocess(eta, A, delta)
        assert abs(dp_gap(f, A) - delta) < 1e-6


def test_postprocessed_loss_beats_every_penalised_model_at_equal_or_larger_gap():
    # check 2: with the Bayes posterior, L(f_mu) at gap delta is <= the expected loss of every
    # lambda-penalised trained model whose gap is >= delta (tol 1e-3)
    rng = np.random.default_rng(2)
    n = 4000
    A = (rng.random(n) < 0.3).astype(int)
    X = rng.normal(size=(n, 3))
    X[:, 0] += 0.8 * A
    eta = 1 / (1 + np.exp(-(2 * X[:, 0] - X[:, 1])))
    y = (rng.random(n) < eta).astype(float)
    for lam in (0.0, 0.1, 0.2):
        model, _ = train_dp_penalized(X, y, A, lam, model="logistic", epochs=200, lr=5e-2)
        f = model.predict_proba(X, A)
        gap = dp_gap(f, A)
        if gap >= dp_gap(eta, A):
            continue
        best = bce(optimal_fair_postprocess(eta, A, gap), eta)
        assert best <= bce(f, eta) + 1e-3


def test_infeasible_delta_warns_and_returns_input_or_raises():
    eta, A = _population(3, 500)
    d0 = dp_gap(eta, A)
    with pytest.warns(UserWarning, match="constraint is inactive"):
        out = optimal_fair_postprocess(eta, A, d0 + 0.01)
    np.testing.assert_array_equal(out, eta)
    with pytest.raises(ValueError, match="'delta'"):
        optimal_fair_postprocess(eta, A, d0 + 0.01, on_infeasible="raise")


def test_documented_value_errors():
    eta, A = _population(4, 100)
    with pytest.raises(ValueError, match="'A'.*binary"):
        optimal_fair_postprocess(eta, np.where(A == 1, 2, 0), 0.05)
    with pytest.raises(ValueError, match="'A'.*both groups"):
        optimal_fair_postprocess(eta, np.zeros(100, dtype=int), 0.05)
    with pytest.raises(ValueError, match="'eta_hat'.*open interval"):
        optimal_fair_postprocess(np.where(A == 1, 1.0, eta), A, 0.05)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = optimal_fair_postprocess(np.where(A == 1, 1.0, eta), A, 0.05, clip=True)
    assert np.all((f > 0) & (f < 1))


def test_deterministic():
    eta, A = _population(5, 1000)
    a, mu_a = optimal_fair_postprocess(eta, A, 0.05, return_mu=True)
    b, mu_b = optimal_fair_postprocess(eta, A, 0.05, return_mu=True)
    np.testing.assert_array_equal(a, b)
    assert mu_a == mu_b > 0
