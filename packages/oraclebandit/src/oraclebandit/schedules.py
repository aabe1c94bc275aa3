"""The query grids of AROQ and SROQ (Section 3 of the paper: doubly-exponential batch grids).

AROQ (per arm): with :math:`T' = \\lceil T m / d \\rceil` plays per arm on average,

.. math:: \\tau_e = \\lceil T'^{\\,1 - 2^{-e}} \\rceil, \\quad e = 1, \\dots, E,
          \\quad E = \\lceil \\log_2 \\log_2 T' \\rceil + 1,

and :math:`\\tau = \\infty` after epoch :math:`E`. SROQ (global):

.. math:: t_0 = 0, \\quad t_k = \\lceil T^{1 - 2^{-k}} \\rceil \\ (k < K), \\quad t_K = T,
          \\quad K = \\lceil \\log_2 \\log_2 T \\rceil + 1.

Both have :math:`O(\\log \\log T)` epochs. ``E`` and ``K`` are at least 1 (``log2 log2 x`` is
``<= 0`` for ``x <= 2``).

>>> aroq_grid(1024, 5, 20).tolist()
[16, 64, 128, 182]
>>> sroq_grid(1024).tolist()
[32, 182, 431, 664, 1024]
"""

from __future__ import annotations

import math

import numpy as np

from paperkit import check_int

__all__ = ["aroq_grid", "n_levels", "sroq_grid"]


def n_levels(x: int) -> int:
    """:math:`\\lceil \\log_2 \\log_2 x \\rceil + 1` (at least 1): the number of epochs of a
    doubly-exponential grid over a horizon ``x >= 1``.

    >>> n_levels(2**16), n_levels(2**15), n_levels(2)
    (5, 5, 1)
    """
    x = check_int("x", "n_levels", x, low=1)
    if x <= 2:
        return 1
    return math.ceil(math.log2(math.log2(x)) - 1e-12) + 1


def aroq_grid(T: int, m: int, d: int) -> np.ndarray:
    """The per-arm thresholds :math:`\\tau_1, \\dots, \\tau_E` of AROQ (int64 array of length E).

    A base arm in epoch ``e`` triggers an oracle query when its play count within the epoch
    reaches :math:`\\tau_e`. Integer arguments only (no NaN can arise).
    """
    owner = "aroq_grid"
    T = check_int("T", owner, T, low=2)
    d = check_int("d", owner, d, low=1)
    m = check_int("m", owner, m, low=1, high=d)
    t_arm = -(-T * m // d)
    levels = n_levels(t_arm)
    return np.array(
        [math.ceil(t_arm ** (1.0 - 2.0**-e) - 1e-9) for e in range(1, levels + 1)], dtype=np.int64
    )


def sroq_grid(T: int) -> np.ndarray:
    """The epoch ends :math:`t_1 < \\dots < t_K = T` of SROQ (int64 array of length K).

    Epoch ``k`` covers rounds :math:`t_{k-1} + 1, \\dots, t_k`. Integer argument only.
    """
    T = check_int("T", "sroq_grid", T, low=2)
    K = n_levels(T)
    ends = [math.ceil(T ** (1.0 - 2.0**-k) - 1e-9) for k in range(1, K)] + [T]
    return np.array(ends, dtype=np.int64)
