"""Argument checks shared by the public functions, worded as :func:`paperkit.param_error`."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from paperkit import Described, check_choice, param_error

__all__ = ["METRICS", "as_probs", "check_metric", "check_prob", "check_smooth"]

#: The metrics RMA optimises.
METRICS = ("dice", "iou")


def as_probs(probs: Any, owner: str, *, min_ndim: int = 3, exact_ndim: int | None = None):
    """Return ``(tensor, was_numpy)`` for a probability array after checking it.

    Accepts a floating torch tensor (any device) or numpy array with values in [0, 1], no NaN,
    at least ``min_ndim`` dimensions (or exactly ``exact_ndim``) and no empty dimension past the
    batch. Integer and boolean inputs are a ``TypeError``: they are labels, not probabilities.
    """
    was_numpy = isinstance(probs, np.ndarray)
    if was_numpy:
        if not np.issubdtype(probs.dtype, np.floating):
            raise param_error(
                "probs", owner, "a floating array", Described(f"dtype {probs.dtype}"), cls=TypeError
            )
        probs = torch.from_numpy(np.ascontiguousarray(probs))
    elif not isinstance(probs, torch.Tensor):
        raise param_error(
            "probs",
            owner,
            "a torch.Tensor or numpy.ndarray",
            Described(type(probs).__name__),
            cls=TypeError,
        )
    if not probs.is_floating_point():
        raise param_error(
            "probs", owner, "a floating tensor", Described(f"dtype {probs.dtype}"), cls=TypeError
        )
    shape = Described(f"shape {tuple(probs.shape)}")
    if exact_ndim is not None and probs.ndim != exact_ndim:
        raise param_error("probs", owner, f"a {exact_ndim}-D array", shape)
    if probs.ndim < min_ndim:
        raise param_error("probs", owner, "of shape (B, C, *spatial)", shape)
    if any(n == 0 for n in probs.shape[1:]):
        raise param_error("probs", owner, "non-empty in every class and spatial dimension", shape)
    if probs.numel():
        lo, hi = torch.aminmax(probs.detach())
        lo, hi = float(lo), float(hi)
        if math.isnan(lo) or math.isnan(hi):  # aminmax propagates NaN
            raise param_error("probs", owner, "free of NaN", Described("NaN values"))
        if lo < 0 or hi > 1:
            raise param_error(
                "probs", owner, "probabilities in [0, 1]", Described(f"values in [{lo:g}, {hi:g}]")
            )
    return probs.detach(), was_numpy


def check_metric(metric: Any, owner: str) -> str:
    """``metric`` in :data:`METRICS` (case-sensitive)."""
    return check_choice("metric", owner, metric, METRICS)


def check_smooth(smooth: Any, owner: str) -> float:
    """A finite ``smooth >= 0``."""
    if isinstance(smooth, bool) or not isinstance(smooth, (int, float)):
        raise param_error("smooth", owner, "a real number", smooth, cls=TypeError)
    if not math.isfinite(smooth) or smooth < 0:
        raise param_error("smooth", owner, "a finite number >= 0", smooth)
    return float(smooth)


def check_prob(value: Any, name: str, owner: str) -> float:
    """A real number in [0, 1]."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise param_error(name, owner, "a real number", value, cls=TypeError)
    if not 0 <= value <= 1:
        raise param_error(name, owner, "in [0, 1]", value)
    return float(value)
