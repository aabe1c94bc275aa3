"""Aggregation scores :math:`F` and the aggregated p-value under the exact null law.

For one class :math:`y` with :math:`n = n_y` calibration points and the sorted per-view counts
:math:`k = (k_{(1)} \\le \\dots \\le k_{(m)})` of a test instance, with p-values
:math:`p_j = (k_j + 1)/(n + 1)`, the aggregated p-value is

.. math:: P_{agg}(y) = P_{K \\sim U(A_{n,m})}\\big(F(K) \\le F(k)\\big),

for a score :math:`F` symmetric and nondecreasing in each p-value (small = evidence against
:math:`y`). Then :math:`P(P_{agg}(Y) \\le \\alpha \\mid Y = y) \\le \\alpha` for every class
and every :math:`m`: the class-conditional guarantee of the prediction set
:math:`\\{y : P_{agg}(y) > \\alpha\\}`.

How :math:`P_{agg}` is computed, exactly where possible:

- ``min`` and ``majority`` are one order statistic :math:`K_{(r)}`: exact, closed form.
- ``mean``: :math:`\\sum_j K_j` is the Mann-Whitney U statistic: exact, by dynamic programming.
- the others (and user callables, and ``mean`` when its DP is beyond
  :data:`mconformal.nulls.SUM_DP_LIMIT`): exact by enumerating :math:`A_{n,m}` when
  :math:`\\binom{n+m}{m} \\le` ``exact_limit`` (2e6), else Monte Carlo with :math:`B` null draws,
  :math:`\\hat P = (1 + \\#\\{b : F(K_b) \\le F(k)\\})/(B + 1)`. This is an exactly valid
  p-value when the draws are fresh, because the observation is exchangeable with them. The
  draws are cached per ``(n, m, F, B, seed)``: validity then holds on average over the draws,
  not conditionally on one cached set (the conditional level can be off by about
  :math:`\\sqrt{\\alpha(1-\\alpha)/B} \\approx 0.002` at :math:`B = 20\\,000`).

Comparisons :math:`F(K_b) \\le F(k)` allow a relative slack of 1e-9 so that a null vector equal
to the observed one is counted whatever the floating-point summation order (conservative by at most
the mass of values within that slack).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import ndtri

from mconformal.nulls import (
    _count_bytes,
    _order_stat_cdf,
    _order_stat_counts,
    _sum_cdf,
    _sum_counts,
    enumerate_null,
    sample_null,
    sum_dp_fits,
)
from paperkit import (
    Described,
    check_array,
    check_choice,
    check_int,
    check_memory,
    describe,
    param_error,
)

__all__ = [
    "AGGREGATORS",
    "Aggregator",
    "aggregated_pvalues",
    "clear_null_cache",
    "get_aggregator",
    "majority_order",
    "monte_carlo_pvalue",
]

#: Built-in aggregators (``mean``, ``fisher``, ``stouffer``, ``min``, ``quantile``, ``majority``,
#: ``distance``).
AGGREGATORS = ("mean", "fisher", "stouffer", "min", "quantile", "majority", "distance")
_LAWS = {
    "mean": "sum",
    "min": "order",
    "majority": "order",
    "fisher": "general",
    "stouffer": "general",
    "quantile": "general",
    "distance": "general",
}
_SLACK = 1e-9


def majority_order(m: int) -> int:
    """The order :math:`r = m - \\lceil m/2 \\rceil + 1`: at least :math:`\\lceil m/2 \\rceil` views
    have :math:`p_j > \\beta` exactly when :math:`p_{(r)} > \\beta`.

    >>> [majority_order(m) for m in (1, 2, 3, 4, 5)]
    [1, 2, 2, 3, 3]
    """
    m = check_int("m", "majority_order", m, low=1)
    return m - math.ceil(m / 2) + 1


def _pvalues(counts: np.ndarray, n: int) -> np.ndarray:
    return (counts + 1.0) / (n + 1.0)


def _fisher(counts: np.ndarray, n: int) -> np.ndarray:
    return np.log(_pvalues(counts, n)).sum(axis=1)


def _stouffer(counts: np.ndarray, n: int) -> np.ndarray:
    # mid-p (k + 1/2)/(n + 1) keeps Phi^{-1} finite at p = 1; any monotone map stays valid.
    return ndtri((counts + 0.5) / (n + 1.0)).sum(axis=1)


def _quantile(counts: np.ndarray, n: int) -> np.ndarray:
    m = counts.shape[1]
    table = np.stack([_order_stat_cdf(n, m, i) for i in range(1, m + 1)])
    return table[np.arange(m), counts].min(axis=1)


def _distance(counts: np.ndarray, n: int) -> np.ndarray:
    return -np.sqrt(((1.0 - _pvalues(counts, n)) ** 2).sum(axis=1))


def _order_statistic(counts: np.ndarray, n: int, r: int) -> np.ndarray:
    return _pvalues(np.sort(counts, axis=1)[:, r - 1], n)


_STATISTICS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "mean": lambda counts, n: counts.sum(axis=1).astype(np.float64),
    "min": lambda counts, n: _order_statistic(counts, n, 1),
    "majority": lambda counts, n: _order_statistic(counts, n, majority_order(counts.shape[1])),
    "fisher": _fisher,
    "stouffer": _stouffer,
    "quantile": _quantile,
    "distance": _distance,
}


@dataclass(frozen=True)
class Aggregator:
    """An aggregation score :math:`F` and the way its null law is computed.

    Built-in scores, with :math:`p_j = (K_j + 1)/(n + 1)`:

    - ``mean``: :math:`\\sum_j p_j` (area under the sorted p-curve; the one-sided Wilcoxon /
      Mann-Whitney test of the views against the class calibration scores). Exact DP law.
    - ``fisher``: :math:`\\sum_j \\log p_j`.
    - ``stouffer``: :math:`\\sum_j \\Phi^{-1}(\\tilde p_j)` with the mid-p
      :math:`\\tilde p_j = (K_j + 1/2)/(n + 1)` (finite at :math:`p_j = 1`).
    - ``min``: :math:`p_{(1)}`; its exact law dominates the Bonferroni intersection.
    - ``quantile`` (quantile envelope): :math:`\\min_i G_i(p_{(i)})`, :math:`G_i` the null CDF of
      :math:`P_{(i)}`: reject when some order statistic is unusually small.
    - ``majority`` (refined majority vote): :math:`p_{(r)}`, :math:`r =` :func:`majority_order`;
      :math:`P_{agg} > \\alpha` iff
      :math:`\\#\\{j : p_j > \\beta_\\alpha\\} \\ge \\lceil m/2 \\rceil` with
      :math:`\\beta_\\alpha` the largest grid value with
      :math:`P_{null}(P_{(r)} \\le \\beta) \\le \\alpha`.
    - ``distance``: :math:`-\\lVert 1 - p \\rVert_2`, minus the distance to the all-ones corner.

    Attributes:
        name: the built-in name, or the callable's name.
        law: ``"order"`` (closed form), ``"sum"`` (DP) or ``"general"`` (enumeration or MC).
        fn: a user score :math:`F`: p-values ``(B, m)`` to ``(B,)``, symmetric and nondecreasing
            in each argument; None for the built-ins.
    """

    name: str
    law: str
    fn: Callable[[np.ndarray], np.ndarray] | None = None

    def __post_init__(self) -> None:
        owner = "Aggregator"
        if self.fn is None:
            check_choice("name", owner, self.name, AGGREGATORS)
            check_choice("law", owner, self.law, (_LAWS[self.name],))
            return
        if not callable(self.fn):
            raise param_error("fn", owner, "a callable or None", describe(self.fn), cls=TypeError)
        if not isinstance(self.name, str):
            raise param_error("name", owner, "a string", describe(self.name), cls=TypeError)
        check_choice("law", owner, self.law, ("general",))

    def statistic(self, counts: np.ndarray, n: int) -> np.ndarray:
        """:math:`F` of each row of the sorted counts ``(B, m)`` of a class with ``n`` points."""
        if self.fn is None:
            return _STATISTICS[self.name](counts, n)
        values = np.asarray(self.fn(_pvalues(counts, n)), dtype=np.float64)
        if values.shape != (counts.shape[0],):
            raise param_error(
                "aggregator",
                "Aggregator",
                "a callable mapping p-values of shape (B, m) to shape (B,), "
                f"here ({counts.shape[0]},)",
                Described(f"an output of shape {values.shape}"),
            )
        return values


def get_aggregator(aggregator: str | Callable[[np.ndarray], np.ndarray] | Aggregator) -> Aggregator:
    """The :class:`Aggregator` for a built-in name, a callable :math:`F` or an Aggregator.

    >>> get_aggregator("mean")
    Aggregator(name='mean', law='sum', fn=None)
    """
    if isinstance(aggregator, Aggregator):
        return aggregator
    if callable(aggregator):
        return Aggregator(getattr(aggregator, "__name__", repr(aggregator)), "general", aggregator)
    check_choice("aggregator", "get_aggregator", aggregator, AGGREGATORS)
    return Aggregator(aggregator, _LAWS[aggregator])


def monte_carlo_pvalue(f_obs: np.ndarray, f_null: np.ndarray) -> np.ndarray:
    """:math:`\\hat P = (1 + \\#\\{b : F_b \\le F_{obs}\\})/(B + 1)` for each observed value.

    Exactly valid (:math:`P(\\hat P \\le \\alpha) \\le \\alpha`) when the :math:`B` null values
    ``f_null`` are drawn afresh from the law of :math:`F_{obs}` under the null. Both are real
    arrays of any shape, NaN refused (:math:`\\pm\\infty` compare as usual).

    >>> monte_carlo_pvalue(np.array([0.5]), np.array([0.1, 0.4, 0.6, 0.9]))
    array([0.6])
    """
    owner = "monte_carlo_pvalue"
    f_obs = check_array("f_obs", owner, f_obs, finite=False, nonempty=False).astype(np.float64)
    f_null = check_array("f_null", owner, f_null, finite=False).astype(np.float64)
    for name, values in (("f_obs", f_obs), ("f_null", f_null)):
        if np.isnan(values).any():
            raise param_error(name, owner, "free of NaN", describe(values))
    f_null = np.sort(f_null.ravel())
    return (1.0 + _count_le(f_null, f_obs)) / (f_null.size + 1.0)


def _count_le(sorted_null: np.ndarray, f_obs: np.ndarray) -> np.ndarray:
    return np.searchsorted(sorted_null, f_obs + _SLACK * np.maximum(1.0, np.abs(f_obs)), "right")


@lru_cache(maxsize=8192)
def _null_statistics(
    n: int, m: int, aggregator: Aggregator, exact: bool, n_null: int, seed: int
) -> np.ndarray:
    if exact:
        draws = enumerate_null(n, m)
    else:
        draws = sample_null(n, m, n_null, np.random.default_rng([seed, n, m]))
    values = np.sort(aggregator.statistic(draws, n))
    values.setflags(write=False)
    return values


def clear_null_cache() -> None:
    """Forget the cached null laws (null values of F, closed-form and DP tables)."""
    for cached in (_null_statistics, _order_stat_cdf, _order_stat_counts, _sum_cdf, _sum_counts):
        cached.cache_clear()


def aggregated_pvalues(
    counts: np.ndarray,
    n: int,
    aggregator: str | Callable[[np.ndarray], np.ndarray] | Aggregator = "quantile",
    *,
    n_null: int = 20_000,
    exact_limit: int = 2_000_000,
    seed: int = 0,
) -> np.ndarray:
    """:math:`P_{agg}` of each row of per-view counts ``(B, m)`` for a class with ``n`` points.

    Args:
        counts: integer counts :math:`K_j \\in \\{0..n\\}` (any order within a row).
        n: the number :math:`n_y` of calibration points of the class.
        aggregator: a name of :data:`AGGREGATORS`, a callable :math:`F` or an :class:`Aggregator`.
        n_null: the Monte Carlo size :math:`B` when neither a closed form nor enumeration applies.
        exact_limit: enumerate :math:`A_{n,m}` when :math:`\\binom{n+m}{m} \\le` this.
        seed: seed of the Monte Carlo draws (which are cached per ``(n, m, F, B, seed)``).

    Returns:
        float64 array ``(B,)`` in :math:`(0, 1]`.

    Integer arguments only (no NaN can arise). Null laws that would not fit are refused before
    they are built: the enumeration and the Monte Carlo draws against the memory limit
    (``PAPERKIT_MAX_BYTES``), the ``mean`` DP against :data:`mconformal.nulls.SUM_DP_LIMIT`
    (beyond it ``mean`` is enumerated or drawn like the others).

    >>> aggregated_pvalues(np.array([[0, 1], [9, 10]]), 10, "mean")  # 2/66 and 65/66
    array([0.03030303, 0.98484848])
    """
    owner = "aggregated_pvalues"
    agg = get_aggregator(aggregator)
    counts = check_array("counts", owner, counts, ndim=2, kind="int")
    n = check_int("n", owner, n, low=0)
    n_null = check_int("n_null", owner, n_null, low=1)
    exact_limit = check_int("exact_limit", owner, exact_limit, low=1)
    seed = check_int("seed", owner, seed, low=0)
    counts = np.sort(counts.astype(np.int64), axis=1)
    m = counts.shape[1]
    if counts.min() < 0 or counts.max() > n:
        raise param_error(
            "counts", owner, f"integers in [0, n={n}]", Described("out-of-range counts")
        )
    if agg.law == "order":
        check_memory("n", owner, n, 2 * (n + 1) * _count_bytes(n, m))
        r = 1 if agg.name == "min" else majority_order(m)
        return _order_stat_cdf(n, m, r)[counts[:, r - 1]]
    if agg.law == "sum" and sum_dp_fits(n, m):
        check_memory("n", owner, n, 3 * (n * m + 1) * _count_bytes(n, m))
        return _sum_cdf(n, m)[counts.sum(axis=1)]
    exact = math.comb(n + m, m) <= exact_limit
    if exact:
        check_memory("exact_limit", owner, exact_limit, 4 * 8 * m * math.comb(n + m, m))
    else:
        check_memory("n_null", owner, n_null, 4 * 8 * m * n_null)
    null = _null_statistics(n, m, agg, exact, n_null, 0 if exact else seed)
    below = _count_le(null, agg.statistic(counts, n))
    if exact:
        return below / null.size
    return (1.0 + below) / (null.size + 1.0)
