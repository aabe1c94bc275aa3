"""Small-scale reproduction: ``gora reproduce [--quick] [--seed N] [--out DIR]``.

A 4-layer pre-LN Transformer encoder (d=64, 4 heads; tokens: CLS + the 8 rows of an 8x8 image) is
pre-trained from scratch on the digits 0-4 (scikit-learn's bundled digits), then fine-tuned on a
shifted low-data task: the digits 5-9 with transposed images, 300 training images, the rest
(596) to test. Adapters on every block's q, k, v, o, fc1, fc2 at the budget of rank r0 = 4
(alpha 8): LoRA, rsLoRA, AdaLoRA (peft), PiSSA (peft), GoRA (N = 8 gradient batches) and its two
ablations; plus the linear probe and full fine-tuning. Reported per method: test accuracy
(mean and std over seeds), trainable parameters (adapters + head, the first seed's model),
GoRA's gradient-pass time and its allocated ranks. The pre-trained weights are cached in the run
folder (``pretrained.pt``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from gora.data import digits_tasks
from gora.finetune import METHODS, finetune, pretrain
from gora.model import TARGETS
from paperkit import figure, print_table, progress, save_figure

__all__ = ["reproduce"]


def _pretrained(out: Path, seed: int, epochs: int) -> tuple[dict, dict]:
    cache = out / "pretrained.pt"
    if cache.exists():
        saved = torch.load(cache, weights_only=True)
        return saved["state_dict"], saved["info"]
    state, info = pretrain(digits_tasks(seed), seed=seed, epochs=epochs)
    torch.save({"state_dict": state, "info": info}, cache)
    return state, info


def _rank_table(ranks: dict[str, int]) -> list[dict[str, Any]]:
    blocks = sorted({name.split(".")[1] for name in ranks}, key=int)
    rows = []
    for b in blocks:
        row: dict[str, Any] = {"block": int(b)}
        for t in TARGETS:
            row[t] = next(
                r for n, r in ranks.items() if n.startswith(f"blocks.{b}.") and n.endswith(t)
            )
        rows.append(row)
    return rows


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    seeds: int | None = None,
    epochs: int | None = None,
    pretrain_epochs: int | None = None,
    methods: tuple[str, ...] | None = None,
) -> dict[str, Any]:
    """Run the comparison; print the tables, save ``accuracy.png``; return the results.

    ``seeds``, ``epochs``, ``pretrain_epochs`` and ``methods`` override the defaults (quick: 2
    seeds, 15 fine-tuning epochs, 15 pre-training epochs; full: 5 seeds, 30, 30) for smoke tests.
    """
    out = Path(out)
    n_seeds = seeds or (2 if quick else 5)
    epochs = epochs or (15 if quick else 30)
    pretrain_epochs = pretrain_epochs or (15 if quick else 30)
    methods = methods or METHODS
    state, pre_info = _pretrained(out, seed, pretrain_epochs)
    print(
        f"pre-trained on digits 0-4 in {pre_info['time_s']:.1f} s, "
        f"train accuracy {pre_info['train_accuracy']:.3f}"
    )
    runs = []
    jobs = [(s, m) for s in range(seed, seed + n_seeds) for m in methods]
    for s, method in progress(jobs, "fine-tune"):
        runs.append(finetune(method, state, digits_tasks(s), seed=s, epochs=epochs))
    summary = []
    for method in methods:
        mine = [r for r in runs if r["method"] == method]
        acc = [r["test_accuracy"] for r in mine]
        summary.append(
            {
                "method": method,
                "test_acc": float(np.mean(acc)),
                "std": float(np.std(acc)),
                "trainable": mine[0]["trainable"],
                "grad_pass_s": float(np.mean([r.get("grad_time_s", 0.0) for r in mine])),
                "train_s": float(np.mean([r["train_time_s"] for r in mine])),
            }
        )
    title = f"digits 5-9 transposed, 300 train, {epochs} epochs, {n_seeds} seeds, r0=4"
    print_table(summary, title=title)
    gora_runs = [r for r in runs if r["method"] == "GoRA"]
    rank_rows = _rank_table(gora_runs[0]["ranks"]) if gora_runs else []
    if rank_rows:
        print_table(rank_rows, title=f"GoRA ranks per layer (seed {seed})")
    fig, axes = figure(1, 2, size=(11.0, 4.0))
    ax = axes[0, 0]
    ax.barh(
        [r["method"] for r in summary],
        [r["test_acc"] for r in summary],
        xerr=[r["std"] for r in summary],
        color=["tab:red" if r["method"] == "GoRA" else "tab:blue" for r in summary],
    )
    lo = min(r["test_acc"] - r["std"] for r in summary)
    ax.set_xlim(max(0.0, lo - 0.05), 1.0)
    ax.invert_yaxis()
    ax.set_xlabel("test accuracy (mean ± std over seeds)")
    ax.set_title(title, fontsize=9)
    ax = axes[0, 1]
    if rank_rows:
        grid = np.array([[row[t] for t in TARGETS] for row in rank_rows])
        im = ax.imshow(grid, cmap="viridis")
        ax.set_xticks(range(len(TARGETS)), TARGETS)
        ax.set_yticks(range(len(rank_rows)), [f"block {r['block']}" for r in rank_rows])
        for (i, j), v in np.ndenumerate(grid):
            ax.text(j, i, str(v), ha="center", va="center", color="w")
        fig.colorbar(im, ax=ax, label="rank")
        ax.set_title(f"GoRA ranks (r0 = 4, seed {seed})", fontsize=9)
    else:
        ax.axis("off")
    save_figure(fig, out / "accuracy.png")
    return {
        "pretrain": pre_info,
        "summary": summary,
        "gora_ranks": rank_rows,
        "runs": runs,
        "settings": {"epochs": epochs, "seeds": n_seeds, "r0": 4, "alpha": 8, "n_train": 300},
    }
