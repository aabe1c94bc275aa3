"""RankSEG-RMA: O(d) Dice- and IoU-consistent segmentation decisions by reciprocal moment
approximation (Wang & Dai, NeurIPS 2025, arXiv 2510.15362).

The submodules ``rmaseg.exact``, ``rmaseg.metrics``, ``rmaseg.data`` and ``rmaseg.baselines``
hold the references, metrics, synthetic data and baselines (``from rmaseg import metrics``).

>>> import torch
>>> from rmaseg import rma_predict
>>> probs = torch.softmax(torch.randn(2, 4, 16, 16), dim=1)
>>> rma_predict(probs, metric="iou").shape
torch.Size([2, 16, 16])
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from rmaseg.api import RankSEGRMA as RankSEGRMA
    from rmaseg.api import rma_predict as rma_predict
    from rmaseg.baselines import argmax_predict as argmax_predict
    from rmaseg.baselines import threshold_predict as threshold_predict
    from rmaseg.exact import expected_dice as expected_dice
    from rmaseg.exact import expected_iou as expected_iou
    from rmaseg.exact import poisson_binomial_pmf as poisson_binomial_pmf
    from rmaseg.exact import rankdice_exact as rankdice_exact
    from rmaseg.exact import rankiou_exact as rankiou_exact
    from rmaseg.multiclass import increment_scores as increment_scores
    from rmaseg.rma import optimal_tau as optimal_tau
    from rmaseg.rma import rma_objective as rma_objective

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "RankSEGRMA": "api",
        "argmax_predict": "baselines",
        "expected_dice": "exact",
        "expected_iou": "exact",
        "increment_scores": "multiclass",
        "optimal_tau": "rma",
        "poisson_binomial_pmf": "exact",
        "rankdice_exact": "exact",
        "rankiou_exact": "exact",
        "rma_objective": "rma",
        "rma_predict": "api",
        "threshold_predict": "baselines",
    },
)
