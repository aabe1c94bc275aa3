"""project_simplex: the sort-based algorithm (Duchi et al., 2008) against a generic solver."""

import numpy as np
import pytest
from scipy.optimize import minimize

from sqmarket import project_simplex


def slsqp_projection(v):
    """Reference: argmin ||x - v||^2 s.t. x >= 0, sum x = 1, by SLSQP (ftol 1e-12)."""
    n = len(v)
    res = minimize(
        lambda x: np.sum((x - v) ** 2),
        np.full(n, 1.0 / n),
        jac=lambda x: 2 * (x - v),
        method="SLSQP",
        bounds=[(0, None)] * n,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1, "jac": lambda x: np.ones(n)}],
        options={"ftol": 1e-12, "maxiter": 500},
    )
    return res.x


def test_matches_slsqp_on_200_random_vectors():
    rng = np.random.default_rng(0)
    for _ in range(200):
        n = int(rng.integers(2, 12))
        v = rng.standard_normal(n) * rng.choice([0.1, 1.0, 5.0])
        # tolerance 1e-6, the agreement asked of the reference solver
        np.testing.assert_allclose(project_simplex(v), slsqp_projection(v), atol=1e-6, rtol=0)


def test_idempotent_on_the_simplex_and_rows_independent():
    rng = np.random.default_rng(1)
    x = rng.dirichlet(np.ones(7), size=50)
    np.testing.assert_allclose(project_simplex(x), x, atol=1e-15, rtol=0)
    v = rng.standard_normal((4, 3, 6))
    batched = project_simplex(v)
    looped = np.array([[project_simplex(row) for row in block] for block in v])
    np.testing.assert_array_equal(batched, looped)
    assert np.all(batched >= 0) and np.allclose(batched.sum(-1), 1, atol=1e-14)


def test_translation_invariance_and_kkt():
    """Pi(v + c 1) = Pi(v); KKT: x = max(v - tau, 0) with one tau for every coordinate."""
    rng = np.random.default_rng(2)
    for _ in range(100):
        v = rng.standard_normal(9) * 3
        x = project_simplex(v)
        np.testing.assert_allclose(project_simplex(v + rng.normal() * 10), x, atol=1e-12)
        tau = (v - x)[x > 0]
        assert np.ptp(tau) < 1e-12
        assert np.all(v[x == 0] <= tau[0] + 1e-12)


@pytest.mark.parametrize(
    "v,expected",
    [([0.5, 0.2, 0.6], [0.4, 0.1, 0.5]), ([1.0, 0.2, 0.6], [0.7, 0.0, 0.3]), ([3.0], [1.0])],
)
def test_closed_form_examples(v, expected):
    # by hand: tau = (1.3 - 1)/3 = 0.1; tau = (1.0 + 0.6 - 1)/2 = 0.3 with 0.2 clipped; n = 1 -> 1
    np.testing.assert_allclose(project_simplex(v), expected, atol=1e-14)
