"""Benchmark: calibration and prediction time against the number of classes K, of views m and of
instances N (CPU; numpy only, so the package is registered without GPU code).

``mconformal bench [--quick]`` records one :class:`paperkit.Measurement` per timing (median
seconds over repeated calls, ``paperkit.measure``; peak bytes):

1. per-view p-values (case ``pvalues``), vectorised ``searchsorted`` over all instances and views
   against a per-instance Python loop (the naive baseline), as a speed-up ratio at the same size,
   and the vectorised time at N m K = 1e6 (target < 1 s);
2. ``fit_scores`` (calibration) and ``predict_pvalues_from_scores`` against K (m = 5; cases
   ``vs K ...``) and against m (K = 10; cases ``vs m ...``), cold (every cached null law cleared
   before each call) and warm (cached), with log-log slopes (``paperkit.scaling``);
3. the build time of one Monte Carlo null law (B = 20 000, m = 10; target < 0.2 s per key);
4. ``predict_set`` on digits (N = 500, m = 5, K = 10, logistic regression; target < 0.5 s cached)
   and its slope against N.

The targets are this package's (the paper states none); they are the report's claims.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mconformal.aggregators import aggregated_pvalues, clear_null_cache
from mconformal.classifier import MultiInputConformalClassifier
from mconformal.data import digits_split, same_class_views
from paperkit import (
    Claim,
    Measurement,
    Report,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["RUNS", "bench", "naive_view_pvalues"]

#: The sizes of the quick and full runs: the sweeps over K, m and N, and the least number of
#: timed calls per measurement.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"K": [5, 10, 20, 50], "m": [1, 2, 3, 5, 10], "N": [250, 500, 1000], "repeats": 3},
    False: {
        "K": [5, 10, 20, 50, 100, 200],
        "m": [1, 2, 3, 5, 10, 20],
        "N": [500, 1000, 2000, 4000, 8000],
        "repeats": 5,
    },
}
#: Targets of this package (seconds): 1e6 per-view p-values, one Monte Carlo null law, digits
#: predict_set at N = 500 (cached).
TARGETS = {"pvalues": 1.0, "mc_null": 0.2, "digits": 0.5}
MS = 1e3


def naive_view_pvalues(cal_scores: list[np.ndarray], scores: np.ndarray) -> np.ndarray:
    """The reference: a Python loop over instances, :math:`(\\#\\{c < s\\} + 1)/(n + 1)` by
    comparison with every calibration score. ``scores`` ``(N, m, K)``; ``cal_scores`` one 1-D
    array per class. Scores as given (no checks: a benchmark helper)."""
    out = np.empty_like(scores)
    for i in range(scores.shape[0]):
        for k, cal in enumerate(cal_scores):
            out[i, :, k] = ((cal[None, :] < scores[i, :, k, None]).sum(1) + 1) / (len(cal) + 1)
    return out


def _scores(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    logits = rng.standard_normal(shape)
    proba = np.exp(logits)
    return proba / proba.sum(axis=-1, keepdims=True)


def _calibrated(K: int, n_y: int, aggregator: str, seed: int = 0) -> MultiInputConformalClassifier:
    rng = np.random.default_rng(seed)
    y = np.repeat(np.arange(K), n_y)
    clf = MultiInputConformalClassifier(aggregator=aggregator)
    return clf.fit_scores(_scores(rng, (K * n_y, K)), y)


def _cold(fn: Callable[[], Any]) -> Callable[[], Any]:
    """``fn`` with every cached null law cleared first: each call builds them again."""

    def run() -> Any:
        clear_null_cache()
        return fn()

    return run


def _pvalue_speed(repeats: int) -> list[Measurement]:
    rng = np.random.default_rng(1)
    clf = _calibrated(10, 100, "mean")
    cal = [c.scores for c in clf.calibration_]
    rows = []
    for N in (2000, 20_000):
        scores = _scores(rng, (N, 5, 10))
        size = N * 50
        rows.append(
            measure(
                "vectorised",
                size,
                lambda s=scores: clf.single_view_pvalues(s),
                case="pvalues",
                min_repeats=repeats,
            )
        )
        if N == 2000:
            loop = measure(
                "per-instance loop",
                size,
                lambda s=scores: naive_view_pvalues(cal, s),
                case="pvalues",
                min_repeats=max(1, repeats // 2),
                min_time=0,
            )
            rows.append(loop)
    return rows


def _sweep(name: str, values: list[int], shape: Callable[[int], tuple[int, int]], repeats: int):
    """fit_scores and predict_pvalues_from_scores (cold and warm) per value of K or m."""
    rows = []
    for value in progress(values, f"bench vs {name}"):
        K, m = shape(value)
        rng = np.random.default_rng(value)
        scores = _scores(rng, (500, m, K))
        y = np.repeat(np.arange(K), 50)
        cal = _scores(rng, (len(y), K))
        for aggregator in ("quantile", "mean"):
            clf = MultiInputConformalClassifier(aggregator=aggregator).fit_scores(cal, y)
            params = {"K": K, "m": m, "N": 500, "n_y": 50, "aggregator": aggregator}

            def predict(c: MultiInputConformalClassifier = clf, s: np.ndarray = scores) -> Any:
                return c.predict_pvalues_from_scores(s)

            timed = {
                "fit": lambda c=clf, s=cal, y=y: c.fit_scores(s, y),
                "cold": _cold(predict),
                "warm": predict,
            }
            for kind, fn in timed.items():
                rows.append(
                    measure(
                        f"{aggregator} {kind}",
                        value,
                        fn,
                        case=f"vs {name}",
                        params=params,
                        min_repeats=repeats,
                        min_time=0,
                    )
                )
    return rows


def _sweep_table(rows: list[Measurement], name: str) -> list[dict[str, Any]]:
    """The printed table: per value and aggregator, fit / predict cold / predict warm in ms."""
    table = []
    for value in dict.fromkeys(r.size for r in rows):
        for aggregator in ("quantile", "mean"):
            mine = [r for r in rows if r.size == value and r.impl.startswith(aggregator)]
            ms = {r.impl.split()[1]: MS * r.seconds for r in mine}
            table.append(
                {
                    name: value,
                    "aggregator": aggregator,
                    "fit ms": ms["fit"],
                    "predict cold ms": ms["cold"],
                    "predict warm ms": ms["warm"],
                }
            )
    return table


def _slopes(rows: list[Measurement], name: str) -> list[dict[str, Any]]:
    fits = scaling(rows, case=f"vs {name}")
    return [
        {
            "against": name,
            "aggregator": aggregator,
            "fit slope": fits[f"{aggregator} fit"]["slope"],
            "predict warm slope": fits[f"{aggregator} warm"]["slope"],
        }
        for aggregator in ("quantile", "mean")
    ]


def _digits(repeats: int, sizes: list[int]) -> list[Measurement]:
    parts = digits_split(0)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(*parts["train"])
    clf = MultiInputConformalClassifier(model, aggregator="quantile")
    fit = measure("fit", "digits", lambda: clf.fit(*parts["cal"]), case="digits fit")
    rows = [fit]
    rng = np.random.default_rng(0)
    for N in sizes:
        X, _ = same_class_views(*parts["test"], 5, N, rng)

        def predict(X: np.ndarray = X) -> Any:
            return clf.predict_set(X)

        for kind, fn in (("cold", _cold(predict)), ("warm", predict)):
            rows.append(
                measure(
                    f"predict_set {kind}",
                    N,
                    fn,
                    case="digits",
                    params={"m": 5, "K": 10, "aggregator": "quantile"},
                    min_repeats=3 * repeats,  # short calls: more repeats against noise
                    min_time=0,
                )
            )
    return rows


def _mc_null_build(repeats: int) -> Measurement:
    """One Monte Carlo null law (quantile, n = 100, m = 10, B = 20 000): aggregated_pvalues with
    enumeration switched off, on one row of counts, after clearing the cache."""
    counts = np.zeros((1, 10), dtype=np.int64)
    build = _cold(lambda: aggregated_pvalues(counts, 100, "quantile", n_null=20_000, exact_limit=1))
    params = {"n": 100, "m": 10}
    return measure(
        "quantile", 20_000, build, case="mc null law", params=params, min_repeats=repeats
    )


def _claims(rows: list[Measurement], slopes: list[dict[str, Any]]) -> list[Claim]:
    def seconds(case: str, impl: str, size: Any) -> float:
        return next(r.seconds for r in rows if (r.case, r.impl, r.size) == (case, impl, size))

    pv = seconds("pvalues", "vectorised", 1_000_000)
    mc = next(r.seconds for r in rows if r.case == "mc null law")
    digit_sizes = [r.size for r in rows if r.case == "digits"]
    n_digits = 500 if 500 in digit_sizes else digit_sizes[0]
    dg = seconds("digits", "predict_set warm", n_digits)
    speedup = seconds("pvalues", "per-instance loop", 100_000) / seconds(
        "pvalues", "vectorised", 100_000
    )
    fit_n = scaling(rows, case="digits").get("predict_set warm", {}).get("slope")
    slope_list = [s["predict warm slope"] for s in slopes if s["against"] == "K"]
    if fit_n is not None:
        slope_list.append(fit_n)
    no_paper = "no value in the paper; a target of this package"
    return [
        Claim(
            "Per-view p-values for N·m·K = 1e6 take less than 1 s (vectorised)",
            paper=no_paper,
            measured=f"{pv:.3g} s; {speedup:.1f}x faster than a per-instance loop at 1e5",
            verdict="held" if pv < TARGETS["pvalues"] else "not held",
            why="median over repeated calls on the CPU, K = 10, m = 5, n_y = 100",
        ),
        Claim(
            "One Monte Carlo null law (B = 20 000, m = 10) builds in less than 0.2 s",
            paper=no_paper,
            measured=f"{MS * mc:.3g} ms",
            verdict="held" if mc < TARGETS["mc_null"] else "not held",
            why="quantile aggregator, n = 100, cache cleared before each call",
        ),
        Claim(
            f"Digits predict_set at N = {n_digits}, m = 5, K = 10 takes less than 0.5 s (cached)",
            paper=no_paper,
            measured=f"{MS * dg:.3g} ms",
            verdict="held" if dg < TARGETS["digits"] else "not held",
            why="quantile aggregator, logistic regression, null laws cached",
        ),
        Claim(
            "Prediction time grows at most linearly in K and in N",
            paper=no_paper,
            measured="log-log slopes " + ", ".join(f"{s:.2f}" for s in slope_list),
            verdict="held" if all(s <= 1.2 for s in slope_list) else "not held",
            why="warm predict_pvalues_from_scores against K (quantile, mean) and digits "
            "predict_set against N (paperkit.scaling); held when every slope <= 1.2",
        ),
    ]


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Run the four measurements at the sizes of ``RUNS[quick]``; print the tables; write
    ``scaling_<case>.png``. ``device`` is always ``"cpu"`` (numpy only)."""
    out = Path(out)
    run = RUNS[quick]
    repeats = run["repeats"]
    rows = _pvalue_speed(repeats)
    speed = _speed_table(rows)
    print_table(speed, title="per-view p-values (K = 10, m = 5, n_y = 100): vectorised vs loop")
    by_k = _sweep("K", run["K"], lambda K: (K, 5), repeats)
    by_m = _sweep("m", run["m"], lambda m: (10, m), repeats)
    tables = {
        "pvalue_speed": speed,
        "by_K": _sweep_table(by_k, "K"),
        "by_m": _sweep_table(by_m, "m"),
    }
    print_table(tables["by_K"], title="calibration (n_y = 50) and prediction (N = 500, m = 5) vs K")
    print_table(
        tables["by_m"], title="calibration (n_y = 50) and prediction (N = 500, K = 10) vs m"
    )
    tables["slopes"] = _slopes(by_k, "K") + _slopes(by_m, "m")
    print_table(tables["slopes"], title="log-log slopes of the time")
    mc = _mc_null_build(repeats)
    digits = _digits(repeats, run["N"])
    tables["digits_by_N"] = _digits_table(digits)
    print_table(tables["digits_by_N"], title="digits predict_set (m = 5, K = 10, quantile) vs N")
    print(f"MC null law build (B = 20000, m = 10, n = 100, quantile): {MS * mc.seconds:.1f} ms")
    rows += by_k + by_m + [mc] + digits
    figures = [
        plot_scaling(rows, out / f"scaling_{case.replace(' ', '_')}.png", case=case, xlabel=x)
        for case, x in (("vs K", "classes K"), ("vs m", "views m"), ("digits", "instances N"))
    ]
    return Report(
        claims=_claims(rows, tables["slopes"]),
        tables=tables,
        figures=figures,
        settings={**run, "device": "cpu", "n_y": 50, "N_sweeps": 500},
        measurements=rows,
    )


def _digits_table(rows: list[Measurement]) -> list[dict[str, Any]]:
    sizes = list(dict.fromkeys(r.size for r in rows if r.case == "digits"))
    return [
        {
            "N": N,
            **{f"{r.impl} ms": MS * r.seconds for r in rows if r.case == "digits" and r.size == N},
        }
        for N in sizes
    ]


def _speed_table(rows: list[Measurement]) -> list[dict[str, Any]]:
    """Per size: the vectorised time, and where the loop was timed too, its time and the ratio."""
    table = []
    for r in rows:
        if r.impl != "vectorised":
            continue
        row: dict[str, Any] = {"N m K": r.size, "vectorised s": r.seconds}
        for loop in rows:
            if loop.impl == "per-instance loop" and loop.size == r.size:
                row |= {"per-instance loop s": loop.seconds, "speed-up": loop.seconds / r.seconds}
        table.append(row)
    return table
