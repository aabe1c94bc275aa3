"""Adaptive granularity (the paper's adaptive VG-Search): choose g by compute budget and by
problem difficulty.

The paper's exact selection rule is not restated here; this is a calibrated selection. From a
calibration table of accuracy and FLOPs per (g, n, difficulty bucket):

* budget-adaptive: ``g*(n) = argmax_g acc(g, n)`` pooled over buckets (weighted by ``count``);
* difficulty-adaptive: ``g*(n, b) = argmax_g acc(g, n, b)`` per bucket ``b``;

ties go to the g with fewer FLOPs. A bucket is the oracle level, or an estimate from a cheap
probe: the mean PRM score of the ``n`` first-step candidates, binned at the calibration quantiles
(:meth:`AdaptiveGranularity.difficulty_bucket`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from paperkit import check_array, check_int, param_error

__all__ = ["AdaptiveGranularity"]


class AdaptiveGranularity:
    """Calibrated choice of the verification granularity g.

    ``fit(calib_table, probe=None)``: ``calib_table`` is a sequence of rows (mappings) with keys
    ``n``, ``g``, ``bucket`` (int), ``acc``, ``flops`` and optionally ``count`` (problems behind
    the row, default 1); ``probe`` the calibration problems' probe values (mean first-step PRM
    score), whose quantiles become the ``n_buckets - 1`` bucket edges. NaN policy: refused.

    >>> rows = [dict(n=4, g=g, bucket=b, acc=a, flops=f)
    ...         for g, b, a, f in [(1, 0, .9, 10), (2, 0, .9, 6), (1, 1, .5, 10), (2, 1, .4, 6)]]
    >>> ada = AdaptiveGranularity().fit(rows)
    >>> ada.choose(4, 0), ada.choose(4, 1), ada.choose(4)
    (2, 1, 1)
    """

    def __init__(self, n_buckets: int = 3) -> None:
        self.n_buckets = check_int("n_buckets", "AdaptiveGranularity", n_buckets, low=1, high=100)
        self.table_: dict[tuple[int, int], dict[int, tuple[float, float]]] = {}
        self.budget_: dict[int, dict[int, tuple[float, float]]] = {}
        self.edges_: np.ndarray | None = None

    def fit(
        self, calib_table: Sequence[Mapping[str, Any]], probe: Any = None
    ) -> AdaptiveGranularity:
        """Tabulate the calibration rows (class docstring); returns ``self``."""
        owner = "AdaptiveGranularity.fit"
        if isinstance(calib_table, (str, bytes, Mapping)) or not isinstance(calib_table, Sequence):
            raise param_error(
                "calib_table",
                owner,
                "a sequence of rows",
                type(calib_table).__name__,
                cls=TypeError,
            )
        if len(calib_table) == 0:
            raise param_error("calib_table", owner, "non-empty", "an empty sequence")
        table: dict[tuple[int, int], dict[int, tuple[float, float]]] = {}
        pooled: dict[int, dict[int, list[float]]] = {}
        for i, row in enumerate(calib_table):
            try:
                n, g, b = int(row["n"]), int(row["g"]), int(row["bucket"])
                acc, flops = float(row["acc"]), float(row["flops"])
                count = float(row.get("count", 1))
            except (KeyError, TypeError, ValueError) as exc:
                raise param_error(
                    "calib_table",
                    owner,
                    "rows with numeric n, g, bucket, acc, flops",
                    f"row {i}: {row!r}",
                ) from exc
            if not all(np.isfinite([acc, flops, count])):
                raise param_error(
                    "calib_table", owner, "finite acc, flops, count", f"row {i}: {row!r}"
                )
            table.setdefault((n, b), {})[g] = (acc, flops)
            s = pooled.setdefault(n, {}).setdefault(g, [0.0, 0.0, 0.0])
            s[0] += acc * count
            s[1] += flops * count
            s[2] += count
        self.table_ = table
        self.budget_ = {
            n: {g: (s[0] / s[2], s[1] / s[2]) for g, s in per.items() if s[2] > 0}
            for n, per in pooled.items()
        }
        if probe is not None:
            values = check_array("probe", owner, probe, ndim=1)
            qs = np.arange(1, self.n_buckets) / self.n_buckets
            self.edges_ = np.quantile(values, qs)
        return self

    @staticmethod
    def _best(options: Mapping[int, tuple[float, float]]) -> int:
        """argmax accuracy, ties to fewer FLOPs (then to the smaller g)."""
        return min(options, key=lambda g: (-options[g][0], options[g][1], g))

    def choose(self, n: int, bucket: int | None = None) -> int:
        """``g*(n)`` (``bucket=None``, budget-adaptive) or ``g*(n, bucket)``. An n or a bucket
        absent from the calibration table is a ValueError naming it."""
        n = check_int("n", "AdaptiveGranularity.choose", n, low=1)
        if not self.budget_:
            raise ValueError("AdaptiveGranularity must be fitted (call fit) before choose.")
        if n not in self.budget_:
            raise param_error(
                "n",
                "AdaptiveGranularity.choose",
                f"one of the calibrated {sorted(self.budget_)}",
                n,
            )
        if bucket is None:
            return self._best(self.budget_[n])
        bucket = check_int("bucket", "AdaptiveGranularity.choose", bucket)
        if (n, bucket) not in self.table_:
            seen = sorted(b for (m, b) in self.table_ if m == n)
            raise param_error(
                "bucket",
                "AdaptiveGranularity.choose",
                f"one of the calibrated buckets {seen}",
                bucket,
            )
        return self._best(self.table_[(n, bucket)])

    def difficulty_bucket(self, first_step_scores: Any) -> int:
        """The bucket of a problem from its probe: ``mean(first_step_scores)`` against the
        calibration quantile edges; 0 holds the lowest scores (the hardest problems)."""
        s = check_array(
            "first_step_scores", "AdaptiveGranularity.difficulty_bucket", first_step_scores, ndim=1
        )
        if self.edges_ is None:
            raise ValueError(
                "AdaptiveGranularity must be fitted with a probe before difficulty_bucket."
            )
        return int(np.searchsorted(self.edges_, float(np.mean(s)), side="right"))
