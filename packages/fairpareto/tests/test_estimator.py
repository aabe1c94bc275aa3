"""The documented errors and the estimator's plumbing."""

import numpy as np
import pytest

from fairpareto import MIFPO
from fairpareto.lp import lp_error
from paperkit.testing import assert_param_error

RNG = np.random.default_rng(0)
A = RNG.integers(0, 2, 200)
SCORES = RNG.beta(2 + 2 * A, 3)


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"gammas": [0.0, 1.5]}, "gammas"),
        ({"gammas": [-0.1]}, "gammas"),
        ({"k": 0}, "k"),
        ({"n_bins": 1}, "n_bins"),
        ({"performance": "log_loss", "solver": "lp"}, "solver"),
        ({"performance": "hinge"}, "performance"),
    ],
)
def test_documented_value_errors(kwargs, param):
    assert_param_error(MIFPO, param=param, **kwargs)


def test_fit_value_errors():
    mf = MIFPO(solver="lp")
    assert_param_error(mf.fit, SCORES + 0.5, A, param="scores")
    assert_param_error(mf.fit, SCORES, A + 1, param="A")  # labels 1 and 2 are not binary
    assert_param_error(mf.fit, SCORES, np.zeros(200, int), param="A")  # an empty group


def test_non_callable_performance_is_a_type_error():
    assert_param_error(MIFPO, performance=3.0, param="performance", exc=TypeError)


def test_lp_solver_and_custom_performance():
    import cvxpy as cp

    mf = MIFPO(solver="lp", n_bins=5, gammas=[0.0, 0.4, 1.0]).fit(SCORES, A)
    np.testing.assert_allclose(mf.raw_values_, lp_error(mf.bins_, mf.gammas_))

    def error(pi, q):  # the error perspective, written by a user
        return cp.sum(cp.minimum(pi, q - pi))

    custom = MIFPO(performance=error, n_bins=2, gammas=[1.0], n_restarts=1).fit(SCORES, A)
    builtin = MIFPO(n_bins=2, gammas=[1.0], n_restarts=1).fit(SCORES, A)
    assert abs(custom.raw_values_[0] - builtin.raw_values_[0]) <= 1e-6
    assert custom.accuracy_ is None
    rep = builtin.representation(1.0)
    assert rep["R1"].shape == (2, 2, 2) and rep["feasible"]
    assert builtin.plot() is not None
