"""The headline experiments at small scale: ``rmaseg reproduce [--quick] [--seed N] [--out DIR]``.

(a) Binary, exactly calibrated 16x16 maps (d = 256), faint small objects and large confident
    ones, and the card's small check (d = 10 pixels, p = u^3 with u uniform): threshold 0.5,
    exact RankDice / RankIoU, the anchor's RankDice-BA and RMA, ours (RMA, pruning 0.1, 0.5).
    Exact expected Dice and IoU per map (Poisson-binomial PMFs), a Monte Carlo check with 2,000
    label draws, decision time per map.
(b) Multiclass, 32x32 softmax maps over C = 4 classes, labels drawn per pixel from the
    probabilities: argmax against RMA (Dice, IoU) and the anchor's multiclass RMA; mIoU^I and
    mDice^I over (map, draw) pairs.
(c) Decision time against d for threshold, RMA (sort, linear) and the anchor (see
    :mod:`rmaseg.bench` for the full benchmark).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit import figure, print_table, progress, save_figure
from rmaseg.anchor import anchor_available, anchor_rule
from rmaseg.api import rma_predict
from rmaseg.baselines import argmax_predict, threshold_predict
from rmaseg.bench import slopes, time_rules
from rmaseg.data import calibrated_binary, calibrated_multiclass, sample_labels
from rmaseg.exact import expected_dice, expected_iou, rankdice_exact, rankiou_exact
from rmaseg.metrics import mdice_image, miou_image

__all__ = ["binary_rules", "multiclass_rules", "reproduce"]

Rule = Callable[[torch.Tensor], torch.Tensor]


def binary_rules() -> dict[str, Rule]:
    """Rules mapping a (1, 1, H, W) map to a bool mask of the same shape."""
    rules: dict[str, Rule] = {
        "threshold 0.5": threshold_predict,
        "exact RankDice": lambda p: rankdice_exact(p.reshape(-1)).reshape(p.shape),
        "exact RankIoU": lambda p: rankiou_exact(p.reshape(-1)).reshape(p.shape),
    }
    if anchor_available():
        rules["anchor RankDice-BA (0.1)"] = anchor_rule("dice", "BA", pruning_prob=0.1)
        rules["anchor RMA Dice (0.1)"] = anchor_rule("dice", "RMA", pruning_prob=0.1)
    for metric in ("dice", "iou"):
        for prune in (0.1, 0.5):
            rules[f"RMA {metric} ({prune})"] = lambda p, m=metric, q=prune: rma_predict(
                p, m, "multilabel", pruning_prob=q
            )
    return rules


def multiclass_rules() -> dict[str, Rule]:
    """Rules mapping (1, C, H, W) softmax maps to int64 labels (1, H, W)."""
    rules: dict[str, Rule] = {"argmax": argmax_predict}
    for metric in ("dice", "iou"):
        for prune in (0.1, 0.5):
            rules[f"RMA {metric} ({prune})"] = lambda p, m=metric, q=prune: rma_predict(
                p, m, "multiclass", pruning_prob=q
            )
        if anchor_available():
            rules[f"anchor RMA {metric} (0.1)"] = anchor_rule(metric, "RMA", "multiclass", 0.1)
    return rules


def _timed(rule: Rule, p: torch.Tensor) -> tuple[torch.Tensor, float]:
    start = time.perf_counter()
    out = rule(p)
    return out, 1e3 * (time.perf_counter() - start)


REGIMES = ("faint", "confident", "u^3, d=10")


def _binary_maps(regime: str, n: int, seed: int) -> torch.Tensor:
    if regime == "u^3, d=10":
        g = torch.Generator().manual_seed(seed)
        return torch.rand(n, 1, 1, 10, generator=g, dtype=torch.float64) ** 3
    return calibrated_binary(n, size=16, seed=seed, objects=regime)


def run_binary(n: int, seed: int, mc_draws: int = 2000) -> list[dict[str, Any]]:
    """Part (a): one row per (regime, rule)."""
    rules = binary_rules()
    rows = []
    for regime in REGIMES:
        maps = _binary_maps(regime, n, seed)
        acc = {name: np.zeros(4) for name in rules}  # E Dice, E IoU, MC Dice, ms
        same = dict.fromkeys(rules, 0)
        for i in progress(range(n), f"(a) binary · {regime}"):
            p = maps[i : i + 1]
            flat = p.reshape(-1).numpy()
            masks = {}
            for name, rule in rules.items():
                mask, ms = _timed(rule, p)
                m = mask.reshape(-1).numpy()
                masks[name] = m
                acc[name] += [
                    expected_dice(flat, m, method="pmf"),
                    expected_iou(flat, m, method="pmf"),
                    expected_dice(flat, m, method="mc", n_draws=mc_draws, seed=seed + i),
                    ms,
                ]
            ref = masks.get("anchor RMA Dice (0.1)")
            for name in rules:
                same[name] += ref is not None and np.array_equal(masks[name], ref)
        best = acc["exact RankDice"][0] / n
        for name in rules:
            e_dice, e_iou, mc, ms = acc[name] / n
            rows.append(
                {
                    "objects": regime,
                    "rule": name,
                    "E[Dice]": e_dice,
                    "E[IoU]": e_iou,
                    "MC E[Dice]": mc,
                    "% of RankDice": 100 * e_dice / best,
                    "ms/map": ms,
                    "same mask as anchor RMA": f"{same[name]}/{n}" if anchor_available() else "-",
                }
            )
    return rows


def run_multiclass(n: int, draws: int, seed: int) -> list[dict[str, Any]]:
    """Part (b): one row per rule, metrics over (map, draw) pairs."""
    rules = multiclass_rules()
    maps = calibrated_multiclass(n, C=4, size=32, seed=seed)
    acc = {name: np.zeros(3) for name in rules}
    same = dict.fromkeys(rules, 0)
    for i in progress(range(n), "(b) multiclass"):
        p = maps[i : i + 1]
        y = sample_labels(p, draws, seed=seed + i, output_mode="multiclass")[:, 0]
        for name, rule in rules.items():
            label, ms = _timed(rule, p)
            pred = label.expand(draws, *label.shape[1:])
            acc[name] += [miou_image(pred, y, 4), mdice_image(pred, y, 4), ms]
            metric = "dice" if "dice" in name else "iou"
            ref = rules.get(f"anchor RMA {metric} (0.1)")
            if ref is not None and name.startswith("RMA") and "(0.1)" in name:
                same[name] += bool(torch.equal(label, ref(p)))
    rows = []
    for name in rules:
        miou, mdice, ms = acc[name] / n
        agree = f"{same[name]}/{n}" if name.startswith("RMA") and "(0.1)" in name else "-"
        rows.append(
            {
                "rule": name,
                "mIoU^I": 100 * miou,
                "mDice^I": 100 * mdice,
                "ms/map": ms,
                "same labels as anchor": agree if anchor_available() else "-",
            }
        )
    return rows


def _plot(binary: list[dict], multi: list[dict], timing: list[dict], out: Path) -> Path:
    fig, axes = figure(1, 3, size=(16, 4.5))
    ax_b, ax_m, ax_t = axes[0]
    names = list(dict.fromkeys(r["rule"] for r in binary))
    for k, regime in enumerate(REGIMES):
        vals = [r["E[Dice]"] for r in binary if r["objects"] == regime]
        ax_b.barh(np.arange(len(names)) + 0.27 * k, vals, height=0.27, label=regime)
    ax_b.set_yticks(np.arange(len(names)) + 0.27, names, fontsize=7)
    ax_b.set(xlabel="exact E[Dice]", title="(a) binary, d = 256 (and d = 10)")
    ax_b.legend()
    ax_m.barh([r["rule"] for r in multi], [r["mIoU^I"] for r in multi], color="tab:green")
    ax_m.set(xlabel="mIoU^I (%)", title="(b) multiclass, C = 4, 32x32")
    lo = min(r["mIoU^I"] for r in multi)
    ax_m.set_xlim(lo - 2, max(r["mIoU^I"] for r in multi) + 1)
    ax_m.tick_params(axis="y", labelsize=7)
    for name in dict.fromkeys(r["rule"] for r in timing):
        mine = [r for r in timing if r["rule"] == name]
        ax_t.loglog([r["d"] for r in mine], [r["ms"] for r in mine], "o-", label=name)
    ax_t.set(xlabel="pixels d", ylabel="ms", title="(c) decision time vs d")
    ax_t.legend(fontsize=7)
    return save_figure(fig, out / "rmaseg.png")


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    n_binary: int | None = None,
    n_multiclass: int | None = None,
    draws: int | None = None,
    sizes: list[int] | None = None,
) -> dict[str, Any]:
    """Run (a), (b), (c); print the tables, write ``rmaseg.png``; return the results.

    ``n_binary``, ``n_multiclass``, ``draws`` and ``sizes`` override the numbers of maps, label
    draws and the d of part (c) (for smoke tests).
    """
    n_binary = n_binary or (50 if quick else 200)
    n_multiclass = n_multiclass or (50 if quick else 200)
    draws = draws or (100 if quick else 200)
    sizes = sizes or ([10**3, 10**4, 10**5] if quick else [10**3, 10**4, 10**5, 10**6])
    binary = run_binary(n_binary, seed)
    print_table(binary, title=f"(a) binary, {n_binary} maps per regime, exact expectations")
    multi = run_multiclass(n_multiclass, draws, seed)
    print_table(multi, title=f"(b) multiclass, {n_multiclass} maps 32x32, C=4, {draws} draws")
    limits = {
        "threshold": max(sizes),
        "RMA-sort": max(sizes),
        "RMA-linear": max(sizes),
        "anchor RMA": max(sizes),
        "anchor BA": max(sizes),
    }
    timing = time_rules(sizes, limits, min_run_time=0.1, description="(c) timing")
    print_table(timing, title="(c) decision time per map (ms), one class, float32")
    fitted = slopes(timing)
    print_table(fitted, title="(c) log-log slopes")
    if not anchor_available():
        print("rankseg is not installed: the anchor rows are left out.")

    def row(regime: str, rule: str) -> dict[str, Any]:
        return next(r for r in binary if r["objects"] == regime and r["rule"] == rule)

    gains = {
        g: row(g, "RMA dice (0.1)")["E[Dice]"] - row(g, "threshold 0.5")["E[Dice]"] for g in REGIMES
    }
    within = min(row(g, "RMA dice (0.1)")["% of RankDice"] for g in REGIMES)
    argmax_miou = next(r["mIoU^I"] for r in multi if r["rule"] == "argmax")
    rma_miou = next(r["mIoU^I"] for r in multi if r["rule"] == "RMA iou (0.1)")
    agree = [r["same mask as anchor RMA"] for r in binary if r["rule"] == "RMA dice (0.1)"]
    agree += [
        r["same labels as anchor"]
        for r in multi
        if r["rule"].startswith("RMA") and "(0.1)" in r["rule"]
    ]
    checks = {
        "RMA Dice >= threshold in every regime": min(gains.values()) >= 0,
        "larger gain on faint than on confident objects": gains["faint"] > gains["confident"],
        "RMA within 2% of exact RankDice": within >= 98.0,
        "multiclass RMA-IoU mIoU^I >= argmax": rma_miou >= argmax_miou,
        "masks identical to the anchor's RMA": all(
            a.split("/")[0] == a.split("/")[1] for a in agree
        )
        if anchor_available()
        else None,
    }
    supported = all(v for v in checks.values() if v is not None)
    print_table([{"check": k, "holds": v} for k, v in checks.items()], title="claims")
    print(f"claim_supported = {supported}")
    _plot(binary, multi, timing, out)
    return {
        "binary": {"n": n_binary, "size": 16, "rows": binary},
        "multiclass": {"n": n_multiclass, "C": 4, "size": 32, "draws": draws, "rows": multi},
        "timing": {"rows": timing, "slopes": fitted},
        "checks": checks,
        "claim_supported": supported,
        "anchor": anchor_available(),
    }
