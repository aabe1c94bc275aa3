r"""Gradient descent at the edge of stability in overparametrised least squares
(MacDonald, Min, Palma, Tarmoun, Xu, Vidal, NeurIPS 2025, arXiv 2510.17506).

In :math:`L(w) = \tfrac12 (f(w) - y)^2` with :math:`p \ge 2` parameters the global minimisers form
a manifold :math:`M`; near it GD splits into a 1-D residual map that bifurcates at
:math:`\eta S = 2` and a slow drift along :math:`M` that lowers the sharpness :math:`S`. With
:math:`\eta_c = 2 / \min_M S`: below :math:`\eta_c` GD converges linearly to a minimiser flatter
than its start (subcritical), at :math:`\eta_c` it converges to the flattest one by a power law
(critical), above it converges linearly to a period-two orbit around the flattest one
(supercritical).

>>> import numpy as np
>>> from eosgd import LeastSquaresProblem, classify_regime, critical_lr, gd
>>> prob = LeastSquaresProblem.factorization()          # f(u, v) = u v, y = 1
>>> critical_lr(prob), classify_regime(prob, 1.1)
(1.0, 'supercritical')
>>> run = gd(prob, np.array([1.6, 0.63]), eta=0.8, steps=2000)  # S(pi(w0)) = 2.96 > 2/eta
>>> bool(abs(run.r[-1]) < 1e-12), bool(2.0 < run.S_proj[-1] < 2.5)  # S* < S_inf < 2/eta
(True, True)

The public names are imported on first use (``import eosgd`` imports no scipy).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "DIVERGENCE_FACTOR": "descent",
        "LeastSquaresProblem": "problem",
        "Trajectory": "descent",
        "analyse_trajectory": "sweep",
        "classify_regime": "regimes",
        "critical_lr": "regimes",
        "fit_linear_rate": "fits",
        "fit_power_law": "fits",
        "gd": "descent",
        "manifold_start": "regimes",
        "period_two_orbit": "regimes",
        "period_two_rate": "regimes",
        "record_steps": "descent",
        "regime_sweep": "sweep",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from eosgd.descent import DIVERGENCE_FACTOR as DIVERGENCE_FACTOR
    from eosgd.descent import Trajectory as Trajectory
    from eosgd.descent import gd as gd
    from eosgd.descent import record_steps as record_steps
    from eosgd.fits import fit_linear_rate as fit_linear_rate
    from eosgd.fits import fit_power_law as fit_power_law
    from eosgd.problem import LeastSquaresProblem as LeastSquaresProblem
    from eosgd.regimes import classify_regime as classify_regime
    from eosgd.regimes import critical_lr as critical_lr
    from eosgd.regimes import manifold_start as manifold_start
    from eosgd.regimes import period_two_orbit as period_two_orbit
    from eosgd.regimes import period_two_rate as period_two_rate
    from eosgd.sweep import analyse_trajectory as analyse_trajectory
    from eosgd.sweep import regime_sweep as regime_sweep
