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

Every function refuses, before starting, work that would not fit: its arrays beyond the memory
limit (``paperkit.check_memory``; ``PAPERKIT_MAX_BYTES`` raises it), and the sum's dynamic
programme beyond :data:`SUM_DP_LIMIT` big-integer additions. Arguments are integers (no NaN can
arise).
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache

import numpy as np

from mconformal.pvalues import as_rng
from paperkit import check_bool, check_int, check_memory, param_error

__all__ = [
    "SUM_DP_LIMIT",
    "enumerate_null",
    "null_order_stat_cdf",
    "null_order_stat_pmf",
    "null_size",
    "null_sum_cdf",
    "null_sum_pmf",
    "sample_null",
]

#: The most big-integer additions (:math:`n m^2`) the exact law of the sum may take: about ten
#: seconds on one CPU core (``null_sum_pmf(10**4, 30)`` took 8.8 s on a shared core).
SUM_DP_LIMIT = 10**7


def _check_nm(owner: str, n: object, m: object) -> tuple[int, int]:
    return check_int("n", owner, n, low=0), check_int("m", owner, m, low=1)


def _count_bytes(n: int, m: int) -> float:
    """Bytes of one exact count (at most C(n+m, m)) as a Python int in an object array."""
    bits = (math.lgamma(n + m + 1) - math.lgamma(n + 1) - math.lgamma(m + 1)) / math.log(2)
    return 36 + bits / 8


def null_size(n: int, m: int) -> int:
    """:math:`|A_{n,m}| = \\binom{n+m}{m}`, the number of sorted count vectors.

    >>> null_size(6, 3)
    84
    """
    n, m = _check_nm("null_size", n, m)
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
    owner = "sample_null"
    n, m = _check_nm(owner, n, m)
    size = check_int("size", owner, size, low=0)
    check_memory("size", owner, size, 3 * 8 * size * m)
    rng = as_rng("rng", owner, rng)
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
    owner = "enumerate_null"
    n, m = _check_nm(owner, n, m)
    check_memory("n", owner, n, 3 * 8 * m * math.comb(n + m, m))  # rows, repeats, new column
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
    n, m = _check_nm(owner, n, m)
    i = check_int("i", owner, i, low=1, high=m)
    check_memory("n", owner, n, 2 * (n + 1) * _count_bytes(n, m))
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
    exact = check_bool("exact", "null_order_stat_pmf", exact)
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


def sum_dp_fits(n: int, m: int) -> bool:
    """Whether the exact law of the sum is within :data:`SUM_DP_LIMIT` additions (:math:`n m^2`)."""
    return n * m * m <= SUM_DP_LIMIT


def _check_sum(owner: str, n: object, m: object) -> tuple[int, int]:
    """(n, m), refused when the DP exceeds :data:`SUM_DP_LIMIT` or its arrays the memory."""
    n, m = _check_nm(owner, n, m)
    culprit, value = ("m", m) if m * m > n else ("n", n)  # the size that drives n·m²
    if not sum_dp_fits(n, m):
        expected = (
            f"small enough for the exact DP: n·m² = {n * m * m:.3g} additions is above "
            f"SUM_DP_LIMIT = {SUM_DP_LIMIT:.0e} (minutes of work)"
        )
        raise param_error(culprit, owner, expected, value)
    check_memory(culprit, owner, value, 3 * (n * m + 1) * _count_bytes(n, m))
    return n, m


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
    :math:`O(n m^2)` additions, refused beyond :data:`SUM_DP_LIMIT`.

    >>> null_sum_pmf(2, 2) * null_size(2, 2)  # sorted pairs of {0, 1, 2} by their sum
    array([1., 1., 2., 1., 1.])
    """
    n, m = _check_sum("null_sum_pmf", n, m)
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
    return _sum_cdf(*_check_sum("null_sum_cdf", n, m))
