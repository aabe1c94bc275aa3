"""Probability maps as the public functions receive them: torch (any device) or numpy.

:func:`as_probs` checks one through :func:`paperkit.check_array` / :func:`paperkit.check_tensor`
(floating, finite) and adds what a probability map needs: values in [0, 1], the rank, and no
empty class or spatial dimension (an empty batch is allowed and gives an empty result).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch

from paperkit import Described, check_array, check_tensor, describe, param_error

__all__ = ["METRICS", "as_probs"]

#: The metrics RMA optimises.
METRICS = ("dice", "iou")


def as_probs(
    probs: Any, owner: str, *, ndim: int | None = None, name: str = "probs"
) -> tuple[torch.Tensor, bool]:
    """``(tensor, was_numpy)`` for a checked probability array.

    ``ndim=None``: a map (B, C, \\*spatial), at least 3-D, the batch B may be 0. ``ndim=1``: one
    map's pixels (d,), non-empty. ``ndim=3``: (B, C, D). Integer and boolean inputs are a
    ``TypeError`` (they are labels, not probabilities); NaN, inf and values outside [0, 1] a
    ``ValueError``.

    >>> as_probs(np.array([0.2, 0.9]), "f", ndim=1)
    (tensor([0.2000, 0.9000], dtype=torch.float64), True)
    """
    was_numpy = isinstance(probs, np.ndarray)
    if was_numpy:
        probs = torch.from_numpy(
            np.ascontiguousarray(check_array(name, owner, probs, kind="float", nonempty=False))
        )
    elif not isinstance(probs, torch.Tensor):
        raise param_error(
            name, owner, "a torch.Tensor or numpy.ndarray", describe(probs), cls=TypeError
        )
    check_tensor(name, owner, probs, ndim=ndim, nonempty=ndim == 1)
    if ndim is None and probs.ndim < 3:
        raise param_error(name, owner, "of shape (B, C, *spatial)", describe(probs))
    if any(n == 0 for n in probs.shape[1:]):
        raise param_error(
            name, owner, "non-empty in every class and spatial dimension", describe(probs)
        )
    if probs.numel():
        lo, hi = (float(v) for v in torch.aminmax(probs.detach()))
        if lo < 0 or hi > 1:
            raise param_error(
                name, owner, "probabilities in [0, 1]", Described(f"values in [{lo:g}, {hi:g}]")
            )
    return probs.detach(), was_numpy
