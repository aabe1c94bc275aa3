r"""Efficiency: ``treegen bench [--quick]``.

(a) Sampling throughput: ``M`` chains batched in one network forward per step against ``M``
    chains run one at a time (same network, steps and leaves), samples per second.
(b) Exact posterior: time of the vectorised likelihood of all :math:`(2n-3)!!` hierarchies
    (bitmask subset masses, split table, one gather) for n = 6, 7, 8, and its log-log slope in
    the number of trees; against scoring the trees one by one with :func:`treegen.tree_loglik`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit import (
    Claim,
    Report,
    measure,
    measure_interleaved,
    plot_scaling,
    ratio_spread,
    scaling,
)
from treegen.enumeration import tree_logliks, tree_table
from treegen.ginkgo import GinkgoLike
from treegen.likelihood import tree_loglik
from treegen.model import TreeGen

__all__ = ["RUNS", "bench"]

#: Settings: chains M, steps, per-tree loop sizes, timing floor (quick / full).
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "chains": 32,
        "steps": 10,
        "enum_sizes": [6, 7, 8],
        "loop_sizes": [5, 6],
        "min_time": 0.2,
    },
    False: {
        "chains": 64,
        "steps": 20,
        "enum_sizes": [6, 7, 8],
        "loop_sizes": [5, 6, 7],
        "min_time": 0.5,
    },
}


def _jet(model: GinkgoLike, n: int) -> np.ndarray:
    return model.sample_jets(1, seed=n, n_min=n, n_max=n)[0][0]


def bench(*, quick: bool = False, device: str = "cpu", out: str | Path = ".") -> Report:
    """Run the measurements of the module docstring; ratios from alternating rounds."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: a second thread only adds barrier waits
    try:
        return _run(RUNS[bool(quick)], Path(out), device)
    finally:
        torch.set_num_threads(threads)


def _run(cfg: dict[str, Any], out: Path, device: str) -> Report:
    model = GinkgoLike()
    torch.manual_seed(0)
    net = TreeGen(d_model=64, layers=2, heads=4).eval()
    leaves = _jet(model, 7)
    M, S = cfg["chains"], cfg["steps"]
    rows = measure_interleaved(
        {
            "batched": lambda: net.sample(leaves, num=M, steps=S),
            "one at a time": lambda: [net.sample(leaves, num=1, steps=S, seed=i) for i in range(M)],
        },
        M,
        case="sampling",
        memory=False,
        min_time=cfg["min_time"],
        min_repeats=3,
    )
    speed, q1, q3 = ratio_spread(rows[1], rows[0])
    tables: dict[str, list[dict[str, Any]]] = {
        "sampling": [
            {
                "impl": r.impl,
                "chains": M,
                "steps": S,
                "seconds": r.seconds,
                "samples_per_s": M / r.seconds,
            }
            for r in rows
        ]
    }
    enum_rows = []
    for n in cfg["enum_sizes"]:
        tree_table(n)  # built once and cached; timed separately below
        jet = _jet(model, n)
        enum_rows.append(
            measure(
                "vectorised",
                tree_table(n).trees.shape[0],
                lambda jet=jet: tree_logliks(jet, model),
                case="enumeration",
                memory=False,
                min_time=cfg["min_time"],
                min_repeats=3,
            )
        )
    loop_rows, ratio_rows = [], []
    for n in cfg["loop_sizes"]:
        jet = _jet(model, n)
        table = tree_table(n)
        trees = [table.tree(r) for r in range(table.trees.shape[0])]
        pair = measure_interleaved(
            {
                "vectorised": lambda jet=jet: tree_logliks(jet, model),
                "per tree": lambda jet=jet, trees=trees: [
                    tree_loglik(jet, t, model) for t in trees
                ],
            },
            len(trees),
            case="likelihood",
            memory=False,
            min_time=cfg["min_time"],
            min_repeats=3,
        )
        loop_rows += pair
        r, a, b = ratio_spread(pair[1], pair[0])
        ratio_rows.append({"n": n, "trees": len(trees), "speedup": r, "q1": a, "q3": b})
    fits = scaling(enum_rows)
    slope = fits["vectorised"]["slope"]
    figure = plot_scaling(
        enum_rows,
        out / "treegen_bench.png",
        case="enumeration",
        title="exact posterior: all (2n-3)!! trees",
        xlabel="number of trees",
    )
    tables["enumeration"] = [
        {"n": n, "trees": r.size, "seconds": r.seconds, "us_per_tree": 1e6 * r.seconds / r.size}
        for n, r in zip(cfg["enum_sizes"], enum_rows, strict=True)
    ]
    tables["likelihood_speedup"] = ratio_rows
    smallest = min(r["speedup"] for r in ratio_rows)
    claims = [
        Claim(
            "Batching the M sampling chains in one forward per step is faster than one chain at "
            "a time",
            "samples batched (M x variables) in one forward",
            f"{speed:.1f}x (IQR {q1:.1f}-{q3:.1f}) at M = {M}, S = {S}, n = 7",
            "held" if speed > 1 else "not held",
            "same network and steps; alternating rounds",
        ),
        Claim(
            "The exact posterior is linear in the number of hierarchies (2n-3)!!",
            "cost (2n-3)!! n, vectorised over all trees",
            f"log-log slope {slope:.2f} over n = {cfg['enum_sizes']}",
            "held" if 0.7 <= slope <= 1.3 else "not held",
            "slope of seconds vs tree count",
        ),
        Claim(
            "The vectorised likelihood beats scoring trees one by one",
            "vectorise likelihood over all trees",
            ", ".join(f"n={r['n']}: {r['speedup']:.0f}x" for r in ratio_rows),
            "held" if smallest > 1 else "not held",
            "same jets; alternating rounds",
        ),
    ]
    return Report(
        claims=claims,
        tables=tables,
        figures=[figure],
        settings={
            **cfg,
            "network": "d_model 64, 2 layers, 4 heads",
            "device": device,
            "torch_threads": 1,
        },
        measurements=[*rows, *enum_rows, *loop_rows],
    )
