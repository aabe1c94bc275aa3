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

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from scbfgs.baselines import damped_newton as damped_newton
    from scbfgs.baselines import gradient_descent_armijo as gradient_descent_armijo
    from scbfgs.baselines import scipy_bfgs as scipy_bfgs
    from scbfgs.diagnostics import newton_decrement as newton_decrement
    from scbfgs.diagnostics import newton_solve as newton_solve
    from scbfgs.diagnostics import psi as psi
    from scbfgs.linesearch import LineSearchError as LineSearchError
    from scbfgs.linesearch import check_wolfe as check_wolfe
    from scbfgs.linesearch import weak_wolfe_search as weak_wolfe_search
    from scbfgs.problems import Problem as Problem
    from scbfgs.problems import affine_transform as affine_transform
    from scbfgs.problems import breast_cancer_logistic as breast_cancer_logistic
    from scbfgs.problems import cubic_chain as cubic_chain
    from scbfgs.problems import log_barrier as log_barrier
    from scbfgs.problems import log_sum_exp as log_sum_exp
    from scbfgs.problems import logistic_l2 as logistic_l2
    from scbfgs.problems import quadratic as quadratic
    from scbfgs.solver import BFGSResult as BFGSResult
    from scbfgs.solver import bfgs as bfgs
    from scbfgs.solver import minimize as minimize

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BFGSResult": "solver",
        "LineSearchError": "linesearch",
        "Problem": "problems",
        "affine_transform": "problems",
        "bfgs": "solver",
        "breast_cancer_logistic": "problems",
        "check_wolfe": "linesearch",
        "cubic_chain": "problems",
        "damped_newton": "baselines",
        "gradient_descent_armijo": "baselines",
        "log_barrier": "problems",
        "log_sum_exp": "problems",
        "logistic_l2": "problems",
        "minimize": "solver",
        "newton_decrement": "diagnostics",
        "newton_solve": "diagnostics",
        "psi": "diagnostics",
        "quadratic": "problems",
        "scipy_bfgs": "baselines",
        "weak_wolfe_search": "linesearch",
    },
)
