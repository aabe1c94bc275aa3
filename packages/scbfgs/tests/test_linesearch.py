import math

import pytest

from paperkit.testing import assert_param_error
from scbfgs import LineSearchError, check_wolfe, weak_wolfe_search


def quadratic_1d(a, c=-1.0):
    """phi(eta) = a/2 eta^2 + c eta: Armijo holds for eta <= 2(1-alpha)/a, curvature for
    eta >= (1-beta)/a (closed forms, c < 0)."""
    return (lambda t: 0.5 * a * t * t + c * t), (lambda t: a * t + c)


@pytest.mark.parametrize("a", [1e-4, 1e-2, 0.3, 1.0, 1.9, 50.0, 1e4])
def test_returns_a_step_inside_the_known_wolfe_interval(a):
    alpha, beta = 0.1, 0.9
    phi, dphi = quadratic_1d(a)
    eta, trials = weak_wolfe_search(phi, dphi, alpha, beta)
    assert (1 - beta) / a <= eta <= 2 * (1 - alpha) / a
    assert check_wolfe(phi(0), dphi(0), phi(eta), dphi(eta), eta, alpha, beta)
    assert trials <= 100


def test_unit_step_is_taken_when_admissible():
    phi, dphi = quadratic_1d(1.2)  # eta = 1 is inside [0.083, 1.5]
    assert weak_wolfe_search(phi, dphi) == (1.0, 1)


def test_non_convex_but_bounded_below():
    with pytest.raises(LineSearchError, match="Not a descent direction"):  # phi'(0) = 0
        weak_wolfe_search(math.cos, lambda t: -math.sin(t))
    shifted = lambda t: math.cos(t + 0.5)  # noqa: E731 - descent at 0, Wolfe interval near pi - 0.5
    eta, _ = weak_wolfe_search(shifted, lambda t: -math.sin(t + 0.5))
    assert check_wolfe(
        shifted(0), -math.sin(0.5), shifted(eta), -math.sin(eta + 0.5), eta, 0.1, 0.9
    )


def test_infinite_values_shrink_the_step():
    # phi = +inf beyond eta = 0.3 (outside a domain): the search must come back inside
    phi = lambda t: (t - 0.2) ** 2 if t < 0.3 else math.inf  # noqa: E731
    dphi = lambda t: 2 * (t - 0.2)  # noqa: E731
    eta, _ = weak_wolfe_search(phi, dphi)
    assert eta < 0.3


def test_gives_up_after_max_trials():
    phi, dphi = quadratic_1d(1.0)
    with pytest.raises(LineSearchError, match="within 3 trials"):
        weak_wolfe_search(lambda t: 1e9 if t > 0 else 0.0, dphi, max_trials=3)
    with pytest.raises(LineSearchError, match="Not a descent direction"):
        weak_wolfe_search(phi, lambda t: 1.0)


def test_bad_constants():
    phi, dphi = quadratic_1d(1.0)
    assert_param_error(weak_wolfe_search, phi, dphi, alpha=-0.1, param="alpha")
    assert_param_error(weak_wolfe_search, phi, dphi, alpha=0.3, beta=0.2, param="beta")
    assert_param_error(weak_wolfe_search, phi, dphi, eta0=0.0, param="eta0")
    assert_param_error(weak_wolfe_search, phi, dphi, dphi0=float("nan"), param="dphi0")
    assert_param_error(weak_wolfe_search, phi, lambda t: math.nan, param="dphi0")  # computed


def test_a_non_finite_slope_at_a_trial_is_an_error():
    phi, _ = quadratic_1d(1.0)
    with pytest.raises(LineSearchError, match="not finite"):
        weak_wolfe_search(phi, lambda t: -1.0 if t == 0 else math.nan)
