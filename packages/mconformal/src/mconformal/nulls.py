"""The exact, distribution-free null law of the sorted conformal counts.

Let :math:`C_y` hold :math:`n` calibration scores of class :math:`y` and let
:math:`s(x^1, y), \\dots, s(x^m, y)` be the scores of the :math:`m` views of a test instance. Under
the null "the true label is :math:`y`", when the views and the calibration points are exchangeable
(ties broken uniformly at random), the ranks of the :math:`m` test scores among all :math:`n + m`
scores form a uniform :math:`m`-subset :math:`r_1 < \\dots < r_m` of :math:`\\{1, \\dots, n + m\\}`.
The sorted counts :math:`K_{(i)} = \\#\\{c \\in C_y : c < s_{(i)}\\} = r_i - i` are therefore
uniform on

.. math:: A_{n,m} = \\{(k_1, \\dots, k_m) \\in \\{0, \\dots, n\\}^m : k_1 \\le \\dots \\le k_m\\},
   \\qquad |A_{n,m}| = \\binom{n+m}{m}.

The views are *not* independent given the calibration set; this law accounts for it. This module
samples the law, enumerates it, and gives two exact marginals in closed form or by recursion: each
order statistic :math:`K_{(i)}` and the sum :math:`\\sum_j K_j` (the Mann-Whitney U statistic).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from paperkit import param_error

__all__ = [
    "enumerate_null",
    "null_order_stat_cdf",
    "null_order_stat_pmf",
    "null_size",
    "null_sum_cdf",
    "null_sum_pmf",
    "sample_null",
]


def _check_int(value: object, name: str, owner: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise param_error(name, owner, f"an integer >= {minimum}", value, cls=TypeError)
    if value < minimum:
        raise param_error(name, owner, f"an integer >= {minimum}", value)
    return int(value)


def null_size(n: int, m: int) -> int:
    """:math:`|A_{n,m}| = \\binom{n+m}{m}`, the number of sorted count vectors."""
    n = _check_int(n, "n", "null_size", 0)
    m = _check_int(m, "m", "null_size", 1)
    return math.comb(n + m, m)


def sample_null(
    n: int, m: int, size: int, rng: np.random.Generator | int | None = None
) -> np.ndarray:
    """Draw ``size`` sorted count vectors uniformly from :math:`A_{n,m}`.

    A uniform :math:`m`-subset :math:`r_1 < \\dots < r_m` of :math:`\\{1, \\dots, n+m\\}` is drawn
    with Floyd's algorithm (vectorised over the draws, :math:`O(\\text{size} \\cdot m^2)`), then
    :math:`K_{(i)} = r_i - i`.

    Returns:
        int64 array of shape ``(size, m)``, each row nondecreasing in :math:`\\{0, \\dots, n\\}`.
    """
    n = _check_int(n, "n", "sample_null", 0)
    m = _check_int(m, "m", "sample_null", 1)
    size = _check_int(size, "size", "sample_null", 0)
    rng = np.random.default_rng(rng)
    total = n + m
    picks = np.empty((size, m), dtype=np.int64)
    for step, j in enumerate(range(total - m + 1, total + 1)):
        t = rng.integers(1, j + 1, size=size)
        seen = (picks[:, :step] == t[:, None]).any(axis=1)
        picks[:, step] = np.where(seen, j, t)
    picks.sort(axis=1)
    return picks - np.arange(1, m + 1)


def enumerate_null(n: int, m: int) -> np.ndarray:
    """Every element of :math:`A_{n,m}`, in lexicographic order.

    Returns:
        int64 array of shape ``(C(n+m, m), m)``; under the null each row has probability
        :math:`1/\\binom{n+m}{m}`.
    """
    n = _check_int(n, "n", "enumerate_null", 0)
    m = _check_int(m, "m", "enumerate_null", 1)
    rows = np.arange(n + 1, dtype=np.int64)[:, None]
    for _ in range(m - 1):
        last = rows[:, -1]
        reps = n + 1 - last
        starts = np.repeat(np.cumsum(reps) - reps, reps)
        new = np.repeat(last, reps) + np.arange(int(reps.sum())) - starts
        rows = np.column_stack([np.repeat(rows, reps, axis=0), new])
    return rows


@lru_cache(maxsize=4096)
def _order_stat_counts(n: int, m: int, i: int) -> tuple[int, ...]:
    return tuple(
        math.comb(k + i - 1, i - 1) * math.comb(n - k + m - i, m - i) for k in range(n + 1)
    )


def _check_order(n: object, m: object, i: object, owner: str) -> tuple[int, int, int]:
    n = _check_int(n, "n", owner, 0)
    m = _check_int(m, "m", owner, 1)
    i = _check_int(i, "i", owner, 1)
    if i > m:
        raise param_error("i", owner, f"an order between 1 and m={m}", i)
    return n, m, i


def null_order_stat_pmf(n: int, m: int, i: int, *, exact: bool = False) -> np.ndarray:
    """Closed-form law of the :math:`i`-th smallest count :math:`K_{(i)}` (1-based :math:`i`):

    .. math:: P(K_{(i)} = k) = \\binom{k+i-1}{i-1} \\binom{n-k+m-i}{m-i} \\Big/ \\binom{n+m}{m},
       \\qquad k = 0, \\dots, n.

    (choose the :math:`i - 1` smaller counts in :math:`\\{0..k\\}` and the :math:`m - i` larger
    ones in :math:`\\{k..n\\}`, with repetition).

    Args:
        exact: return an object array of :class:`fractions.Fraction` instead of float64.

    Returns:
        array of shape ``(n + 1,)`` summing to 1.
    """
    n, m, i = _check_order(n, m, i, "null_order_stat_pmf")
    counts = _order_stat_counts(n, m, i)
    total = math.comb(n + m, m)
    if exact:
        return np.array([Fraction(c, total) for c in counts], dtype=object)
    return np.array([c / total for c in counts])


@lru_cache(maxsize=4096)
def _order_stat_cdf(n: int, m: int, i: int) -> np.ndarray:
    total = math.comb(n + m, m)
    cdf = np.array([c / total for c in np.cumsum(np.array(_order_stat_counts(n, m, i), object))])
    cdf.setflags(write=False)
    return cdf


def null_order_stat_cdf(n: int, m: int, i: int) -> np.ndarray:
    """:math:`G_i(k) = P(K_{(i)} \\le k)`, ``k = 0..n``, from exact integer cumulative counts
    (each entry correctly rounded; the last one is exactly 1). Cached per ``(n, m, i)``."""
    return _order_stat_cdf(*_check_order(n, m, i, "null_order_stat_cdf"))


@lru_cache(maxsize=1024)
def _sum_counts(n: int, m: int) -> tuple[int, ...]:
    # Gaussian binomial [n+m choose m]_q = prod_{i=1}^m (1 - q^{n+i}) / (1 - q^i), built one factor
    # at a time with exact Python integers; after step i the polynomial is [n+i choose i]_q.
    coef = np.array([1], dtype=object)
    for i in range(1, m + 1):
        grown = np.concatenate([coef, np.zeros(n + i, dtype=object)])
        grown[n + i :] -= coef  # times (1 - q^{n+i})
        length = len(grown)
        padded = np.concatenate([grown, np.zeros(-length % i, dtype=object)])
        coef = padded.reshape(-1, i).cumsum(axis=0).ravel()[: n * i + 1]  # divided by (1 - q^i)
    return tuple(coef)


def null_sum_pmf(n: int, m: int) -> np.ndarray:
    """Exact law of :math:`U = \\sum_j K_j` under the null, ``u = 0..n m``.

    :math:`U` counts the pairs (test view, calibration point) where the test score is larger: it
    is the Mann-Whitney U statistic of the :math:`m` views against the :math:`n` calibration
    scores, whose null law is the Wilcoxon rank-sum distribution. The number of elements of
    :math:`A_{n,m}` with sum :math:`u` is the coefficient of :math:`q^u` in the Gaussian binomial

    .. math:: \\binom{n+m}{m}_q = \\prod_{i=1}^{m} \\frac{1 - q^{n+i}}{1 - q^i},

    computed by a dynamic programme over the factors in exact integer arithmetic,
    :math:`O(n m^2)` additions.
    """
    n = _check_int(n, "n", "null_sum_pmf", 0)
    m = _check_int(m, "m", "null_sum_pmf", 1)
    total = math.comb(n + m, m)
    return np.array([c / total for c in _sum_counts(n, m)])


@lru_cache(maxsize=1024)
def _sum_cdf(n: int, m: int) -> np.ndarray:
    total = math.comb(n + m, m)
    cdf = np.array([c / total for c in np.cumsum(np.array(_sum_counts(n, m), object))])
    cdf.setflags(write=False)
    return cdf


def null_sum_cdf(n: int, m: int) -> np.ndarray:
    """:math:`P(\\sum_j K_j \\le u)`, ``u = 0..n m``, exact (correctly rounded). Cached."""
    n = _check_int(n, "n", "null_sum_cdf", 0)
    m = _check_int(m, "m", "null_sum_cdf", 1)
    return _sum_cdf(n, m)
