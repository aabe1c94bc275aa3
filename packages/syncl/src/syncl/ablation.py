"""Sensitivity of SynCL to its choices: ``python -m syncl.ablation [--configs ...] [--seeds ...]``.

The paper's values of the one-to-many size ``k`` and of the similarity used by the
Instance-aware Contrastive Learning (Sec. 3) were not recovered, so the full method is retrained
with ``k`` in {1, 4, 8} and with the ``rbf`` similarity ``s = -|e_i - e_a|^2`` instead of the
cosine, on the data and settings of :func:`syncl.reproduce.reproduce` (300 training and 50 test
sequences, 8 sequences and 3 frames per step), and compared with the baseline (joint training with
the S-decoder only). ``--steps`` trains longer than the reproduction.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from paperkit import check_int, param_error, print_table, progress
from syncl.reproduce import RUNS, datasets, run_variant

__all__ = ["CONFIGS", "ablation", "main"]

#: Configuration name -> (variant of :data:`syncl.reproduce.VARIANTS`, criterion settings).
CONFIGS: dict[str, tuple[str, dict[str, Any]]] = {
    "baseline": ("baseline", {}),
    "k=1": ("SynCL", {"k": 1}),
    "k=4": ("SynCL", {"k": 4}),
    "k=8": ("SynCL", {"k": 8}),
    "k=4 rbf": ("SynCL", {"k": 4, "kernel": "rbf"}),
}


def ablation(
    configs: Sequence[str] = tuple(CONFIGS),
    seeds: Sequence[int] = (0, 1),
    steps: int = RUNS[False]["steps"],
) -> list[dict[str, Any]]:
    """Train and evaluate each configuration with each seed (data of the reproduction's seed 0);
    returns one row per configuration: AMOTA, det AP and MOTA (mean and per seed), training CPU s
    and the fraction of top-k candidates the filter kept."""
    owner = "ablation"
    for c in configs:
        if c not in CONFIGS:
            raise param_error("configs", owner, f"names from {sorted(CONFIGS)}", c)
    for s in seeds:
        check_int("seeds", owner, s, low=0)
    steps = check_int("steps", owner, steps, low=1, high=100_000)
    data = datasets(RUNS[False], seed=0)
    res: dict[str, list[dict[str, Any]]] = {c: [] for c in configs}
    for c, s in progress([(c, s) for c in configs for s in seeds], "ablation (config, seed)"):
        variant, kw = CONFIGS[c]
        res[c].append(run_variant(variant, data, steps, s, **kw))
    rows = []
    for c, runs in res.items():
        kept = [r["kept_fraction"] for r in runs if r["kept_fraction"] is not None]
        row: dict[str, Any] = {"config": c}
        for key, label in (("AMOTA", "AMOTA"), ("AP", "det AP"), ("MOTA", "MOTA")):
            vals = [r[key] for r in runs]
            row[label] = round(float(np.mean(vals)), 4)
            row[f"{label} per seed"] = ", ".join(f"{v:.3f}" for v in vals)
        row["kept"] = round(float(np.mean(kept)), 3) if kept else "-"
        row["train CPU s"] = round(float(np.mean([r["train_cpu_s"] for r in runs])), 1)
        rows.append(row)
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m syncl.ablation", description=__doc__)
    parser.add_argument("--configs", default=",".join(CONFIGS), help="comma-separated names")
    parser.add_argument("--seeds", default="0,1", help="comma-separated training seeds")
    parser.add_argument("--steps", type=int, default=RUNS[False]["steps"])
    args = parser.parse_args(argv)
    cpu0 = time.process_time()
    rows = ablation(
        [c.strip() for c in args.configs.split(",")],
        [int(s) for s in args.seeds.split(",")],
        args.steps,
    )
    print_table(rows, title=f"SynCL ablation ({args.steps} steps per run)")
    print(f"CPU s: {time.process_time() - cpu0:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
