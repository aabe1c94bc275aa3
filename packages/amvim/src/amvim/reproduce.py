r"""The headline experiment at small scale: training-free token pruning of Vim, AMVim and a ViT.

Vim, AMVim and TinyViT of equal width and depth are trained on the same data (AdamW, cosine
decay); then, without retraining, tokens are pruned after layers {2, 4} (depth/3 and 2·depth/3)
keeping :math:`\lceil\rho L\rceil` at each, ρ ∈ {1.0, 0.7, 0.5}, by the ``"norm"`` and the
``"random"`` score (the same layers and scores for every model: no per-model tuning). The paper's
claim (AMVim abstract): under token reduction Vim collapses while AMVim keeps its accuracy
(AMVim-T +34 % over Vim-T; AMVim-S drops 1.5 %, like a ViT), and AMVim is at least as good as Vim
without pruning.

``amvim reproduce --quick`` (about a minute of CPU): digits only, 2 epochs on the first 1,000
training images at lr 6e-3, scores ``"norm"`` and ``"random"``; the full run trains on all of
digits and on the shapes data set for 8 epochs at lr 1e-3 and also reports the ``"mean_sim"``
score (one seed each, to fit the 10-minute budget). The sizes (:data:`RUNS`) are smaller than
the paper-scale reference D=64, N=8 because the selective scan costs about 35 CPU seconds per
epoch there on a 2-core machine (see the README's "Deviations").
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np
import torch

from amvim.data import digits16, shapes
from amvim.models import AMVim, TinyViT, Vim
from amvim.pruning import TokenPruner
from amvim.training import accuracy, fit
from paperkit import Claim, Report, figure, print_table, progress, save_figure, seed_everything

__all__ = ["MODELS", "RUNS", "claims", "reproduce"]

MODELS = ("Vim", "AMVim", "ViT")
#: Settings per ``quick``.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "datasets": ("digits",),
        "seeds": 1,
        "epochs": 2,
        "dim": 32,
        "depth": 6,
        "d_state": 4,
        "batch_size": 32,
        "lr": 6e-3,  # two short epochs: at 1e-3 the models stay near chance
        "ratios": (1.0, 0.7, 0.5),
        "layers": (2, 4),
        "scores": ("norm", "random"),
        "shapes_n": 2000,
        "train_limit": 1000,
        "test_limit": None,
    },
    False: {
        "datasets": ("digits", "shapes"),
        "seeds": 1,
        "epochs": 8,
        "dim": 32,
        "depth": 6,
        "d_state": 4,
        "batch_size": 32,
        "lr": 1e-3,
        "ratios": (1.0, 0.7, 0.5),
        "layers": (2, 4),
        "scores": ("norm", "random", "mean_sim"),
        "shapes_n": 2000,
        "train_limit": None,
        "test_limit": None,
    },
}


def _data(name: str, seed: int, run: dict[str, Any]):
    if name == "digits":
        return digits16(seed=seed)
    return shapes(n=run["shapes_n"], seed=seed)


def _model(name: str, num_classes: int, run: dict[str, Any]) -> torch.nn.Module:
    common = {
        "img_size": 16,
        "patch_size": 2,
        "num_classes": num_classes,
        "dim": run["dim"],
        "depth": run["depth"],
    }
    if name == "Vim":
        return Vim(**common, d_state=run["d_state"])
    if name == "AMVim":
        return AMVim(**common, window_sizes=(2, 4), d_state=run["d_state"])
    return TinyViT(**common, num_heads=4)


def _mean_sd(values: list[float]) -> tuple[float, float]:
    return statistics.fmean(values), (statistics.stdev(values) if len(values) > 1 else 0.0)


def _runs(run: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """One row per (dataset, seed, model, score, ρ): the test accuracy."""
    jobs = [(d, seed + s, m) for d in run["datasets"] for s in range(run["seeds"]) for m in MODELS]
    rows = []
    for dataset, s, name in progress(jobs, "train + prune"):
        Xtr, ytr, Xte, yte = _data(dataset, s, run)
        Xtr, ytr = Xtr[: run["train_limit"]], ytr[: run["train_limit"]]
        Xte, yte = Xte[: run["test_limit"]], yte[: run["test_limit"]]
        seed_everything(s)
        model = _model(name, int(ytr.max()) + 1, run)
        fit(
            model,
            Xtr,
            ytr,
            epochs=run["epochs"],
            lr=run["lr"],
            batch_size=run["batch_size"],
            seed=s,
        )
        full = accuracy(model, Xte, yte)
        for score in run["scores"]:
            for rho in run["ratios"]:
                pruner = TokenPruner(run["layers"], rho, score, seed=s)
                acc = full if rho == 1.0 else accuracy(model, Xte, yte, pruner)
                rows.append(
                    {
                        "dataset": dataset,
                        "seed": s,
                        "model": name,
                        "score": score,
                        "rho": rho,
                        "accuracy": acc,
                        "flops": model.flops(pruner),
                    }
                )
    return rows


def summary(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Mean and seed spread (sd) of accuracy and of the drop from ρ = 1 per (dataset, model,
    score, ρ)."""
    table = []
    keys = dict.fromkeys((r["dataset"], r["model"], r["score"], r["rho"]) for r in rows)
    for dataset, model, score, rho in keys:
        mine = [
            r
            for r in rows
            if (r["dataset"], r["model"], r["score"], r["rho"]) == (dataset, model, score, rho)
        ]
        base = {
            r["seed"]: r["accuracy"]
            for r in rows
            if (r["dataset"], r["model"], r["score"], r["rho"]) == (dataset, model, score, 1.0)
        }
        acc, acc_sd = _mean_sd([r["accuracy"] for r in mine])
        drop, drop_sd = _mean_sd([base[r["seed"]] - r["accuracy"] for r in mine])
        table.append(
            {
                "dataset": dataset,
                "model": model,
                "score": score,
                "rho": rho,
                "acc": acc,
                "acc_sd": acc_sd,
                "drop": drop,
                "drop_sd": drop_sd,
                "GFLOPs": mine[0]["flops"] / 1e9,
                "seeds": len(mine),
            }
        )
    return table


