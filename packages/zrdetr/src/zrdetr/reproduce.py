r"""The headline experiment at small scale: ``zrdetr reproduce [--quick] [--uda] [--seed N]
[--out DIR]``.

Data (:func:`~zrdetr.data.make_anatomy_scenes`, 64 x 64, K = 6): 1,200 source training images
(zoom 0.8-1.25); three test sets of 300 images: in-distribution, zoom shift (zoom 0.5-2.0) and
target domain (a second scanner); 1,000 unlabeled target images for the UDA. Methods (paper
Sec. 4: the baseline and single-module ablations): DETR-lite (MLP head, no zoom, no relation),
+zoom, +relation, +GP and the full ZR-DETR (d = 64, batch 32, 500 steps each); ``--quick``:
DETR-lite and ZR-DETR only, 80 steps each and 150 images per test set (a smoke run, not
evidence). Evaluation uses the
predicted zoom (read off the boxes of a zoom-free first decoder pass). Metrics: mAP50 and
mAP50:95 with bootstrap 95% intervals over test images, ECE,
Spearman(box variance, 1 - IoU), and false positives whose relation NLL exceeds the 99th
percentile of the source structures' (anatomically implausible detections).

Claims, headline first: (1) ZR-DETR beats DETR-lite on all three test sets (held when the
mAP50 intervals separate on all three; not testable when DETR-lite's in-distribution mAP50 is
below 0.3); (2) the gain is largest under zoom shift; (3) the relation term reduces implausible
detections; (4) the GP variance tracks localisation error (Spearman > 0.3); with ``--uda``,
(5) the mean-teacher adaptation improves target mAP50.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit import Claim, Report, figure, print_table, save_figure
from zrdetr.data import make_anatomy_scenes
from zrdetr.model import ZRDETR
from zrdetr.train import (
    adapt_mean_teacher,
    detections,
    evaluate,
    fit_prior,
    predict,
    structure_nll,
    train_detector,
)

__all__ = ["METHODS", "reproduce"]

K = 6


@dataclass
class Method:
    label: str
    kwargs: dict[str, Any] = field(default_factory=dict)


LITE = Method("DETR-lite", {"use_zoom": False, "use_relation": False, "head": "mlp"})
FULL = Method("ZR-DETR", {})
METHODS = [
    LITE,
    Method("+zoom", {"use_zoom": True, "use_relation": False, "head": "mlp"}),
    Method("+relation", {"use_zoom": False, "use_relation": True, "head": "mlp"}),
    Method("+GP", {"use_zoom": False, "use_relation": False, "head": "gp"}),
    FULL,
]
SETS = ("in-dist", "zoom-shift", "target")


def _data(seed: int, n_train: int, n_test: int) -> dict[str, dict[str, torch.Tensor]]:
    base = 1000 * seed
    return {
        "train": make_anatomy_scenes(n_train, seed=base + 1),
        "in-dist": make_anatomy_scenes(n_test, seed=base + 2),
        "zoom-shift": make_anatomy_scenes(n_test, zoom_range=(0.5, 2.0), seed=base + 3),
        "target": make_anatomy_scenes(n_test, domain="target", seed=base + 4),
    }


def _implausible_threshold(prior, train: dict[str, torch.Tensor]) -> float:
    """99th percentile of the relation NLL of the untruncated source training structures."""
    ok = (train["present"] & ~train["truncated"]).numpy()
    nll = structure_nll(prior, train["boxes"].double().numpy(), ok)
    return float(np.nanpercentile(nll[ok], 99))


def _evaluate_all(model, data, prior, thr, n_boot, seed) -> dict[str, dict[str, Any]]:
    results = {}
    for name in SETS:
        out = predict(model, data[name]["images"])  # zoom=None: the predicted zoom
        det = detections(out, K, prior, lam=0.1 if model.use_relation else 0.0)
        results[name] = evaluate(
            det, data[name], implausible_threshold=thr, n_boot=n_boot, seed=seed
        )
    return results


def _ci(value: float, ci: tuple[float, float]) -> str:
    return f"{value:.3f} [{ci[0]:.3f}, {ci[1]:.3f}]"


def _row(label: str, res: dict[str, dict[str, Any]], cpu: float) -> dict[str, Any]:
    ind = res["in-dist"]
    return {
        "method": label,
        "mAP50": _ci(ind["mAP50"], ind["mAP50 CI"]),
        "mAP50:95 (in-dist)": _ci(ind["mAP50:95"], ind["mAP50:95 CI"]),
        "mAP50 (zoom-shift)": _ci(res["zoom-shift"]["mAP50"], res["zoom-shift"]["mAP50 CI"]),
        "mAP50 (target)": _ci(res["target"]["mAP50"], res["target"]["mAP50 CI"]),
        "ECE": ind["ECE"],
        "Spearman(var, -IoU)": ind["Spearman"],
        "implausible FP / 100 img": ind["implausible FP / 100 img"],
        "train CPU s": cpu,
    }


def _gain_claims(res: dict[str, dict], steps: int) -> list[Claim]:
    lite, full = res[LITE.label], res[FULL.label]
    gains, separate, below = {}, {}, {}
    for s in SETS:
        gains[s] = full[s]["mAP50"] - lite[s]["mAP50"]
        separate[s] = full[s]["mAP50 CI"][0] > lite[s]["mAP50 CI"][1]
        below[s] = full[s]["mAP50 CI"][1] < lite[s]["mAP50 CI"][0]
    shown = "; ".join(
        f"{s}: {full[s]['mAP50']:.3f} vs {lite[s]['mAP50']:.3f} (CIs "
        f"{'separate, higher' if separate[s] else 'separate, lower' if below[s] else 'overlap'})"
        for s in SETS
    )
    lite_ind = lite["in-dist"]["mAP50"]
    if lite_ind < 0.3:
        verdict = "not testable here"
        why = (
            f"DETR-lite's in-distribution mAP50 is {lite_ind:.3f} < 0.3 after {steps} steps, "
            "so the baseline has not learned the task and the comparison is not informative"
        )
    elif all(separate.values()):
        verdict, why = "held", "the bootstrap 95% CIs of mAP50 separate on all three test sets"
    elif all(g > 0 for g in gains.values()) or any(separate.values()):
        verdict = "partly"
        why = "higher on some or all sets, but the 95% CIs separate only on " + (
            ", ".join(s for s in SETS if separate[s]) or "none"
        )
    else:
        verdict, why = "not held", "ZR-DETR is not above DETR-lite on every test set"
    why += (
        f"; {steps} steps, one seed; the generator applies zoom as the zoom embedding "
        "assumes and draws layouts from one template, so zoom and relation modules are "
        "favoured by construction"
    )
    claims = [
        Claim(
            "ZR-DETR improves over a strong DETR baseline on every benchmark (single domain and "
            "across domains)",
            paper="abstract: consistent gains over strong baselines on three medical benchmarks "
            "(numbers not recovered)",
            measured=f"mAP50 ZR-DETR vs DETR-lite, {shown}",
            verdict=verdict,
            why=why,
        )
    ]
    largest = max(gains, key=gains.get)
    if lite_ind < 0.3:
        v2 = "not testable here"
    else:
        v2 = "held" if largest == "zoom-shift" and gains["zoom-shift"] > 0 else "not held"
    claims.append(
        Claim(
            "The zoom embedding makes the detector robust to zoom: the gain is largest under "
            "zoom shift",
            paper="abstract: scale-sensitive zoom embedding (qualitative)",
            measured="mAP50 gain " + ", ".join(f"{s} {g:+.3f}" for s, g in gains.items()),
            verdict=v2,
            why="held when the zoom-shift gain is positive and the largest of the three",
        )
    )
    return claims


def _relation_claim(res: dict[str, dict]) -> Claim:
    lite = res[LITE.label]["in-dist"]["implausible FP / 100 img"]
    full = res[FULL.label]["in-dist"]["implausible FP / 100 img"]
    rel = res.get("+relation", {}).get("in-dist", {}).get("implausible FP / 100 img")
    extra = f", +relation {rel:.1f}" if rel is not None else ""
    return Claim(
        "Anatomical relation constraints make the predicted set anatomically plausible",
        paper="abstract: anatomical relation constraints (qualitative)",
        measured=f"false positives per 100 in-distribution images with relation NLL above the "
        f"source 99th percentile: ZR-DETR {full:.1f}, DETR-lite {lite:.1f}{extra}",
        verdict="held" if full < lite else "not held",
        why="held when ZR-DETR has fewer implausible false positives than DETR-lite; one seed",
    )


def _spearman_claim(res: dict[str, dict]) -> Claim:
    rho = res[FULL.label]["in-dist"]["Spearman"]
    verdict = "held" if rho > 0.3 else "not held"
    return Claim(
        "The GP head's predictive variance is a calibrated detection uncertainty (it tracks "
        "localisation error)",
        paper="abstract: GP head gives calibrated uncertainty (qualitative)",
        measured=f"Spearman(mean box variance, 1 - IoU) = {rho:.3f} on in-distribution "
        f"detections with score > 0.3; ECE {res[FULL.label]['in-dist']['ECE']:.3f}",
        verdict=verdict if np.isfinite(rho) else "not held",
        why="held when the rank correlation exceeds 0.3",
    )


def _plot(res, curves, out: Path) -> Path:
    fig, axes = figure(1, 2, size=(13, 4.2))
    ax, axc = axes[0]
    labels = list(res)
    width = 0.8 / len(labels)
    for i, lab in enumerate(labels):
        vals = [res[lab][s]["mAP50"] for s in SETS]
        lo = [res[lab][s]["mAP50"] - res[lab][s]["mAP50 CI"][0] for s in SETS]
        hi = [res[lab][s]["mAP50 CI"][1] - res[lab][s]["mAP50"] for s in SETS]
        err = np.nan_to_num(np.clip([lo, hi], 0, None))
        ax.bar(np.arange(3) + i * width, np.nan_to_num(vals), width, yerr=err, label=lab, capsize=2)
    ax.set_xticks(np.arange(3) + 0.4 - width / 2, SETS)
    ax.set(ylabel="mAP50 (bootstrap 95% CI)", title="ZR-DETR vs DETR-lite and ablations")
    ax.legend(fontsize=7)
    for lab, curve in curves.items():
        steps, losses = zip(*curve, strict=True)
        axc.plot(steps, losses, label=lab)
    axc.set(
        yscale="symlog",
        xlabel="step",
        ylabel="training loss (symlog: the NLL is < 0)",
        title="training loss",
    )
    axc.legend(fontsize=7)
    return save_figure(fig, out / "zrdetr.png")


def reproduce(
    *,
    quick: bool,
    seed: int,
    out: Path,
    uda: bool = False,
    steps: int | None = None,
    n_train: int = 1200,
    n_test: int | None = None,
    n_boot: int | None = None,
) -> Report:
    """Train and evaluate the methods; print the table, write ``zrdetr.png``. ``steps``,
    ``n_train``, ``n_test`` and ``n_boot`` shrink the run (smoke tests)."""
    start_cpu = time.process_time()
    steps = steps or (80 if quick else 500)  # quick: a smoke run of about a minute
    n_test = n_test or (150 if quick else 300)
    n_boot = n_boot or (100 if quick else 200)
    methods = [LITE, FULL] if quick else METHODS
    data = _data(seed, n_train, n_test)
    prior = fit_prior(data["train"], K)
    thr = _implausible_threshold(prior, data["train"])
    results, curves, rows, models = {}, {}, [], {}
    for i, m in enumerate(methods):
        torch.manual_seed(seed * 100 + i)
        model = ZRDETR(K, d_model=64, **m.kwargs)
        record = train_detector(
            model, data["train"], steps=steps, prior=prior, batch=32, seed=seed, label=m.label
        )
        results[m.label] = _evaluate_all(model, data, prior, thr, n_boot, seed)
        curves[m.label] = record["curve"]
        rows.append(_row(m.label, results[m.label], record["cpu_seconds"]))
        models[m.label] = model
    claims = [*_gain_claims(results, steps), _relation_claim(results), _spearman_claim(results)]
    settings: dict[str, Any] = {
        "n_classes": K,
        "image_size": 64,
        "n_train": n_train,
        "n_test_per_set": n_test,
        "zoom_train": [0.8, 1.25],
        "zoom_shift": [0.5, 2.0],
        "d_model": 64,
        "batch": 32,
        "steps": steps,
        "optimizer": "AdamW lr 1e-3 (GP variational 1e-2), wd 1e-4, warm-up 10% + cosine, clip 1.0",
        "bootstrap": n_boot,
        "methods": {m.label: m.kwargs for m in methods},
        "evaluation_zoom": "predicted (box-based estimator on a zoom-free first decoder pass)",
        "rescoring": "lambda 0.1 for models with the relation module",
        "implausible_threshold": thr,
    }
    if uda:
        n_unlabeled = min(1000, n_train)  # fewer only when a smoke test shrinks the run
        target_unlabeled = make_anatomy_scenes(n_unlabeled, domain="target", seed=1000 * seed + 5)
        model = models[FULL.label]
        record = adapt_mean_teacher(
            model, data["train"], target_unlabeled["images"], prior, steps=steps, seed=seed
        )
        label = "ZR-DETR + UDA"
        results[label] = _evaluate_all(model, data, prior, thr, n_boot, seed)
        rows.append(_row(label, results[label], record["cpu_seconds"]))
        curves[label] = record["curve"]
        before = results[FULL.label]["target"]
        after = results[label]["target"]
        sep = after["mAP50 CI"][0] > before["mAP50 CI"][1]
        claims.append(
            Claim(
                "Mean-teacher UDA with GP-variance and relation filters improves the target domain",
                paper="abstract: gains in unsupervised domain adaptation (numbers not recovered)",
                measured=f"target mAP50 {after['mAP50']:.3f} after vs {before['mAP50']:.3f} before "
                f"({record['kept']:.2f} of structures pseudo-labelled per target image)",
                verdict="held"
                if sep
                else ("partly" if after["mAP50"] > before["mAP50"] else "not held"),
                why="held when the 95% CIs separate; one seed, same steps as the source training",
            )
        )
        settings["uda"] = {
            "unlabeled_target": n_unlabeled,
            "ema": 0.999,
            "score": 0.7,
            **record["thresholds"],
        }
    print_table(
        rows, title=f"ZR-DETR reproduction ({steps} steps, seed {seed}; mAP with bootstrap 95% CI)"
    )
    for c in claims:
        print(f"claim_supported [{c.verdict}]: {c.statement}")
    figure_path = _plot(results, curves, out)
    settings["cpu_seconds_total"] = time.process_time() - start_cpu
    return Report(
        claims=claims,
        tables={"results": rows},
        figures=[figure_path],
        settings=settings,
        data={"metrics": results, "curves": curves},
    )
