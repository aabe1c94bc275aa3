"""The headline experiments at small scale: ``rmaseg reproduce [--quick] [--seed N] [--out DIR]``.

(a) Binary, exactly calibrated 16x16 maps (d = 256), faint small objects and large confident
    ones, and a small check (d = 10 pixels, p = u^3 with u uniform): threshold 0.5,
    exact RankDice / RankIoU, the anchor's RankDice-BA and RMA, ours (RMA, pruning 0.1, 0.5).
    Exact expected Dice and IoU per map (Poisson-binomial PMFs), a Monte Carlo check with 2,000
    label draws, decision time per map.
(b) Multiclass, 32x32 softmax maps over C = 4 classes, labels drawn per pixel from the
    probabilities: argmax against RMA (Dice, IoU) and the anchor's multiclass RMA; mIoU^I and
    mDice^I over (map, draw) pairs.
(c) Decision time against d for threshold, RMA (sort, linear) and the anchor (see
    :mod:`rmaseg.bench` for the full benchmark).

The report's claims, headline first: the gains over thresholding (a), near-Bayes (a), the
multiclass gain over argmax (b) and equality with the anchor (a, b); each verdict is computed
from the run by the rule in its ``why``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit import Claim, Report, figure, print_table, progress, save_figure, time_callable
from rmaseg.anchor import anchor_available, anchor_rule
from rmaseg.api import rma_predict
from rmaseg.baselines import argmax_predict, threshold_predict
from rmaseg.bench import slopes, table, time_rules
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
    """The rule's output on ``p`` and the milliseconds of that one call."""
    out: list[torch.Tensor] = []
    timing = time_callable(lambda: out.append(rule(p)), warmup=0, min_repeats=1, min_time=0.0)
    return out[0], 1e3 * timing.median_s


REGIMES = ("faint", "confident", "u^3, d=10")
#: The rules part (c) times.
TIMED = ("threshold", "RMA-sort", "RMA-linear", "anchor RMA", "anchor BA")
#: RMA is near the Bayes rule when it keeps at least this % of exact RankDice's E[Dice].
NEAR_BAYES = 98.0


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


def _row(rows: list[dict[str, Any]], regime: str, rule: str) -> dict[str, Any]:
    return next(r for r in rows if r["objects"] == regime and r["rule"] == rule)


def _gain_claim(binary: list[dict[str, Any]]) -> Claim:
    """Held when RMA's E[Dice] is at least the threshold's in every regime and the gain is
    larger on faint than on confident objects."""
    gains = {
        g: _row(binary, g, "RMA dice (0.1)")["E[Dice]"]
        - _row(binary, g, "threshold 0.5")["E[Dice]"]
        for g in REGIMES
    }
    kept = {g: _row(binary, g, "threshold 0.5")["% of RankDice"] for g in REGIMES}
    holds = min(gains.values()) >= 0 and gains["faint"] > gains["confident"]
    return Claim(
        "RankSEG-RMA keeps the gains of the consistent RankSEG rules over thresholding, largest "
        "on small, uncertain objects",
        paper="headline mIoU^I, argmax -> RMA: SegFormer ADE20K 54.09 -> 54.72, Cityscapes "
        "73.32 -> 74.10, VOC 86.86 -> 87.28; LiTS/KiTS +1.6 to +2.5",
        measured="E[Dice] gain of RMA (0.1) over threshold 0.5: "
        + ", ".join(
            f"{g} {gains[g]:+.4f} (threshold keeps {kept[g]:.1f} % of RankDice)" for g in REGIMES
        ),
        verdict="held" if holds else "not held",
        why="exactly calibrated synthetic maps with exact expectations, not trained segmenters; "
        "held when the gain is >= 0 in every regime and larger on faint than on confident objects",
    )