def _pick(table, model, rho, score=None) -> list[dict[str, Any]]:
    return [
        r
        for r in table
        if r["model"] == model and r["rho"] == rho and (score is None or r["score"] == score)
    ]


def claims(table: list[dict[str, Any]], where: str) -> list[Claim]:
    """The paper's three accuracy claims judged on the summary table (every dataset and score
    at ρ = 0.5 for the pruning claims, ρ = 1 for the pruning-free one)."""
    rho = min(r["rho"] for r in table)
    cases = [(r["dataset"], r["score"]) for r in _pick(table, "Vim", rho)]

    def drop(model, case):
        return next(r for r in _pick(table, model, rho) if (r["dataset"], r["score"]) == case)

    pairs = [(c, drop("Vim", c), drop("AMVim", c), drop("ViT", c)) for c in cases]
    listed = "; ".join(
        f"{d}/{s}: Vim {v['drop']:.3f}±{v['drop_sd']:.3f}, AMVim {a['drop']:.3f}±"
        f"{a['drop_sd']:.3f}, ViT {t['drop']:.3f}±{t['drop_sd']:.3f}"
        for (d, s), v, a, t in pairs
    )
    much = [a["drop"] <= 0.5 * v["drop"] and v["drop"] - a["drop"] > 0.01 for _, v, a, _ in pairs]
    less = [a["drop"] < v["drop"] for _, v, a, _ in pairs]
    headline = Claim(
        "Under training-free token pruning AMVim's accuracy drops much less than Vim's "
        f"(rho={rho})",
        paper="AMVim-T +34% training-free accuracy over Vim-T at equal size and FLOPs (abstract)",
        measured=f"accuracy drop at rho={rho}: {listed}",
        verdict="held" if all(much) else ("partly" if any(less) else "not held"),
        why=f"{where}; held when AMVim's drop is at most half of Vim's (and 1 point smaller) in "
        "every data set and score, partly when it is smaller in some",
    )
    close = [a["drop"] - t["drop"] for _, _, a, t in pairs]
    vit = Claim(
        "AMVim's drop under pruning is comparable to a ViT's",
        paper="AMVim-S drops 1.5%, comparable to ViT (abstract)",
        measured="AMVim drop - ViT drop: "
        + ", ".join(f"{d}/{s}: {x:+.3f}" for ((d, s), *_), x in zip(pairs, close, strict=True)),
        verdict="held"
        if all(x <= 0.02 for x in close)
        else ("partly" if any(x <= 0.05 for x in close) else "not held"),
        why=f"{where}; held when AMVim drops at most 2 points more than the ViT everywhere, "
        "partly when within 5 points somewhere",
    )
    base = [
        (
            r["dataset"],
            r,
            next(a for a in _pick(table, "AMVim", 1.0, r["score"]) if a["dataset"] == r["dataset"]),
        )
        for r in _pick(table, "Vim", 1.0, "norm")
    ]
    gains = [(d, a["acc"] - v["acc"], max(a["acc_sd"], v["acc_sd"])) for d, v, a in base]
    unpruned = Claim(
        "Without pruning AMVim is at least as accurate as Vim",
        paper="AMVim also improves pruning-free accuracy (abstract)",
        measured="AMVim - Vim at rho=1: "
        + ", ".join(f"{d}: {g:+.3f} (sd {s:.3f})" for d, g, s in gains),
        verdict="held"
        if all(g >= 0 for _, g, _ in gains)
        else (
            "partly"
            if any(g >= 0 for _, g, _ in gains) or all(g >= -s for _, g, s in gains)
            else "not held"
        ),
        why=f"{where}; held when AMVim >= Vim on every data set, partly when on some or within "
        "the seed spread",
    )
    return [headline, vit, unpruned]


