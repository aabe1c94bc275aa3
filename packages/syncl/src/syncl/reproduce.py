"""The headline experiment at small scale: ``syncl reproduce [--quick] [--seed N] [--out DIR]``.

Synthetic BEV tracking (:func:`syncl.make_bev_sequences`): 300 training and 50 test sequences
of 10 frames on a 32x32 grid of 1 m cells, up to 8 objects, births, deaths, occlusions and
clutter. The same :class:`syncl.QueryTracker` is trained for the same number of steps (8
sequences per step, clips of 3 frames) as

(a) ``baseline``: joint detection and tracking with the S-decoder only (PF-Track / MOTR style);
(b) ``+hybrid``: plus the C-decoder with Task-specific Hybrid Matching (all top-k kept);
(c) ``+hybrid+filter``: plus Dynamic Query Filtering;
(d) ``SynCL``: plus Instance-aware Contrastive Learning (the full method, Sec. 3).

Each is evaluated on the test sequences with the S-decoder only: AMOTA / AMOTP (nuScenes
style, 2 m, 40 recall thresholds from 0.1), MOTA, IDS, centre-distance detection AP and the CPU
milliseconds per inference frame. The full run has two seeds per variant (a gain counts only
when it exceeds the spread between seeds), the quick run (a) and (d) with one seed.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit import Claim, Report, figure, print_table, progress, save_figure
from syncl.data import make_bev_sequences
from syncl.metrics import amota, clear_mot, detection_ap
from syncl.tracker import QueryTracker, SynCLCriterion, train_tracker

__all__ = ["RUNS", "VARIANTS", "claims", "reproduce", "run_variant"]

#: The ablation ladder: name -> SynCLCriterion switches (hybrid, filter, icl).
VARIANTS: dict[str, tuple[bool, bool, bool]] = {
    "baseline": (False, False, False),
    "+hybrid": (True, False, False),
    "+hybrid+filter": (True, True, False),
    "SynCL": (True, True, True),
}
#: Settings of the quick (True) and full (False) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "variants": ["baseline", "SynCL"],
        "seeds": 1,
        "steps": 200,
        "n_train": 300,
        "n_test": 50,
    },
    False: {"variants": list(VARIANTS), "seeds": 2, "steps": 300, "n_train": 300, "n_test": 50},
}
#: Training settings shared by every variant.
TRAIN = {"batch_size": 8, "clip_len": 3, "lr": 3e-3}


def datasets(run: dict[str, Any], seed: int) -> dict[str, Any]:
    """The training and test sequences of a run (``RUNS[quick]``) for a data seed."""
    X, gt = make_bev_sequences(run["n_train"], seed=1000 + seed)
    X_test, gt_test = make_bev_sequences(run["n_test"], seed=2000 + seed)
    return {"X": X, "gt": gt, "X_test": X_test, "gt_test": gt_test}


def run_variant(
    name: str, data: dict[str, Any], steps: int, seed: int, **criterion: Any
) -> dict[str, Any]:
    """Train one variant with one seed and evaluate it on the test sequences; ``criterion``
    overrides :class:`syncl.SynCLCriterion` settings (``k``, ``kernel``, ...)."""
    hybrid, filt, icl = VARIANTS[name]
    torch.manual_seed(seed)
    model = QueryTracker()
    cpu0 = time.process_time()
    hist = train_tracker(
        model,
        data["X"],
        data["gt"],
        SynCLCriterion(hybrid, filt, icl, **criterion),
        steps=steps,
        seed=seed,
        **TRAIN,
    )
    train_cpu = time.process_time() - cpu0
    cpu0 = time.process_time()
    preds = [model.run_tracker(x) for x in data["X_test"]]
    n_frames = sum(len(p) for p in preds)
    infer_ms = 1e3 * (time.process_time() - cpu0) / n_frames
    gt = data["gt_test"]
    a = amota(gt, preds)
    c = clear_mot(gt, preds)
    cand = float(np.sum(hist["n_candidates"]))
    return {
        "AMOTA": a["AMOTA"],
        "AMOTP": a["AMOTP"],
        "MOTA": c["MOTA"],
        "IDS": c["IDS"],
        "AP": detection_ap(gt, preds),
        "ms_per_frame": infer_ms,
        "boxes_per_frame": sum(len(f) for p in preds for f in p) / n_frames,
        "train_cpu_s": train_cpu,
        "kept_fraction": float(np.sum(hist["n_kept"]) / cand) if cand else None,
        "filter_open_fraction": float(np.mean(hist["filter_open"]) / (3 * TRAIN["clip_len"]))
        if hybrid
        else None,
        "motar_curve": a["MOTAR_curve"]["MOTAR"],
        "loss": hist["loss"][-1],
    }


def _summary(per_seed: dict[str, list[dict[str, Any]]]) -> list[dict[str, Any]]:
    rows = []
    for name, runs in per_seed.items():
        row: dict[str, Any] = {"method": name}
        for key, label in (
            ("AMOTA", "AMOTA"),
            ("AMOTP", "AMOTP"),
            ("MOTA", "MOTA"),
            ("IDS", "IDS"),
            ("AP", "det AP"),
            ("ms_per_frame", "inference ms/frame"),
            ("boxes_per_frame", "boxes/frame"),
        ):
            vals = [r[key] for r in runs]
            row[label] = round(float(np.mean(vals)), 4)
        row["AMOTA per seed"] = ", ".join(f"{r['AMOTA']:.3f}" for r in runs)
        row["AP per seed"] = ", ".join(f"{r['AP']:.3f}" for r in runs)
        row["train CPU s"] = round(float(np.mean([r["train_cpu_s"] for r in runs])), 1)
        rows.append(row)
    return rows


def _gain(per_seed, a: str, b: str, key: str) -> tuple[float, float | None]:
    """Mean gain of ``b`` over ``a`` and the seed spread (largest max-min of the two)."""
    va = [r[key] for r in per_seed[a]]
    vb = [r[key] for r in per_seed[b]]
    spread = max(np.ptp(va), np.ptp(vb)) if len(va) > 1 else None
    return float(np.mean(vb) - np.mean(va)), (None if spread is None else float(spread))


def _verdict(gains: list[tuple[float, float | None]]) -> str:
    if all(s is not None and g > s for g, s in gains):
        return "held"
    if any(g > 0 for g, _ in gains):
        return "partly"
    return "not held"


def claims(per_seed: dict[str, list[dict[str, Any]]]) -> list[Claim]:
    """The report's claims from the per-seed results of each variant."""
    g_amota = _gain(per_seed, "baseline", "SynCL", "AMOTA")
    g_ap = _gain(per_seed, "baseline", "SynCL", "AP")

    def show(g):
        return f"{g[0]:+.3f}" + ("" if g[1] is None else f" (seed spread {g[1]:.3f})")

    headline = Claim(
        "SynCL improves the tracker over joint training with the S-decoder only, in AMOTA and "
        "detection AP",
        paper="+3.9 AMOTA over PF-Track on nuScenes (abstract of an earlier version); "
        "58.9% AMOTA with the strongest detector",
        measured=f"AMOTA {show(g_amota)}, AP {show(g_ap)}",
        verdict=_verdict([g_amota, g_ap]),
        why="held only when both mean gains exceed the spread between seeds; one seed (quick "
        "run) can give at most 'partly'; a one-minute CPU tracker on synthetic BEV rasters",
    )
    ms = {n: float(np.mean([r["ms_per_frame"] for r in per_seed[n]])) for n in per_seed}
    boxes = {n: float(np.mean([r["boxes_per_frame"] for r in per_seed[n]])) for n in per_seed}
    ratio = ms["SynCL"] / ms["baseline"]
    infer = Claim(
        "SynCL adds no inference cost",
        paper="no additional inference costs (abstract); the C-decoder is dropped at inference",
        measured=f"CPU ms per frame: SynCL {ms['SynCL']:.2f}, baseline {ms['baseline']:.2f} "
        f"(ratio {ratio:.3f}); the inference graph is the same (no C-decoder call, tested)",
        verdict="held" if abs(ratio - 1) <= 0.05 else "partly",
        why="same network at inference (the benchmark times it on the same workload); here the "
        "cost per frame also grows with the number of live track queries, which differs "
        "between trained models (output boxes per frame: "
        f"SynCL {boxes['SynCL']:.2f}, baseline {boxes['baseline']:.2f})",
    )
    out = [headline, infer]
    if all(v in per_seed for v in VARIANTS):
        ladder = list(VARIANTS)
        steps = []
        gains = []
        for prev, cur in zip(ladder, ladder[1:], strict=False):
            g = _gain(per_seed, prev, cur, "AMOTA")
            gains.append(g)
            steps.append(f"{cur} vs {prev}: {show(g)}")
        n_supported = sum(s is not None and g > s for g, s in gains)
        n_nonneg = sum(g >= 0 for g, _ in gains)
        verdict = "held" if n_supported == 3 else ("partly" if n_nonneg >= 2 else "not held")
        out.append(
            Claim(
                "Each component (hybrid matching, dynamic filtering, contrastive learning) adds a "
                "non-negative AMOTA gain",
                paper="the paper's ablation (each module adds AMOTA over PF-Track)",
                measured="; ".join(steps),
                verdict=verdict,
                why=f"{n_nonneg} of 3 steps non-negative, {n_supported} above the seed spread",
            )
        )
    else:
        out.append(
            Claim(
                "Each component adds a non-negative AMOTA gain",
                paper="the paper's ablation",
                measured="not run in --quick (baseline and SynCL only)",
                verdict="not testable here",
                why="the full run has the ablation ladder",
            )
        )
    out.append(
        Claim(
            "58.9% AMOTA on nuScenes (state of the art among camera-based trackers)",
            paper="abstract",
            measured="not run: no nuScenes data or multi-camera detector here",
            verdict="not testable here",
            why="the synthetic BEV analogue is the headline claim above",
        )
    )
    return out