def _bayes_claim(binary: list[dict[str, Any]]) -> Claim:
    """Held when RMA keeps at least 98 % of the exact RankDice's E[Dice] in every regime."""
    kept = {g: _row(binary, g, "RMA dice (0.1)")["% of RankDice"] for g in REGIMES}
    return Claim(
        "The reciprocal moment approximation loses little against the exact Bayes rule (RankDice)",
        paper="RMA maximises a Jensen lower bound of the expected metric (no gap number retrieved)",
        measured="RMA dice (0.1), % of exact RankDice's E[Dice]: "
        + ", ".join(f"{g} {v:.2f}" for g, v in kept.items()),
        verdict="held" if min(kept.values()) >= NEAR_BAYES else "not held",
        why=f"held when RMA keeps at least {NEAR_BAYES:g} % in every regime; exact expectations",
    )


def _multiclass_claim(multi: list[dict[str, Any]]) -> Claim:
    """Held when RMA-IoU's mIoU^I is at least argmax's."""
    miou = {r["rule"]: r["mIoU^I"] for r in multi}
    gain = miou["RMA iou (0.1)"] - miou["argmax"]
    return Claim(
        "RMA extends the gains to non-overlapping (multiclass) labels: mIoU^I above argmax",
        paper="+0.4 to +0.8 mIoU^I over argmax on ADE20K, Cityscapes and VOC (headline table)",
        measured=f"mIoU^I argmax {miou['argmax']:.2f}, RMA iou (0.1) {miou['RMA iou (0.1)']:.2f} "
        f"({gain:+.2f})",
        verdict="held" if gain >= 0 else "not held",
        why="held when RMA-IoU's mIoU^I is at least argmax's; synthetic softmax maps with large "
        "smooth regions, where the gain is smaller than on real small structures",
    )


def _anchor_claim(binary: list[dict[str, Any]], multi: list[dict[str, Any]]) -> Claim:
    """Held when every mask and label map equals the anchor's RMA at the same settings."""
    statement = "Our RMA decisions equal the authors' implementation (rankseg, solver='RMA')"
    paper = "the authors' rankseg package, RankSEG(solver='RMA', pruning_prob=0.1)"
    if not anchor_available():
        return Claim(
            statement,
            paper=paper,
            measured="rankseg is not installed",
            verdict="not testable here",
            why="pip install rankseg to compare",
        )
    agree = [r["same mask as anchor RMA"] for r in binary if r["rule"] == "RMA dice (0.1)"]
    agree += [
        r["same labels as anchor"]
        for r in multi
        if r["rule"].startswith("RMA") and "(0.1)" in r["rule"]
    ]
    equal = all(a.split("/")[0] == a.split("/")[1] for a in agree)
    return Claim(
        statement,
        paper=paper,
        measured="maps equal to the anchor's: " + ", ".join(agree),
        verdict="held" if equal else "not held",
        why="held when every binary mask (3 regimes) and multiclass label map (Dice, IoU) equals "
        "the anchor's",
    )


def reproduce(
    *,
    quick: bool,
    seed: int,
    out: Path,
    n_binary: int | None = None,
    n_multiclass: int | None = None,
    draws: int | None = None,
    sizes: list[int] | None = None,
) -> Report:
    """Run (a), (b), (c); print the tables, write ``rmaseg.png``; return the claims.

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
    measured = time_rules(
        sizes, dict.fromkeys(TIMED, max(sizes)), min_time=0.1, description="(c) timing"
    )
    timing = table(measured)
    print_table(timing, title="(c) decision time per map (ms), one class, float32")
    fitted = slopes(measured)
    print_table(fitted, title="(c) log-log slopes")
    if not anchor_available():
        print("rankseg is not installed: the anchor rows are left out.")
    claims = [
        _gain_claim(binary),
        _bayes_claim(binary),
        _multiclass_claim(multi),
        _anchor_claim(binary, multi),
    ]
    print_table([{"claim": c.statement, "verdict": c.verdict} for c in claims], title="claims")
    figure_path = _plot(binary, multi, timing, out)
    return Report(
        claims=claims,
        tables={"binary": binary, "multiclass": multi, "timing": timing, "slopes": fitted},
        figures=[figure_path],
        settings={
            "binary": {"n": n_binary, "size": 16, "regimes": list(REGIMES), "mc_draws": 2000},
            "multiclass": {"n": n_multiclass, "C": 4, "size": 32, "draws": draws},
            "timing": {"sizes": sizes, "rules": list(TIMED), "threads": 1, "dtype": "float32"},
            "anchor": anchor_available(),
        },
    )
