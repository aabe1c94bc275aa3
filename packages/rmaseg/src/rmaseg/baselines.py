"""The decision rules RMA is compared against: argmax and fixed thresholding."""

from __future__ import annotations

import numpy as np
import torch

from rmaseg.checks import as_probs, check_prob

__all__ = ["argmax_predict", "threshold_predict"]


def argmax_predict(probs: torch.Tensor | np.ndarray) -> torch.Tensor | np.ndarray:
    r"""Labels :math:`\hat y_j = \arg\max_c p_c[j]`: (B, C, \*spatial) -> int64 (B, \*spatial).

    Ties go to the lowest class index. Same array type and device as ``probs``.
    """
    x, was_numpy = as_probs(probs, "argmax_predict")
    out = x.argmax(dim=1)
    return out.cpu().numpy() if was_numpy else out


def threshold_predict(
    probs: torch.Tensor | np.ndarray, thr: float = 0.5
) -> torch.Tensor | np.ndarray:
    r"""Masks :math:`p_c[j] > \mathrm{thr}` per class: (B, C, \*spatial) -> bool, same shape."""
    x, was_numpy = as_probs(probs, "threshold_predict")
    thr = check_prob(thr, "thr", "threshold_predict")
    out = x > thr
    return out.cpu().numpy() if was_numpy else out