def _plot(per_seed: dict[str, list[dict[str, Any]]], path: Path) -> Path:
    fig, axes = figure(1, 2, size=(11.0, 4.0))
    axes = np.atleast_1d(axes).ravel()
    names = list(per_seed)
    for ax, key in zip(axes[:1], ("AMOTA",), strict=True):
        for i, metric in enumerate((key, "AP")):
            for j, n in enumerate(names):
                vals = [r[metric] for r in per_seed[n]]
                x = j + 0.2 * (2 * i - 1)
                ax.bar(
                    x,
                    np.mean(vals),
                    0.38,
                    color=f"C{i}",
                    label=("AMOTA" if metric == "AMOTA" else "det AP") if j == 0 else None,
                )
                ax.plot([x] * len(vals), vals, "k.", ms=5)
        ax.set_xticks(range(len(names)), names)
        ax.set_ylabel("score (bars: mean; dots: seeds)")
        ax.set_title("Synthetic BEV tracking, 50 test sequences")
        ax.legend()
    recall = np.linspace(0.1, 1.0, 40)
    for j, n in enumerate(names):
        axes[1].plot(
            recall, np.mean([r["motar_curve"] for r in per_seed[n]], axis=0), color=f"C{j}", label=n
        )
    axes[1].set_xlabel("recall")
    axes[1].set_ylabel("MOTAR (mean over seeds)")
    axes[1].legend()
    return save_figure(fig, path)


