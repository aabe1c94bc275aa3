"""MIFPO: model-independent fairness-performance Pareto fronts (Kozdoba, Perets, Mannor,
NeurIPS 2025, arXiv 2409.17643).

The optimal trade-off between the statistical parity of a representation Z (total variation
between Z | A = 1 and Z | A = 0 at most gamma) and the best performance any classifier on Z can
reach, computed from the calibrated scores of the two groups by a small concave program over
transport plans between score bins (solved by DCCP), with the exact LP front of fair
classification as the cross-check for the error.

>>> import numpy as np
>>> from fairpareto import MIFPO, fair_classification_front_lp
>>> rng = np.random.default_rng(0)
>>> A = rng.integers(0, 2, 500); scores = rng.beta(2 + 2 * A, 3)
>>> mf = MIFPO(n_bins=3, gammas=[0.0, 1.0], n_restarts=2).fit(scores, A)
>>> lp = fair_classification_front_lp(scores, A, [0.0, 1.0], n_bins=3)
>>> bool(np.abs(mf.values_ - lp).max() < 2e-3)
True

The public names are imported on first use (importing ``fairpareto`` imports no cvxpy).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "BINNINGS": "binning",
        "GroupBins": "binning",
        "MIFPO": "estimator",
        "PERFORMANCES": "performance",
        "bin_scores": "binning",
        "expected_calibration_error": "metrics",
        "fair_classification_front_lp": "lp",
        "fair_data": "data",
        "lower_convex_envelope": "front",
        "parity_gap": "metrics",
        "synthetic_scores": "data",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from fairpareto.binning import BINNINGS as BINNINGS
    from fairpareto.binning import GroupBins as GroupBins
    from fairpareto.binning import bin_scores as bin_scores
    from fairpareto.data import fair_data as fair_data
    from fairpareto.data import synthetic_scores as synthetic_scores
    from fairpareto.estimator import MIFPO as MIFPO
    from fairpareto.front import lower_convex_envelope as lower_convex_envelope
    from fairpareto.lp import fair_classification_front_lp as fair_classification_front_lp
    from fairpareto.metrics import expected_calibration_error as expected_calibration_error
    from fairpareto.metrics import parity_gap as parity_gap
    from fairpareto.performance import PERFORMANCES as PERFORMANCES
