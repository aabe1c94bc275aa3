"""scbfgs: BFGS with a weak-Wolfe line search and the affine-invariant diagnostics of its global
linear and superlinear convergence on strongly self-concordant functions (Jin and Mokhtari,
NeurIPS 2025, arXiv 2507.00361).

>>> import numpy as np
>>> from scbfgs import bfgs, cubic_chain
>>> p = cubic_chain(d=10, mu=1e-3)
>>> res = bfgs(p.f, p.grad, np.zeros(10))
>>> bool(res.converged)
True
"""

from scbfgs.baselines import damped_newton, gradient_descent_armijo, scipy_bfgs
from scbfgs.bfgs import BFGSResult, bfgs, initial_inverse, minimize
from scbfgs.diagnostics import newton_decrement, newton_solve, psi
from scbfgs.linesearch import LineSearchError, check_wolfe, weak_wolfe_search
from scbfgs.problems import (
    Problem,
    affine_transform,
    breast_cancer_logistic,
    cubic_chain,
    log_barrier,
    log_sum_exp,
    logistic_l2,
    quadratic,
)

__all__ = [
    "BFGSResult",
    "LineSearchError",
    "Problem",
    "affine_transform",
    "bfgs",
    "breast_cancer_logistic",
    "check_wolfe",
    "cubic_chain",
    "damped_newton",
    "gradient_descent_armijo",
    "initial_inverse",
    "log_barrier",
    "log_sum_exp",
    "logistic_l2",
    "minimize",
    "newton_decrement",
    "newton_solve",
    "psi",
    "quadratic",
    "scipy_bfgs",
    "weak_wolfe_search",
]
