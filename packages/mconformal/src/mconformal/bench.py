"""Benchmark: calibration and prediction time against the number of classes K, of views m and of
instances N (CPU; numpy only, so ``--device`` is ignored).

``mconformal bench [--quick]`` measures, with median wall-clock times (``time.perf_counter``):

1. per-view p-values, vectorised ``searchsorted`` over all instances and views against a
   per-instance Python loop (the naive baseline), as a speed-up ratio at the same size, and the
   vectorised time at N m K = 1e6 (target < 1 s);
2. ``fit_scores`` (calibration) and ``predict_pvalues_from_scores`` against K (m = 5) and against m
   (K = 10), cold (null laws built, cache cleared) and warm (cached), with log-log slopes;
3. the build time of one Monte Carlo null law (B = 20 000, m = 10; target < 0.2 s per key);
4. ``predict_set`` on digits (N = 500, m = 5, K = 10, logistic regression; target < 0.5 s cached)
   and its slope against N.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from mconformal.aggregators import _null_statistics as null_statistics
from mconformal.aggregators import clear_null_cache, get_aggregator
from mconformal.classifier import MultiInputConformalClassifier
from mconformal.data import digits_split, same_class_views
from paperkit import figure, loglog_slope, print_table, progress, save_figure

__all__ = ["bench", "median_time", "naive_view_pvalues"]


def median_time(
    fn: Callable[[], Any], repeats: int = 5, setup: Callable[[], Any] | None = None
) -> float:
    """Median wall-clock seconds of ``fn()`` over ``repeats`` runs (``setup()`` before each)."""
    times = []
    for _ in range(repeats):
        if setup is not None:
            setup()
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def naive_view_pvalues(cal_scores: list[np.ndarray], scores: np.ndarray) -> np.ndarray:
    """The reference: a Python loop over instances, :math:`(\\#\\{c < s\\} + 1)/(n + 1)` by
    comparison with every calibration score. ``scores`` ``(N, m, K)``."""
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


def _pvalue_speed(repeats: int) -> list[dict[str, Any]]:
    rng = np.random.default_rng(1)
    clf = _calibrated(10, 100, "mean")
    cal = [c.scores for c in clf.calibration_]
    rows = []
    for N in (2000, 20_000):
        scores = _scores(rng, (N, 5, 10))
        fast = median_time(lambda s=scores: clf._counts(s, clf._tie_rng()), repeats)
        row = {"N m K": N * 50, "vectorised s": fast}
        if N == 2000:
            slow = median_time(lambda s=scores: naive_view_pvalues(cal, s), max(1, repeats // 2))
            row |= {"per-instance loop s": slow, "speed-up": slow / fast}
        rows.append(row)
    return rows


def _sweep(name: str, values: list[int], make: Callable[[int], tuple[int, int]], repeats: int):
    rows = []
    for value in progress(values, f"bench vs {name}"):
        K, m = make(value)
        rng = np.random.default_rng(value)
        scores = _scores(rng, (500, m, K))
        y = np.repeat(np.arange(K), 50)
        cal = _scores(rng, (len(y), K))
        for aggregator in ("quantile", "mean"):
            clf = MultiInputConformalClassifier(aggregator=aggregator)
            fit = median_time(lambda c=clf, s=cal, y=y: c.fit_scores(s, y), repeats)
            cold = median_time(
                lambda c=clf, s=scores: c.predict_pvalues_from_scores(s),
                1,
                setup=clear_null_cache,
            )
            warm = median_time(lambda c=clf, s=scores: c.predict_pvalues_from_scores(s), repeats)
            rows.append(
                {
                    name: value,
                    "aggregator": aggregator,
                    "fit ms": 1e3 * fit,
                    "predict cold ms": 1e3 * cold,
                    "predict warm ms": 1e3 * warm,
                }
            )
    return rows


def _slopes(rows: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    out = []
    for aggregator in ("quantile", "mean"):
        mine = [r for r in rows if r["aggregator"] == aggregator]
        xs = [r[name] for r in mine]
        out.append(
            {
                "against": name,
                "aggregator": aggregator,
                "fit slope": loglog_slope(xs, [r["fit ms"] for r in mine]),
                "predict warm slope": loglog_slope(xs, [r["predict warm ms"] for r in mine]),
            }
        )
    return out


def _digits(repeats: int, sizes: list[int]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    parts = digits_split(0)
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000)).fit(*parts["train"])
    clf = MultiInputConformalClassifier(model, aggregator="quantile")
    fit = median_time(lambda: clf.fit(*parts["cal"]), repeats)
    rng = np.random.default_rng(0)
    rows = []
    for N in sizes:
        X, _ = same_class_views(*parts["test"], 5, N, rng)
        clear_null_cache()
        cold = median_time(lambda X=X: clf.predict_set(X), 1)
        warm = median_time(lambda X=X: clf.predict_set(X), repeats)
        rows.append({"N": N, "predict_set cold ms": 1e3 * cold, "predict_set warm ms": 1e3 * warm})
    target = next(r for r in rows if r["N"] == 500) if 500 in sizes else rows[0]
    return {"fit ms": 1e3 * fit, **target}, rows


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    sizes: dict[str, list[int]] | None = None,
) -> dict[str, Any]:
    """Run the four measurements; print the tables; write ``scaling.png``.

    ``sizes`` overrides the sweeps (keys ``K``, ``m``, ``N``; for smoke tests).
    """
    sizes = sizes or {
        "K": [5, 10, 20, 50] if quick else [5, 10, 20, 50, 100, 200],
        "m": [1, 2, 3, 5, 10] if quick else [1, 2, 3, 5, 10, 20],
        "N": [250, 500, 1000] if quick else [500, 1000, 2000, 4000, 8000],
    }
    repeats = 3 if quick else 5
    speed = _pvalue_speed(repeats)
    print_table(speed, title="per-view p-values (K = 10, m = 5, n_y = 100): vectorised vs loop")
    by_k = _sweep("K", sizes["K"], lambda K: (K, 5), repeats)
    print_table(by_k, title="calibration (n_y = 50) and prediction (N = 500, m = 5) vs K")
    by_m = _sweep("m", sizes["m"], lambda m: (10, m), repeats)
    print_table(by_m, title="calibration (n_y = 50) and prediction (N = 500, K = 10) vs m")
    slopes = _slopes(by_k, "K") + _slopes(by_m, "m")
    print_table(slopes, title="log-log slopes of the time")
    agg = get_aggregator("quantile")
    build = median_time(
        lambda: null_statistics(100, 10, agg, False, 20_000, 0),
        repeats,
        setup=clear_null_cache,
    )
    digits, by_n = _digits(3 * repeats, sizes["N"])  # short calls: more repeats against noise
    digits["N slope (warm)"] = loglog_slope(
        [r["N"] for r in by_n], [r["predict_set warm ms"] for r in by_n]
    )
    print_table(by_n, title="digits predict_set (m = 5, K = 10, quantile) vs N")
    print(
        f"MC null law build (B = 20000, m = 10, n = 100, quantile): {1e3 * build:.1f} ms per key; "
        f"digits N = {digits['N']}: predict_set {digits['predict_set warm ms']:.1f} ms cached"
    )

    fig, axes = figure(1, 3, size=(14, 4))
    for ax, rows, name in ((axes[0, 0], by_k, "K"), (axes[0, 1], by_m, "m")):
        for aggregator in ("quantile", "mean"):
            mine = [r for r in rows if r["aggregator"] == aggregator]
            xs = [r[name] for r in mine]
            ax.loglog(xs, [r["predict warm ms"] for r in mine], "o-", label=f"{aggregator} warm")
            ax.loglog(xs, [r["predict cold ms"] for r in mine], "x--", label=f"{aggregator} cold")
        ax.set(xlabel=name, ylabel="predict ms (N = 500)", title=f"prediction time vs {name}")
        ax.legend(fontsize=7)
    axes[0, 2].loglog(
        [r["N"] for r in by_n], [r["predict_set warm ms"] for r in by_n], "o-", label="warm"
    )
    axes[0, 2].set(xlabel="N", ylabel="ms", title="digits predict_set vs N (m = 5)")
    save_figure(fig, out / "scaling.png")
    return {
        "device": "cpu",
        "pvalue_speed": speed,
        "by_K": by_k,
        "by_m": by_m,
        "slopes": slopes,
        "mc_null_build_ms": 1e3 * build,
        "digits": digits,
        "digits_by_N": by_n,
    }