def reproduce(*, quick: bool = False, seed: int = 0, out: str | Path = ".") -> Report:
    """Run the experiment of the module docstring; print the table; return the report."""
    run = RUNS[bool(quick)]
    cpu0 = time.process_time()
    data = datasets(run, seed)
    jobs = [(n, seed + s) for s in range(run["seeds"]) for n in run["variants"]]
    per_seed: dict[str, list[dict[str, Any]]] = {n: [] for n in run["variants"]}
    for name, s in progress(jobs, "train and evaluate (variant, seed)"):
        per_seed[name].append(run_variant(name, data, run["steps"], s))
    table = _summary(per_seed)
    print_table(table, title="SynCL vs joint training (synthetic BEV, 50 test sequences)")
    report_claims = claims(per_seed)
    print_table(
        [
            {"claim": c.statement, "verdict": c.verdict, "measured": c.measured}
            for c in report_claims
        ],
        title="claims",
    )
    print(f"claim_supported: {report_claims[0].verdict == 'held'}")
    figure_path = _plot(per_seed, Path(out) / "syncl.png")
    return Report(
        claims=report_claims,
        tables={"tracking": table},
        figures=[figure_path],
        settings={
            **run,
            **TRAIN,
            "seed": seed,
            "grid": 32,
            "n_frames": 10,
            "k": 4,
            "tau": 0.1,
            "w_icl": 0.1,
            "dist_thr": 2.0,
        },
        data={"per_seed": per_seed, "cpu_s": time.process_time() - cpu0},
    )
