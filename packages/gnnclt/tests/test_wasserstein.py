import numpy as np
import pytest

from gnnclt import w1_distance


def test_sliced_is_a_lower_bound_and_zero_on_identical():
    """Spec check 8."""
    rng = np.random.default_rng(0)
    for d in (1, 2, 5):
        P, Q = rng.standard_normal((300, d)), 1.3 * rng.standard_normal((250, d)) + 0.2
        exact, sliced = w1_distance(P, Q), w1_distance(P, Q, method="sliced", seed=1)
        assert 0 < sliced <= exact + 1e-12
        assert w1_distance(P, P) == pytest.approx(0, abs=1e-12)
        assert w1_distance(P, P, method="sliced") == pytest.approx(0, abs=1e-12)


def test_exact_closed_forms():
    P = np.array([[0.0], [1.0], [3.0]])
    assert w1_distance(P, P + 2.5) == pytest.approx(2.5)
    assert w1_distance(P, P + 2.5, method="sliced") == pytest.approx(2.5)  # 1-D: exact
    assert w1_distance(P, np.array([[0.0]])) == pytest.approx(4 / 3)


def test_exact_refuses_too_many_points():
    with pytest.raises(ValueError, match="'P'"):
        w1_distance(np.zeros((3001, 2)), np.zeros((5, 2)))