def size_claim() -> Claim:
    """Vim and AMVim have the same parameters and FLOPs at every ρ (at D=64, N=8)."""
    vim, am = Vim(dim=64, d_state=8), AMVim(dim=64, d_state=8)
    params = [sum(p.numel() for p in m.parameters()) for m in (vim, am)]
    prune = TokenPruner((2, 4), 0.5)
    flops = [m.flops(p) for m in (vim, am) for p in (None, prune)]
    same = params[0] == params[1] and flops[0] == flops[2] and flops[1] == flops[3]
    return Claim(
        "AMVim has the same size and FLOPs as Vim",
        paper="identical model sizes and FLOPs (abstract)",
        measured=f"params Vim {params[0]}, AMVim {params[1]}; MFLOPs/image Vim {flops[0] / 1e6:.1f}"
        f" -> {flops[1] / 1e6:.1f} at rho=0.5, AMVim {flops[2] / 1e6:.1f} -> {flops[3] / 1e6:.1f}",
        verdict="held" if same else "not held",
        why="D=64, depth 6, N=8 (16x16 image, patch 2); the window path only permutes tokens",
    )


def plot(table: list[dict[str, Any]], path: Path) -> Path:
    """Accuracy against ρ per model, one panel per (data set, score)."""
    cases = list(dict.fromkeys((r["dataset"], r["score"]) for r in table))
    fig, axes = figure(1, len(cases), size=(4 * len(cases), 3.4))
    axes = list(np.atleast_1d(axes).ravel())
    for ax, (dataset, score) in zip(axes, cases, strict=True):
        for model in MODELS:
            mine = sorted(
                (
                    r
                    for r in table
                    if (r["dataset"], r["score"], r["model"]) == (dataset, score, model)
                ),
                key=lambda r: r["rho"],
            )
            ax.errorbar(
                [r["rho"] for r in mine],
                [r["acc"] for r in mine],
                yerr=[r["acc_sd"] for r in mine],
                marker="o",
                label=model,
                capsize=3,
            )
        ax.set(
            xlabel="keep ratio rho (layers 2, 4)",
            ylabel="test accuracy",
            title=f"{dataset}, score {score}",
        )
        ax.invert_xaxis()
        ax.legend(fontsize="small")
    return save_figure(fig, path)


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Train Vim, AMVim and TinyViT, prune without retraining, compare the accuracy drops."""
    out = Path(out)
    run = RUNS[bool(quick)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        rows = _runs(run, seed)
    finally:
        torch.set_num_threads(threads)
    table = summary(rows)
    print_table(table, title="test accuracy and drop under training-free pruning")
    where = (
        f"{', '.join(run['datasets'])}; D={run['dim']}, depth {run['depth']}, "
        f"N={run['d_state']}, {run['epochs']} epochs, {run['seeds']} seed(s), "
        "8x8 = 64 tokens"
    )
    return Report(
        claims=[*claims(table, where), size_claim()],
        tables={"accuracy": table, "runs": rows},
        figures=[plot(table, out / "pruning.png")],
        settings={
            **run,
            "seed": seed,
            "models": list(MODELS),
            "window_sizes": [2, 4],
            "img_size": 16,
            "patch_size": 2,
            "weight_decay": 0.05,
            "backend": "auto",
            "vit_heads": 4,
        },
    )
