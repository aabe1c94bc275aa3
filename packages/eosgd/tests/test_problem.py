"""The problem object: projection onto M, custom models, shapes."""

import numpy as np
import pytest

from eosgd import LeastSquaresProblem, manifold_start


def near_manifold(prob, seed, n=20, spread=0.3):
    """Points of M moved off it by up to ``spread`` in random directions."""
    rng = np.random.default_rng(seed)
    S_star = prob.min_sharpness()[0]
    base = manifold_start(prob, S_star * rng.uniform(1.0, 1.6, n), offset=0.0, seed=seed)
    return base + spread * rng.uniform(-1, 1, base.shape)


@pytest.mark.parametrize("name", ["a", "b", "c"])
def test_projection_is_on_M_and_orthogonal(problems, name):
    """f(pi(w)) = y to 1e-12, and w - pi(w) parallel to grad f(pi(w)) (|cos| > 1 - 1e-9)."""
    prob = problems[name]
    w = near_manifold(prob, seed=1)
    x = prob.project(w)
    assert np.abs(prob.residual(x)).max() <= 1e-12
    gap, g = w - x, prob.grad(x)
    cos = np.abs((gap * g).sum(-1)) / (np.linalg.norm(gap, axis=-1) * np.linalg.norm(g, axis=-1))
    assert (cos > 1 - 1e-9).all()
    # and it is the nearest point: no point of M sampled nearby is closer
    assert (
        np.linalg.norm(gap, axis=-1) <= np.linalg.norm(w - prob.project(x + 0.01), axis=-1)
    ).all()


def test_projection_of_the_factorisation_diagonal_is_the_flattest_point():
    """By symmetry the points z (1, 1) project onto (1, 1) for z > 0."""
    prob = LeastSquaresProblem.factorization()
    z = np.array([0.7, 1.0, 1.3, 2.0])
    assert np.allclose(prob.project(np.stack([z, z], 1)), 1.0, atol=1e-15)


def test_multi_output_projection_is_normal_to_M():
    """For q outputs, w - pi(w) lies in the row space of J(pi(w)): the least-squares fit of it
    by the rows leaves nothing (relative 1e-9)."""
    rng = np.random.default_rng(0)
    X, Y = rng.standard_normal((3, 2)), rng.uniform(-0.5, 0.5, 3)
    prob = LeastSquaresProblem.tanh_net(X, Y, width=4, seed=0)
    base = prob.project(prob.project(0.5 * rng.standard_normal((5, prob.dim))))  # on M
    w = base + 0.05 * rng.standard_normal(base.shape)
    x = prob.project(w)
    assert np.abs(prob.residual(x)).max() <= 1e-12
    for gap, J in zip(w - x, prob.jacobian(x), strict=True):
        coef = np.linalg.lstsq(J.T, gap, rcond=None)[0]
        assert np.linalg.norm(J.T @ coef - gap) <= 1e-9 * np.linalg.norm(gap)


def test_custom_problem_matches_the_closed_form():
    """f(u, v) = u v written by hand: the same S*, projection and sharpness as factorization()."""
    custom = LeastSquaresProblem(
        lambda w: w[..., 0] * w[..., 1], lambda w: w[..., ::-1], y=1.0, dim=2, name="uv"
    )
    closed = LeastSquaresProblem.factorization()
    assert custom.min_sharpness()[0] == pytest.approx(2.0, abs=1e-6)
    w = np.array([[1.5, 0.4], [0.9, 1.3]])
    assert np.allclose(custom.project(w), closed.project(w), atol=1e-13)
    assert np.allclose(custom.sharpness(w), closed.sharpness(w))
    assert not custom.has_imbalance and not custom.has_closed_form


def test_multi_output_custom_problem_shapes():
    """F(w) = (w0 w1, w1 w2), y = (1, 2): q = 2, sharpness = lambda_max(J J^T)."""
    prob = LeastSquaresProblem(
        lambda w: np.stack([w[..., 0] * w[..., 1], w[..., 1] * w[..., 2]], -1),
        lambda w: np.stack(
            [
                np.stack([w[..., 1], w[..., 0], 0 * w[..., 0]], -1),
                np.stack([0 * w[..., 0], w[..., 2], w[..., 1]], -1),
            ],
            -2,
        ),
        y=np.array([1.0, 2.0]),
        dim=3,
    )
    w = np.array([[1.0, 1.0, 2.0], [0.5, 2.0, 1.0]])
    assert prob.n_outputs == 2 and prob.f(w).shape == (2, 2) and prob.jacobian(w).shape == (2, 2, 3)
    J = prob.jacobian(w[0])
    assert prob.sharpness(w[0]) == pytest.approx(np.linalg.eigvalsh(J @ J.T)[-1])
    assert prob.loss(w[0]) == pytest.approx(0.0)
    with pytest.raises(ValueError, match="'w' parameter of LeastSquaresProblem.grad"):
        prob.grad(w)


def test_shapes_follow_the_leading_axes(problems):
    prob = problems["c"]
    w = np.ones((4, 5, 6))
    assert prob.f(w).shape == (4, 5) and prob.grad(w).shape == (4, 5, 6)
    assert prob.jacobian(w).shape == (4, 5, 1, 6) and prob.imbalance(w).shape == (4, 5, 3)
    assert prob.sharpness(w).shape == (4, 5) and prob.project(w).shape == (4, 5, 6)
    assert prob.tangent_basis(np.ones(6)).shape == (5, 6)
