"""Every public entry point with one valid call; the shared suite derives the bad ones."""

import numpy as np

import scbfgs
from paperkit.testing import BadInputs, Call

Q = np.array([[2.0, 0.5], [0.5, 1.0]])
B = np.array([1.0, -1.0])
PROBLEM = scbfgs.quadratic(Q, B)
F, GRAD, HESS = PROBLEM.f, PROBLEM.grad, PROBLEM.hess
X0 = np.array([1.0, 2.0])
X_STAR = np.linalg.solve(Q, B)
BIG = np.zeros(10**6)  # 8 MB; its d x d matrices would need 8 TB


def phi(t):
    return 0.5 * t * t - t


def dphi(t):
    return t - 1.0


RUN = {"f_star": 0.0, "f_tol": 1e-8, "max_iter": 50}
RUN_BAD = {"max_iter": [-1], "f_tol": [-1e-8]}

SUITE = BadInputs(
    scbfgs,
    [
        Call(
            scbfgs.bfgs,
            f=F,
            grad=GRAD,
            x0=X0,
            B0=Q,
            alpha=0.1,
            beta=0.9,
            max_iter=50,
            tol=1e-12,
            line_search="log_bisection",
            hess=HESS,
            x_star=X_STAR,
            f_star=-1.0,
            f_tol=1e-10,
            M=0.0,
            track_psi=True,
            shapes={"x0": "d", "B0": "d d", "x_star": "d"},
            bad={
                "x0": [BIG],
                "B0": [-Q, np.triu(Q), 0.0, -1.0],
                "alpha": [0.0, 1.0],
                "beta": [0.05, 1.0],  # beta must exceed alpha
                "max_iter": [-1],
                "tol": [-1.0],
                "f_tol": [-1e-8],
                "M": [-1.0],
            },
            accepts={"M": ["nonfinite"]},  # M = inf: classical self-concordance only
        ),
        Call(
            scbfgs.minimize,
            fun=F,
            x0=X0,
            args=(),
            jac=GRAD,
            hess=HESS,
            tol=1e-10,
            options={"maxiter": 50},
            shapes={"x0": "d"},
            bad={"tol": [-1.0], "x0": [BIG]},
        ),
        Call(
            scbfgs.weak_wolfe_search,
            phi=phi,
            dphi=dphi,
            alpha=0.1,
            beta=0.9,
            eta0=1.0,
            max_trials=20,
            phi0=0.0,
            dphi0=-1.0,
            bad={"alpha": [0.0, 1.0], "beta": [0.05], "eta0": [0.0], "max_trials": [0]},
        ),
        Call(
            scbfgs.check_wolfe,
            phi0=0.0,
            dphi0=-1.0,
            phi_eta=-0.5,
            dphi_eta=0.0,
            eta=1.0,
            alpha=0.1,
            beta=0.9,
            bad={"eta": [0.0], "alpha": [0.0], "beta": [1.5]},
            accepts={"phi_eta": ["nonfinite"]},  # phi = inf: a step outside the domain
        ),
        Call(scbfgs.psi, B=Q, hess_star=np.eye(2), shapes={"B": "d d", "hess_star": "d d"}),
        Call(scbfgs.newton_decrement, g=X0, H=Q, shapes={"g": "d", "H": "d d"}),
        Call(
            scbfgs.newton_solve,
            f=F,
            grad=GRAD,
            hess=HESS,
            x0=X0,
            tol=1e-14,
            max_iter=50,
            bad={"tol": [-1.0], "max_iter": [-1], "x0": [BIG]},
        ),
        Call(
            scbfgs.gradient_descent_armijo,
            f=F,
            grad=GRAD,
            x0=X0,
            **RUN,
            alpha=0.1,
            eta0=1.0,
            bad={**RUN_BAD, "alpha": [0.0, 1.0], "eta0": [0.0]},
        ),
        Call(
            scbfgs.damped_newton,
            f=F,
            grad=GRAD,
            hess=HESS,
            x0=X0,
            **RUN,
            bad={**RUN_BAD, "x0": [BIG]},
        ),
        Call(
            scbfgs.scipy_bfgs,
            f=F,
            grad=GRAD,
            x0=X0,
            gtol=1e-9,
            max_iter=50,
            bad={"gtol": [0.0], "max_iter": [-1], "x0": [BIG]},
        ),
        Call(
            scbfgs.logistic_l2,
            A=np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
            b=np.array([1.0, -1.0, 1.0]),
            mu=0.1,
            shapes={"A": "n d", "b": "n"},
            bad={"b": [np.array([1.0, 0.0, 1.0])], "mu": [0.0, -1.0]},
        ),
        Call(scbfgs.breast_cancer_logistic, mu=0.1, bad={"mu": [0.0]}),
        Call(
            scbfgs.cubic_chain,
            d=3,
            mu=1e-3,
            delta=1.0,
            bad={"d": [1, 10**7], "mu": [0.0], "delta": [-1.0]},
        ),
        Call(
            scbfgs.quadratic,
            Q=Q,
            b=B,
            shapes={"Q": "d d", "b": "d"},
            bad={"Q": [-Q, np.triu(Q)]},
        ),
        Call(
            scbfgs.log_sum_exp,
            A=np.eye(2),
            b=np.zeros(2),
            mu=1.0,
            shapes={"A": "m d", "b": "m"},
            bad={"mu": [0.0]},
        ),
        Call(
            scbfgs.log_barrier,
            A=np.eye(2),
            b=np.ones(2),
            c=np.zeros(2),
            mu=1.0,
            shapes={"A": "m d", "b": "m", "c": "d"},
            bad={"mu": [0.0]},
        ),
        Call(
            scbfgs.affine_transform,
            problem=PROBLEM,
            A=2.0 * np.eye(2),
            c=np.ones(2),
            shapes={"A": "2 2", "c": "2"},
            bad={"A": [np.zeros((2, 2))], "problem": ["a quadratic"]},
        ),
    ],
    exempt={
        "BFGSResult": "the result record bfgs returns (a scipy OptimizeResult); not built by users",
        "LineSearchError": "an exception class",
        "Problem": "a plain record of callables that the problem functions build and check",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
