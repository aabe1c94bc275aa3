"""The headline experiment at small scale: ``trussreg reproduce [--quick] [--seed N] [--out DIR]``.

Synthetic correspondence sets (:func:`trussreg.make_synthetic_pair`, "boxes" scene, 60% overlap,
inlier noise 0.01 m) at several outlier ratios, with and without a clustered wrong-motion block
(10% of the matches inside one 0.3 m ball). Every method registers every pair; the tables give
registration recall (RE <= 15 deg and TE <= 0.3 m) with its binomial standard error, the mean
RE / TE over successes, inlier F1 and the median time. A GPU, when present, adds a CPU vs CUDA
timing of the truss decomposition. The claims' verdicts follow the rules in their ``why``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from paperkit import (
    Claim,
    Measurement,
    Report,
    cupy_available,
    figure,
    measure,
    print_table,
    progress,
    save_figure,
)
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

__all__ = ["FULL", "METHODS", "QUICK", "Settings", "reproduce", "run_method"]

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


@dataclass(frozen=True)
class Settings:
    """The sizes of one run: correspondences per pair, pairs per setting, outlier ratios (each
    with and without clustered wrong matches) and the methods compared."""

    n_corr: int
    n_pairs: int
    ratios: tuple[float, ...]
    methods: tuple[str, ...]


#: ``trussreg reproduce --quick`` and ``trussreg reproduce``.
QUICK = Settings(
    n_corr=1000,
    n_pairs=5,
    ratios=(0.8, 0.92, 0.95),
    methods=("TrussReg", "TrussReg, no SDS", "k-core", "spectral", "RANSAC-10k"),
)
FULL = Settings(
    n_corr=2000,
    n_pairs=6,
    ratios=(0.5, 0.8, 0.9, 0.92, 0.95, 0.98),
    methods=tuple(m for m in METHODS if m != "RANSAC-10k"),
)
#: Share of the matches in the clustered wrong-motion block of the clustered settings.
CLUSTERED = 0.1
#: Outlier ratios from which the accuracy claim compares the methods.
HIGH_RATIO = 0.9
#: Time saving of consensus sampling that counts as several-fold.
SEVERAL_FOLD = 2.0


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


def _cells(rows: Sequence[dict[str, Any]], method: str, clustered: float) -> dict[float, dict]:
    return {
        r["outlier ratio"]: r for r in rows if r["method"] == method and r["clustered"] == clustered
    }


def _accuracy_claim(rows: Sequence[dict[str, Any]], settings: Settings) -> Claim:
    """Held when TrussReg beats the best baseline somewhere at outlier ratios >= HIGH_RATIO and
    loses nowhere; not testable when every cell ties (the data cannot separate the methods)."""
    baselines = [m for m in settings.methods if not m.startswith("TrussReg")]
    ours = _cells(rows, "TrussReg", 0.0)
    high = [r for r in ours if r >= HIGH_RATIO]
    best = {r: max(_cells(rows, m, 0.0)[r]["recall"] for m in baselines) for r in high}
    lost = [r for r in high if ours[r]["recall"] < best[r]]
    won = [r for r in high if ours[r]["recall"] > best[r]]
    if not high or not baselines:
        verdict, rule = "not testable here", "no outlier ratio >= 0.9 or no baseline in this run"
    elif lost:
        verdict, rule = "not held", f"a baseline registers more pairs at {lost}"
    elif won:
        verdict, rule = "held", f"TrussReg registers more pairs than every baseline at {won}"
    else:
        verdict = "not testable here"
        rule = "every cell ties: with uniformly random outliers the methods cannot be separated"
    shown = "; ".join(
        f"{r:g}: TrussReg {ours[r]['recall']:.2f}, best baseline {best[r]:.2f}" for r in high
    )
    return Claim(
        "k-truss outlier rejection registers at high outlier ratios at least as often as k-core, "
        "spectral, maximal-clique and RANSAC selection",
        paper="higher registration recall than clique-, core- and RANSAC-based selection on "
        "3DMatch, 3DLoMatch and KITTI (abstract; the real-data numbers were not retrieved)",
        measured=f"registration recall without clusters ({shown})",
        verdict=verdict,
        why=(
            f"{rule}; baselines {', '.join(baselines)}; synthetic pairs, N = {settings.n_corr}, "
            f"{settings.n_pairs} pairs per setting"
        ),
    )


def _sds_claim(rows: Sequence[dict[str, Any]], settings: Settings) -> Claim:
    """Held when SDS registers every clustered pair the no-SDS ablation misses; partly when it
    registers more somewhere and fewer nowhere."""
    statement = "The spatial distribution score stops dense clusters of wrong matches from winning"
    paper = "SDS rejects spatially concentrated consistent outliers (abstract)"
    if "TrussReg, no SDS" not in settings.methods:
        return Claim(
            statement, paper, "not run", "not testable here", "no SDS ablation in this run"
        )
    ours, plain = _cells(rows, "TrussReg", CLUSTERED), _cells(rows, "TrussReg, no SDS", CLUSTERED)
    better = [r for r in ours if ours[r]["recall"] > plain[r]["recall"]]
    worse = [r for r in ours if ours[r]["recall"] < plain[r]["recall"]]
    unfixed = [r for r in ours if plain[r]["recall"] < 1 and ours[r]["recall"] < 1]
    if worse or not better:
        verdict = "not held"
    else:
        verdict = "partly" if unfixed else "held"
    shown = "; ".join(
        f"{r:g}: {ours[r]['recall']:.2f} vs {plain[r]['recall']:.2f}" for r in sorted(ours)
    )
    return Claim(
        statement,
        paper=paper,
        measured=f"recall with {int(100 * CLUSTERED)}% clustered wrong matches, SDS vs no SDS "
        f"({shown})",
        verdict=verdict,
        why=(
            "held when SDS registers every clustered setting the ablation fails, partly when it "
            f"registers more somewhere and fewer nowhere (still failing at {unfixed or 'none'}: "
            "where the cluster outnumbers the inliers by more than the (1 + SDS) factor of at most "
            f"2 can make up); {settings.n_pairs} pairs per setting"
        ),
    )


def _sampling_claim(rows: Sequence[dict[str, Any]], settings: Settings) -> Claim:
    """Held when sampling saves at least SEVERAL_FOLD in time at every ratio without clusters
    and loses no recall there."""
    statement = "Consensus sampling cuts the time several-fold without losing recall"
    paper = "the skeleton of consensus-sampled correspondences speeds up the truss (abstract)"
    if "TrussReg, no sampling" not in settings.methods:
        return Claim(
            statement,
            paper,
            "not run",
            "not testable here",
            "the unsampled pipeline is not in this run (trussreg bench times both)",
        )
    ours, full = _cells(rows, "TrussReg", 0.0), _cells(rows, "TrussReg, no sampling", 0.0)
    speedup = {r: full[r]["ms"] / ours[r]["ms"] for r in ours}
    kept = all(ours[r]["recall"] >= full[r]["recall"] for r in ours)
    ours_c, full_c = (
        _cells(rows, "TrussReg", CLUSTERED),
        _cells(rows, "TrussReg, no sampling", CLUSTERED),
    )
    lost_c = [r for r in ours_c if ours_c[r]["recall"] < full_c[r]["recall"]]
    fast = min(speedup.values()) >= SEVERAL_FOLD
    return Claim(
        statement,
        paper=paper,
        measured=(
            f"{min(speedup.values()):.3g}-{max(speedup.values()):.3g}x less time per pair at "
            f"N = {settings.n_corr}; recall without clusters "
            f"{'kept' if kept else 'lost'} at every ratio"
        ),
        verdict="held" if fast and kept else "not held",
        why=(
            f"held when the time saving is at least {SEVERAL_FOLD:g}x at every ratio without "
            f"clusters and no recall is lost there; with clusters sampling lost recall at "
            f"{lost_c or 'no ratio'}"
        ),
    )


def _gpu_timing(n_corr: int, seed: int) -> list[Measurement]:
    """The truss decomposition of the 500-node skeleton on both backends."""
    rows = []
    for ratio in (0.5, 0.9):
        pair = make_synthetic_pair(n_corr=n_corr, outlier_ratio=ratio, seed=seed)
        A = compatibility_graph(pair["P"], pair["Q"], TAU)
        skeleton = consensus_sample(A, 500)
        A_s = A[skeleton][:, skeleton]
        for backend in ("reference", "cuda"):
            fn = partial(truss_decomposition, A_s, backend=backend)
            params = {"outlier ratio": ratio}
            rows.append(measure(backend, 500, fn, case="skeleton truss", params=params))
    return rows


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Recall, RE/TE, inlier F1 and time per method, outlier ratio and cluster setting, at the
    sizes of :data:`QUICK` or :data:`FULL`; the claims with their verdicts."""
    settings = QUICK if quick else FULL
    methods = list(settings.methods)
    cases = [
        (r, c, i)
        for c in (0.0, CLUSTERED)
        for r in settings.ratios
        for i in range(settings.n_pairs)
    ]
    runs: dict[tuple[str, float, float], list[dict[str, Any]]] = {}
    for ratio, clustered, i in progress(cases, "registering"):
        pair_seed = seed * 100_003 + i
        pair = make_synthetic_pair(
            n_corr=settings.n_corr,
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
    tables = {}
    for clustered, key in ((0.0, "uniform outliers"), (CLUSTERED, "clustered outliers")):
        tables[key] = [
            {k: v for k, v in r.items() if k != "clustered"}
            for r in rows
            if r["clustered"] == clustered
        ]
        print_table(
            tables[key],
            title=(
                f"N={settings.n_corr}, {settings.n_pairs} pairs per setting, clustered wrong "
                f"matches {int(100 * clustered)}% (recall_se: binomial standard error)"
            ),
        )
    measurements: list[Measurement] = []
    if cupy_available():
        measurements = _gpu_timing(settings.n_corr, seed)
        tables["gpu truss"] = [
            {"backend": m.impl, **m.params, "ms": 1e3 * m.seconds} for m in measurements
        ]
        print_table(tables["gpu truss"], title="truss decomposition on the M=500 skeleton")
    claims = [
        _accuracy_claim(rows, settings),
        _sds_claim(rows, settings),
        _sampling_claim(rows, settings),
    ]
    return Report(
        claims=claims,
        tables=tables,
        figures=[_plot(rows, methods, out)],
        settings={
            **asdict(settings),
            "seed": seed,
            "clustered_outlier_frac": CLUSTERED,
            "tau_c": TAU,
            "tau_in": TAU,
            "scene": "boxes",
            "overlap": 0.6,
            "noise_m": 0.01,
            "success": "RE <= 15 deg and TE <= 0.3 m",
        },
        measurements=measurements,
        data={"runs": {f"{m} | {r:g} | {c:g}": rs for (m, r, c), rs in runs.items()}},
    )
