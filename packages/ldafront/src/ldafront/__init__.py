"""Scaling laws for less discriminatory alternatives (Cen, Goyal, Javed, Karthik, Liang, Ho;
NeurIPS 2025, arXiv 2509.05627).

A claimant challenging a model under the "less discriminatory alternative" (LDA) test must show
that a model with comparable loss and a smaller demographic-parity gap exists, without the
compute, data or access to train the contested model. The loss-DP Pareto frontier of BCE has a
closed-form Lagrangian optimum (:func:`optimal_fair_postprocess`) and, near the unconstrained
optimum, the closed-form law PF(delta) = L0 + (Delta0 - delta)_+^2 / (2V)
(:func:`frontier_law`, :class:`FrontierLaw`), whose parameters follow power laws in the model
scale. Fitted on 7 small models (:class:`ScalingLawLDA`), it predicts the big model's frontier
and decides whether an LDA likely exists.

>>> import numpy as np
>>> from ldafront import frontier_law
>>> frontier_law(0.5, 0.2, 0.5, np.array([0.2, 0.0]))
array([0.5 , 0.54])

The public names are imported on first use (importing ``ldafront`` imports no scipy).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "FrontierLaw": "law",
        "PenalizedModel": "training",
        "ScalingLawLDA": "audit",
        "SyntheticLDA": "data",
        "bce": "metrics",
        "binary_entropy": "metrics",
        "chord_bound": "law",
        "dp_gap": "metrics",
        "empirical_frontier": "frontier",
        "fair_data": "data",
        "fair_shift": "postprocess",
        "fisher_term": "metrics",
        "fit_power_law": "powerlaw",
        "frontier_law": "law",
        "optimal_fair_postprocess": "postprocess",
        "postprocessed_frontier": "postprocess",
        "shift_bound": "law",
        "train_dp_penalized": "training",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from ldafront.audit import ScalingLawLDA as ScalingLawLDA
    from ldafront.data import SyntheticLDA as SyntheticLDA
    from ldafront.data import fair_data as fair_data
    from ldafront.frontier import empirical_frontier as empirical_frontier
    from ldafront.law import FrontierLaw as FrontierLaw
    from ldafront.law import chord_bound as chord_bound
    from ldafront.law import frontier_law as frontier_law
    from ldafront.law import shift_bound as shift_bound
    from ldafront.metrics import bce as bce
    from ldafront.metrics import binary_entropy as binary_entropy
    from ldafront.metrics import dp_gap as dp_gap
    from ldafront.metrics import fisher_term as fisher_term
    from ldafront.postprocess import fair_shift as fair_shift
    from ldafront.postprocess import optimal_fair_postprocess as optimal_fair_postprocess
    from ldafront.postprocess import postprocessed_frontier as postprocessed_frontier
    from ldafront.powerlaw import fit_power_law as fit_power_law
    from ldafront.training import PenalizedModel as PenalizedModel
    from ldafront.training import train_dp_penalized as train_dp_penalized
