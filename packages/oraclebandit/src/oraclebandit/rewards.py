"""Rewards :math:`r(A, w)` of an action ``A`` (bool mask) at arm values ``w``.

The linear reward :math:`\\sum_{i \\in A} w_i` is the paper's main case; non-linear rewards must
be monotone and Lipschitz in ``w`` (Section 5 of the paper), e.g. probabilistic coverage

.. math:: r(A, w) = 1 - \\prod_{i \\in A} (1 - w_i),

the expected reward of "at least one chosen arm succeeds" for independent Bernoulli arms, whose
exact oracle over :math:`|A| = m` is the top-m oracle (coverage is symmetric and increasing in
each :math:`w_i \\in [0, 1]`).

>>> import numpy as np
>>> round(coverage_reward(np.array([True, False, True]), np.array([0.5, 0.9, 0.5])), 3)
0.75
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array

__all__ = ["coverage_reward", "linear_reward"]


def linear_reward(mask: np.ndarray, w: np.ndarray) -> float:
    """:math:`\\sum_{i \\in A} w_i`. NaN in ``w`` is refused."""
    dims: dict = {}
    mask = check_array("mask", "linear_reward", mask, shape=("d",), dims=dims, kind="bool")
    w = check_array("w", "linear_reward", w, shape=("d",), dims=dims)
    return float(w[mask].sum())


def coverage_reward(mask: np.ndarray, w: np.ndarray) -> float:
    """:math:`1 - \\prod_{i \\in A} (1 - w_i)` for ``w`` in [0, 1]. NaN in ``w`` is refused."""
    dims: dict = {}
    mask = check_array("mask", "coverage_reward", mask, shape=("d",), dims=dims, kind="bool")
    w = check_array("w", "coverage_reward", w, shape=("d",), dims=dims)
    if w.min() < 0 or w.max() > 1:
        raise ValueError(
            "The 'w' parameter of coverage_reward must be in [0, 1]. Got values outside instead."
        )
    return float(1.0 - np.prod(1.0 - w[mask]))
