"""The closed forms of the instances: sharpness, minimal sharpness and minimisers, imbalance,
and the tanh net's Jacobian."""

import numpy as np
import pytest

from eosgd import LeastSquaresProblem, manifold_start


def numerical_hessian(prob, w, h=1e-5):
    """Central differences of the analytic gradient of L = |F - y|^2 / 2 (symmetrised)."""

    def grad_L(x):
        J = prob.jacobian(x)
        return np.einsum("qp,q->p", J, np.atleast_1d(prob.residual(x)))

    p = len(w)
    H = np.array([(grad_L(w + h * e) - grad_L(w - h * e)) / (2 * h) for e in np.eye(p)])
    return (H + H.T) / 2


@pytest.mark.parametrize("name", ["a", "b", "c"])
@pytest.mark.parametrize("factor", [1.0, 1.3, 2.0])
def test_sharpness_on_M_is_the_top_hessian_eigenvalue(problems, name, factor):
    """On M the Hessian of L is grad f grad f^T (r = 0): lambda_max = |grad f|^2 (1e-6)."""
    prob = problems[name]
    S_star = prob.min_sharpness()[0]
    w = manifold_start(prob, factor * S_star, offset=0.0, seed=3)
    lam = np.linalg.eigvalsh(numerical_hessian(prob, w))[-1]
    assert abs(prob.residual(w)) < 1e-12
    assert abs(prob.sharpness(w) - lam) <= 1e-6 * lam


@pytest.mark.parametrize(
    "make, S_star",
    [
        (lambda: LeastSquaresProblem.factorization(), 2.0),  # S* = 2|y|
        (lambda: LeastSquaresProblem.factorization(-0.5), 1.0),
        (lambda: LeastSquaresProblem.product(3), 3.0),  # S* = L |y|^(2 - 2/L)
        (lambda: LeastSquaresProblem.product(4, 2.0), 4 * 2.0**1.5),
        (lambda: LeastSquaresProblem.diagonal_net(np.array([1.0, 0.5, 2.0])), 1.0),  # 2 min|x| |y|
        (lambda: LeastSquaresProblem.diagonal_net(np.array([-0.5, 0.5, 2.0]), -2.0), 2.0),
    ],
)
def test_closed_form_min_sharpness_agrees_with_slsqp(make, S_star):
    """Closed form vs SLSQP on M (ftol 1e-14, best of 5 seeded starts): 1e-6."""
    prob = make()
    closed, w_closed = prob.min_sharpness("closed")
    numeric, w_numeric = prob.min_sharpness("slsqp")
    assert closed == pytest.approx(S_star, rel=1e-14)
    assert abs(numeric - closed) <= 1e-6 * closed
    assert prob.sharpness(w_closed) == pytest.approx(closed, rel=1e-14)
    assert abs(prob.residual(w_closed)) < 1e-14 and abs(prob.residual(w_numeric)) < 1e-10
    assert prob.distance_to_minimisers(w_numeric) < 1e-3  # SLSQP found a flattest minimiser


def test_diagonal_net_distance_to_a_tied_minimiser_set():
    """x = (0.5, 0.5, 1): the flattest minimisers are the circle c, v = sign(x y) c on the two
    tied coordinates, |c|^2 = |y| / 0.5; the closed-form distance equals the brute-force
    minimum over 20000 points of that circle (to the sampling error, 1e-6)."""
    prob = LeastSquaresProblem.diagonal_net(np.array([0.5, -0.5, 1.0]), y=1.5)
    R = np.sqrt(1.5 / 0.5)
    theta = np.linspace(0, 2 * np.pi, 20_000, endpoint=False)
    c = R * np.stack([np.cos(theta), np.sin(theta)], 1)
    minimisers = np.zeros((len(theta), 6))
    minimisers[:, :2] = c
    minimisers[:, 3:5] = c * np.array([1.0, -1.0])  # sigma = sign(x_i y)
    assert np.allclose(prob.sharpness(minimisers), prob.min_sharpness()[0])
    assert np.allclose(prob.residual(minimisers), 0.0, atol=1e-12)
    w = np.random.default_rng(0).standard_normal((10, 6))
    brute = np.linalg.norm(w[:, None] - minimisers[None], axis=-1).min(1)
    assert np.allclose(prob.distance_to_minimisers(w), brute, atol=1e-6)


def test_product_distance_picks_the_nearest_sign_pattern():
    """Depth 3, y = 1: minimisers are the sign patterns with product +1; brute force over all 4."""
    prob = LeastSquaresProblem.product(3)
    patterns = np.array([[1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1]], dtype=float)
    w = np.random.default_rng(1).standard_normal((50, 3))
    brute = np.linalg.norm(w[:, None] - patterns[None], axis=-1).min(1)
    assert np.allclose(prob.distance_to_minimisers(w), brute, atol=1e-14)


def test_diagonal_net_imbalance_changes_only_through_the_residual(problems):
    """One GD step multiplies D_i = u_i^2 - v_i^2 by 1 - eta^2 r^2 x_i^2 (expand the step)."""
    prob = problems["c"]
    w = np.random.default_rng(2).standard_normal((5, 6))
    eta = 0.7
    r = prob.residual(w)
    w_next = w - eta * r[:, None] * prob.grad(w)
    x = np.array([1.0, 0.5, 2.0])
    expected = prob.imbalance(w) * (1 - eta**2 * r[:, None] ** 2 * x**2)
    assert np.allclose(prob.imbalance(w_next), expected, rtol=1e-12, atol=1e-14)


def test_tanh_jacobian_matches_finite_differences():
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    prob = LeastSquaresProblem.tanh_net(X, Y, width=3, seed=0)
    assert prob.n_outputs == 6 and prob.dim == 12
    w = rng.standard_normal(prob.dim)
    h = 1e-6
    fd = np.stack(
        [(prob.f(w + h * e) - prob.f(w - h * e)) / (2 * h) for e in np.eye(prob.dim)], axis=-1
    )
    assert np.allclose(prob.jacobian(w), fd, rtol=1e-7, atol=1e-8)


def test_tanh_min_sharpness_is_below_every_sampled_point_of_M():
    """SLSQP's S* <= S at 30 points of M reached by Gauss-Newton from random draws."""
    X = np.array([[1.0, 0.0], [0.3, 1.0]])
    prob = LeastSquaresProblem.tanh_net(X, np.array([0.5, -0.4]), width=2, seed=0)
    S_star, w_star = prob.min_sharpness()
    assert np.abs(prob.residual(w_star)).max() < 1e-10
    rng = np.random.default_rng(4)
    points = prob.project(rng.standard_normal((30, prob.dim)) * 0.3 + w_star)
    assert np.abs(prob.residual(points)).max() < 1e-10
    assert (prob.sharpness(points) >= S_star - 1e-9).all()
