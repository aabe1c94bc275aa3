"""The headline experiment at small scale: ``trussreg reproduce [--quick] [--seed N] [--out DIR]``.

Synthetic correspondence sets (:func:`trussreg.make_synthetic_pair`, "boxes" scene, 60% overlap,
inlier noise 0.01 m) at several outlier ratios, with and without a clustered wrong-motion block
(10% of the matches inside one 0.3 m ball). Every method registers every pair; the tables give
registration recall (RE <= 15 deg and TE <= 0.3 m) with its binomial standard error, the mean
RE / TE over successes, inlier F1 and the median time. A GPU, when present, adds a CPU vs CuPy
timing of the truss decomposition.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from paperkit import cupy_available, figure, print_table, progress, save_figure
from trussreg.baselines import (
    kcore_registration,
    maximal_clique_registration,
    ransac,
    spectral_registration,
)
from trussreg.data import make_synthetic_pair
from trussreg.graph import compatibility_graph, consensus_sample
from trussreg.metrics import inlier_scores, registration_metrics
from trussreg.registration import TrussRegistration
from trussreg.truss import truss_decomposition

__all__ = ["METHODS", "median_seconds", "reproduce", "run_method"]

TAU = 0.1
Estimate = tuple[np.ndarray, np.ndarray, np.ndarray, float]


def _truss(**kwargs: Any) -> Callable[[np.ndarray, np.ndarray, int], Estimate]:
    def run(P: np.ndarray, Q: np.ndarray, seed: int) -> Estimate:
        start = time.perf_counter()
        reg = TrussRegistration(tau_c=TAU, **kwargs).fit(P, Q)
        return reg.R_, reg.t_, reg.inliers_, time.perf_counter() - start

    return run


def _baseline(fn: Callable[..., Any], **kwargs: Any) -> Callable[..., Estimate]:
    def run(P: np.ndarray, Q: np.ndarray, seed: int) -> Estimate:
        extra = {"seed": seed} if fn is ransac else {}
        res = fn(P, Q, tau=TAU, **kwargs, **extra)
        return res.R, res.t, res.inliers, res.seconds

    return run


METHODS: dict[str, Callable[[np.ndarray, np.ndarray, int], Estimate]] = {
    "TrussReg": _truss(),
    "TrussReg, no sampling": _truss(m=None),
    "TrussReg, no SDS": _truss(sds_weight=0.0),
    "TrussReg, k-core levels": _truss(structure="core"),
    "k-core": _baseline(kcore_registration),
    "spectral": _baseline(spectral_registration),
    "MAC-lite (M=300)": _baseline(maximal_clique_registration, m=300),
    "RANSAC-10k": _baseline(ransac, iters=10_000),
    "RANSAC-50k": _baseline(ransac, iters=50_000),
}
QUICK = ["TrussReg", "TrussReg, no SDS", "k-core", "spectral", "RANSAC-10k"]
FULL = [m for m in METHODS if m != "RANSAC-10k"]


def run_method(name: str, pair: dict[str, Any], seed: int) -> dict[str, Any]:
    """Register one pair with one method; metrics, inlier scores and seconds."""
    R, t, inliers, seconds = METHODS[name](pair["P"], pair["Q"], seed)
    metrics = registration_metrics(R, t, pair["R_gt"], pair["t_gt"])
    return {**metrics, **inlier_scores(inliers, pair["inlier_gt"]), "seconds": seconds}


def _summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    ok = [r for r in runs if r["success"]]
    recall = len(ok) / len(runs)
    return {
        "recall": recall,
        "recall_se": float(np.sqrt(recall * (1 - recall) / len(runs))),
        "RE_deg": float(np.mean([r["re_deg"] for r in ok])) if ok else float("nan"),
        "TE_m": float(np.mean([r["te"] for r in ok])) if ok else float("nan"),
        "inlier_F1": float(np.mean([r["f1"] for r in runs])),
        "ms": 1e3 * float(np.median([r["seconds"] for r in runs])),
    }


def median_seconds(fn: Callable[[], Any], repeats: int = 5, *, warmup: bool = True) -> float:
    """Median wall time of ``fn()`` over ``repeats`` calls (after one warm-up call: CUDA kernels
    compile on their first launch)."""
    if warmup:
        fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def _gpu_timing(n_corr: int, seed: int) -> list[dict[str, Any]]:
    rows = []
    for ratio in (0.5, 0.9):
        pair = make_synthetic_pair(n_corr=n_corr, outlier_ratio=ratio, seed=seed)
        A = compatibility_graph(pair["P"], pair["Q"], TAU)
        skeleton = consensus_sample(A, 500)
        A_s = A[skeleton][:, skeleton]
        cpu = median_seconds(lambda A_s=A_s: truss_decomposition(A_s, backend="numpy"))
        gpu = median_seconds(lambda A_s=A_s: truss_decomposition(A_s, backend="cupy"))
        rows.append(
            {
                "outlier ratio": ratio,
                "numpy ms": 1e3 * cpu,
                "cupy ms": 1e3 * gpu,
                "speed-up": cpu / gpu,
            }
        )
    return rows


def _plot(rows: list[dict[str, Any]], methods: list[str], out: Path) -> Path:
    fig, axes = figure(1, 3, size=(16, 4.5))
    for ax, clustered in zip(axes[0, :2], (0.0, 0.1), strict=True):
        for name in methods:
            mine = [r for r in rows if r["method"] == name and r["clustered"] == clustered]
            ax.errorbar(
                [r["outlier ratio"] for r in mine],
                [r["recall"] for r in mine],
                yerr=[r["recall_se"] for r in mine],
                marker="o",
                capsize=3,
                label=name,
            )
        ax.set(
            xlabel="outlier ratio",
            ylabel="registration recall",
            ylim=(-0.05, 1.05),
            title=f"clustered wrong matches: {int(100 * clustered)}%",
        )
    axes[0, 0].legend(fontsize=7)
    ax = axes[0, 2]
    for name in methods:
        mine = [r for r in rows if r["method"] == name and r["clustered"] == 0.0]
        ax.semilogy([r["outlier ratio"] for r in mine], [r["ms"] for r in mine], "o-", label=name)
    ax.set(xlabel="outlier ratio", ylabel="median time (ms)", title="time per pair")
    return save_figure(fig, out / "trussreg.png")


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    n_corr: int | None = None,
    n_pairs: int | None = None,
    ratios: list[float] | None = None,
    methods: list[str] | None = None,
) -> dict[str, Any]:
    """Recall, RE/TE, inlier F1 and time per method, outlier ratio and cluster setting.

    ``n_corr``, ``n_pairs``, ``ratios`` and ``methods`` override the sizes (for smoke tests).
    """
    n_corr = n_corr or (1000 if quick else 2000)
    n_pairs = n_pairs or (5 if quick else 6)
    ratios = ratios or ([0.8, 0.92, 0.95] if quick else [0.5, 0.8, 0.9, 0.92, 0.95, 0.98])
    methods = methods or (QUICK if quick else FULL)
    settings = [(r, c) for c in (0.0, 0.1) for r in ratios]
    cases = [(r, c, i) for r, c in settings for i in range(n_pairs)]
    runs: dict[tuple[str, float, float], list[dict[str, Any]]] = {}
    for ratio, clustered, i in progress(cases, "registering"):
        pair_seed = seed * 100_003 + i
        pair = make_synthetic_pair(
            n_corr=n_corr,
            outlier_ratio=ratio,
            clustered_outlier_frac=clustered,
            seed=pair_seed,
        )
        for name in methods:
            runs.setdefault((name, ratio, clustered), []).append(run_method(name, pair, pair_seed))
    rows = [
        {"method": name, "outlier ratio": ratio, "clustered": clustered, **_summary(rs)}
        for (name, ratio, clustered), rs in runs.items()
    ]
    rows.sort(key=lambda r: (r["clustered"], r["outlier ratio"], methods.index(r["method"])))
    for clustered in (0.0, 0.1):
        print_table(
            [
                {k: v for k, v in r.items() if k != "clustered"}
                for r in rows
                if r["clustered"] == clustered
            ],
            title=(
                f"N={n_corr}, {n_pairs} pairs per setting, clustered wrong matches "
                f"{int(100 * clustered)}% (recall_se: binomial standard error)"
            ),
        )
    results: dict[str, Any] = {
        "n_corr": n_corr,
        "n_pairs": n_pairs,
        "ratios": ratios,
        "methods": methods,
        "rows": rows,
    }
    if cupy_available():
        results["gpu_truss"] = _gpu_timing(n_corr, seed)
        print_table(results["gpu_truss"], title="truss decomposition on the M=500 skeleton")
    _plot(rows, methods, out)
    return results
