"""The decision rules RMA is compared against: argmax and fixed thresholding."""

from __future__ import annotations

import numpy as np
import torch

from paperkit import check_real
from rmaseg.probabilities import as_probs

__all__ = ["argmax_predict", "threshold_predict"]


def argmax_predict(probs: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
    r"""Labels :math:`\hat y_j = \arg\max_c p_c[j]`: (B, C, \*spatial) -> int64 (B, \*spatial).

    Ties go to the lowest class index. Same array type and device as ``probs``; B may be 0.
    NaN, inf and values outside [0, 1] are refused (ValueError).

    >>> argmax_predict(np.array([[[0.2, 0.7]], [[0.8, 0.3]]])[None])  # (B, C, H, W) = (1, 2, 1, 2)
    array([[[1, 0]]])
    """
    x, was_numpy = as_probs(probs, "argmax_predict")
    out = x.argmax(dim=1)
    return out.cpu().numpy() if was_numpy else out


def threshold_predict(
    probs: torch.Tensor | np.ndarray, thr: float = 0.5
) -> torch.Tensor | np.ndarray:
    r"""Masks :math:`p_c[j] > \mathrm{thr}` per class: (B, C, \*spatial) -> bool, same shape;
    ``thr`` in [0, 1]. NaN, inf and values outside [0, 1] are refused (ValueError).

    >>> threshold_predict(np.array([[[0.2, 0.7]]]))
    array([[[False,  True]]])
    """
    x, was_numpy = as_probs(probs, "threshold_predict")
    thr = check_real("thr", "threshold_predict", thr, low=0, high=1)
    out = x > thr
    return out.cpu().numpy() if was_numpy else out
