import numpy as np
import pytest

from paperkit.testing import assert_close, assert_param_error
from scbfgs import (
    affine_transform,
    breast_cancer_logistic,
    cubic_chain,
    log_barrier,
    log_sum_exp,
    logistic_l2,
    newton_decrement,
    newton_solve,
    psi,
    quadratic,
)


def problems():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 6))
    b = np.sign(rng.standard_normal(30))
    return {
        "cubic_chain": (cubic_chain(6, 1e-2, delta=0.7), 1.5),  # spread covers both pieces of g
        "logistic": (logistic_l2(A, b, 0.1), 1.0),
        "log_sum_exp": (log_sum_exp(A, rng.standard_normal(30), 0.1), 0.5),
        "barrier": (log_barrier(np.eye(6), np.ones(6), rng.standard_normal(6), 0.1), 0.3),
        "affine": (
            affine_transform(cubic_chain(6, 1e-2), rng.standard_normal((6, 6)), np.ones(6)),
            0.5,
        ),
    }


@pytest.mark.parametrize("name", list(problems()))
def test_derivatives_match_finite_differences(name):
    p, scale = problems()[name]
    rng = np.random.default_rng(1)
    h = 1e-6
    for _ in range(3):
        x = scale * rng.uniform(-1, 1, p.dim)
        fd_grad = np.array([(p.f(x + h * e) - p.f(x - h * e)) / (2 * h) for e in np.eye(p.dim)])
        fd_hess = np.array(
            [(p.grad(x + h * e) - p.grad(x - h * e)) / (2 * h) for e in np.eye(p.dim)]
        )
        g = p.grad(x)
        assert_close(g, fd_grad, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(g).max()))
        Hx = p.hess(x)
        assert_close(Hx, fd_hess, rtol=1e-6, atol=1e-6 * max(1.0, np.abs(Hx).max()))
        assert np.allclose(Hx, Hx.T) and np.linalg.eigvalsh(Hx).min() > 0


def test_cubic_chain_hessian_lipschitz_bound():
    p = cubic_chain(8, 1e-3, delta=1.0)
    L2 = p.M_bound * (1e-3) ** 1.5
    rng = np.random.default_rng(2)
    worst = 0.0
    for _ in range(200):
        x, y = rng.uniform(-2, 2, (2, 8))
        ratio = np.linalg.norm(p.hess(x) - p.hess(y), 2) / np.linalg.norm(x - y)
        worst = max(worst, ratio)
    assert worst <= L2
    assert worst > 0.05 * L2  # and the bound is not vacuous


def test_psi_properties():
    rng = np.random.default_rng(3)
    R = rng.standard_normal((5, 5))
    S = R @ R.T + np.eye(5)
    assert psi(S, S) == pytest.approx(0.0, abs=1e-12)
    for _ in range(10):
        R = rng.standard_normal((5, 5))
        B = R @ R.T + 0.1 * np.eye(5)
        value = psi(B, S)
        assert value > 0
        A = rng.standard_normal((5, 5))  # (B, S) -> (A'BA, A'SA) leaves B_bar's spectrum unchanged
        assert psi(A.T @ B @ A, A.T @ S @ A) == pytest.approx(value, rel=1e-8)
    assert psi(2 * S, S) == pytest.approx(5 * (2 - 1 - np.log(2)))  # closed form, B_bar = 2I
    error = assert_param_error(psi, -S, S, param="B")
    assert "smallest eigenvalue" in str(error)  # a description of the matrix received
    assert_param_error(psi, S, -S, param="hess_star")
    assert_param_error(psi, -np.eye(2), np.eye(2), param="B")  # det(-I) = 1 > 0 in 2-D
    assert_param_error(psi, np.eye(3), S, param="hess_star")  # d = 3 fixed by B


def test_newton_solve_and_decrement():
    p = breast_cancer_logistic(1e-2)
    x_star, f_star = newton_solve(p.f, p.grad, p.hess, np.zeros(p.dim))
    assert np.linalg.norm(p.grad(x_star)) < 1e-12
    assert newton_decrement(p.grad(x_star), np.linalg.inv(p.hess(x_star))) < 1e-12
    assert newton_decrement(np.array([3.0, 4.0]), np.eye(2)) == pytest.approx(5.0)
    barrier = log_barrier(np.eye(2), np.ones(2), np.zeros(2), 1.0)
    assert_param_error(
        newton_solve, barrier.f, barrier.grad, barrier.hess, np.full(2, 3.0), param="x0"
    )


def test_problem_bad_inputs():
    assert_param_error(cubic_chain, 1, 1e-3, param="d")
    assert_param_error(cubic_chain, 5, 0.0, param="mu")
    assert_param_error(logistic_l2, np.ones((3, 2)), np.array([1.0, 0.0, 1.0]), 0.1, param="b")
    error = assert_param_error(quadratic, -np.eye(2), np.ones(2), param="Q")
    assert str(error).endswith("Got a matrix with smallest eigenvalue -1 instead.")
    assert_param_error(quadratic, np.eye(2), np.ones(3), param="b")
    assert_param_error(
        affine_transform, cubic_chain(3, 1.0), np.zeros((3, 3)), np.zeros(3), param="A"
    )
    assert_param_error(log_sum_exp, np.ones((3, 2)), np.ones(2), 1.0, param="b")
    assert_param_error(cubic_chain, "5", 1e-3, param="d", exc=TypeError)
    assert_param_error(cubic_chain, 10**7, 1e-3, param="d")  # dense 10^7 x 10^7 matrices
