"""RankSEG-RMA: O(d) Dice- and IoU-consistent segmentation decisions by reciprocal moment
approximation (Wang & Dai, NeurIPS 2025, arXiv 2510.15362).

>>> import torch
>>> from rmaseg import rma_predict
>>> probs = torch.softmax(torch.randn(2, 4, 16, 16), dim=1)
>>> rma_predict(probs, metric="iou").shape
torch.Size([2, 16, 16])
"""

from rmaseg import baselines, data, exact, metrics
from rmaseg.api import RankSEGRMA, rma_predict
from rmaseg.baselines import argmax_predict, threshold_predict
from rmaseg.exact import (
    expected_dice,
    expected_iou,
    poisson_binomial_pmf,
    rankdice_exact,
    rankiou_exact,
)
from rmaseg.multiclass import increment_scores
from rmaseg.rma import optimal_tau, rma_objective

__all__ = [
    "RankSEGRMA",
    "argmax_predict",
    "baselines",
    "data",
    "exact",
    "expected_dice",
    "expected_iou",
    "increment_scores",
    "metrics",
    "optimal_tau",
    "poisson_binomial_pmf",
    "rankdice_exact",
    "rankiou_exact",
    "rma_objective",
    "rma_predict",
    "threshold_predict",
]
