"""Losses: derivatives, properness, strong properness (κ) and links (paper, Sec. 3)."""

import numpy as np
import pytest
from scipy.optimize import minimize, minimize_scalar

from rsmlearn import losses

BINARY = ["logistic", "exponential", "squared"]
MULTI = ["softmax_ce", "multiclass_squared"]


@pytest.mark.parametrize("name", BINARY)
def test_binary_grad_hess_match_finite_differences(name):
    """Check 1: central differences in float64, rtol 1e-6, at 100 random (y, u)."""
    L = losses.get(name)
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 100).astype(float)
    u = rng.uniform(-5, 5, 100)
    h = 1e-5
    fd_g = (L.value(y, u + h) - L.value(y, u - h)) / (2 * h)
    fd_h = (L.grad(y, u + h) - L.grad(y, u - h)) / (2 * h)
    np.testing.assert_allclose(L.grad(y, u), fd_g, rtol=1e-6, atol=1e-9)
    np.testing.assert_allclose(L.hess(y, u), fd_h, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", MULTI)
def test_multiclass_grad_hess_match_finite_differences(name):
    L = losses.get(name)
    rng = np.random.default_rng(1)
    y = rng.integers(0, 4, 100)
    u = rng.uniform(-3, 3, (100, 4))
    h = 1e-5
    for k in range(4):
        e = np.zeros(4)
        e[k] = h
        fd_g = (L.value(y, u + e) - L.value(y, u - e)) / (2 * h)
        fd_h = (L.grad(y, u + e) - L.grad(y, u - e)) / (2 * h)
        np.testing.assert_allclose(L.grad(y, u)[:, k], fd_g, rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(L.hess(y, u)[:, :, k], fd_h, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", BINARY)
def test_binary_properness(name):
    """Check 2: argmin_u E_p psi(Y, u) has link value p (to 1e-6)."""
    L = losses.get(name)
    for p in np.random.default_rng(2).uniform(0.05, 0.95, 20):
        res = minimize_scalar(
            lambda u, p=p: p * L.value(1.0, u) + (1 - p) * L.value(0.0, u),
            bracket=(-1, 1),
            tol=1e-12,
        )
        assert abs(float(L.link(res.x)) - p) <= 1e-6


@pytest.mark.parametrize("name", MULTI)
def test_multiclass_properness(name):
    """Check 2 for K = 4."""
    L = losses.get(name)
    rng = np.random.default_rng(3)
    for p in rng.dirichlet(np.ones(4), 10):
        P = p[None]
        res = minimize(
            lambda u, P=P: float(L.value(P, u[None])[0]),
            np.zeros(4),
            jac=lambda u, P=P: L.grad(P, u[None])[0],
            method="BFGS",
            options={"gtol": 1e-12},
        )
        assert np.linalg.norm(L.link(res.x[None])[0] - p) <= 1e-6


@pytest.mark.parametrize("name", BINARY + MULTI)
def test_numeric_kappa_reaches_analytic(name):
    """Check 3: min of regret / (½‖λ(u) − T(p)‖²) on a 200 × 200 grid ≥ 0.99 κ."""
    L = losses.get(name)
    assert L.kappa_numeric(200) >= 0.99 * L.kappa


def test_logistic_kappa_is_tight():
    """κ = 4 is attained near p = q = ½ (Pinsker is tight there): the grid minimum is close."""
    assert losses.get("logistic").kappa_numeric(200) <= 4.05


@pytest.mark.parametrize("name", BINARY)
def test_link_round_trip(name):
    """Check 4: inverse_link(link(u)) = u within 1e-10 on -20 ≤ u ≤ 0. For u > 0 a probability
    λ(u) near 1 is stored with absolute spacing 1.1e-16, so float64 itself bounds the round trip
    by about eps / λ'(u) (5e-8 at u = 20 for the sigmoid); that bound is checked there."""
    L = losses.get(name)
    u = np.linspace(-20, 20, 401)
    err = np.abs(L.inverse_link(L.link(u)) - u)
    assert np.all(err[u <= 0] <= 1e-10), err[u <= 0].max()
    t = L.link(u)
    slope = {"logistic": t * (1 - t), "exponential": 2 * t * (1 - t), "squared": 1.0 + 0 * t}[name]
    ok = (t < 1.0) | (
        name == "squared"
    )  # where λ(u) rounds to exactly 1 it cannot be inverted in float64
    assert np.all(err[ok] <= 1e-10 + 4 * np.finfo(float).eps / slope[ok])
    assert ok[u <= 15].all()


def test_unknown_loss_raises():
    with pytest.raises(ValueError, match="'loss'"):
        losses.get("hinge")
