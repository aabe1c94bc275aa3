"""Benchmark: the planning cost of HBP over the number of samples n, against naive packing.

``hbp bench [--quick]`` times, for n ``synth_lengths`` samples, (1) the HBP plan: group selection,
GreedyFill of every group and LPT over ranks (packs sorted by time, 8 ranks per step) and (2) the
naive baseline (``naive_pack``), and fits the log-log slope of time against n (about 1 for the
sort-based O(n log n) plan). It also reports the simulator's throughput (samples per second of
``simulate("hbp")``) and the time of the 10^6-sample plan against the card's 5 s budget.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from hbp.batching import balance_ranks
from hbp.cost import CostModel
from hbp.data import synth_lengths
from hbp.groups import assign_to_groups, select_groups
from hbp.packing import greedy_fill, naive_pack
from hbp.simulate import simulate
from paperkit import figure, loglog_slope, print_table, progress, save_figure

__all__ = ["bench", "hbp_plan"]


def hbp_plan(lengths: np.ndarray, cost: CostModel, n_ranks: int = 8) -> int:
    """Groups, assignment, GreedyFill per group and LPT of all packs onto ``n_ranks``; #packs."""
    groups = select_groups(lengths, cost)
    member = assign_to_groups(lengths, groups).numpy()
    n_packs = 0
    for g, group in enumerate(groups):
        ids = np.flatnonzero(member == g)
        if ids.size:
            packs = greedy_fill(lengths[ids], group.pack_len)
            balance_ranks(packs, lengths[ids], n_ranks, cost, sp=group.sp, ckpt=group.ckpt)
            n_packs += len(packs)
    return n_packs


def _best_of(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, sizes: list[int] | None = None
) -> dict[str, Any]:
    """Plan time vs n, slope, simulator throughput; ``scaling.png``. ``sizes`` overrides n."""
    sizes = sizes or (
        [10_000, 30_000, 100_000] if quick else [10_000, 30_000, 100_000, 300_000, 1_000_000]
    )
    cost = CostModel.preset("8b")
    rows = []
    for n in progress(sizes, "bench"):
        lengths = synth_lengths(n, seed=0)
        repeats = 3 if n <= 100_000 else 1
        plan = _best_of(lambda lengths=lengths: hbp_plan(lengths, cost), repeats)
        naive = _best_of(lambda lengths=lengths: naive_pack(lengths, 131072), repeats)
        rows.append(
            {"n": n, "hbp plan s": plan, "naive_pack s": naive, "plan / naive": plan / naive}
        )
    print_table(rows, title=f"planning time over n ({device}; numpy, one process)")
    slopes = {
        "hbp plan": loglog_slope(sizes, [r["hbp plan s"] for r in rows]),
        "naive_pack": loglog_slope(sizes, [r["naive_pack s"] for r in rows]),
    }
    n_sim = sizes[0] if quick else 20_000
    lengths = synth_lengths(n_sim, seed=0)
    sim_s = _best_of(lambda: simulate("hbp", lengths, 32, cost), 3)
    summary = [
        {"quantity": "log-log slope, hbp plan", "value": slopes["hbp plan"]},
        {"quantity": "log-log slope, naive_pack", "value": slopes["naive_pack"]},
        {"quantity": f"simulate('hbp') samples/s (n={n_sim})", "value": n_sim / sim_s},
        {"quantity": f"hbp plan at n={sizes[-1]} (s)", "value": rows[-1]["hbp plan s"]},
    ]
    print_table(summary, title="slopes and throughput")
    fig, ax = figure()
    ax.loglog(sizes, [r["hbp plan s"] for r in rows], "o-", label="HBP plan")
    ax.loglog(sizes, [r["naive_pack s"] for r in rows], "o-", label="naive_pack")
    ax.set(xlabel="samples n", ylabel="seconds", title="planning time")
    ax.legend()
    save_figure(fig, out / "scaling.png")
    return {
        "device": device,
        "rows": rows,
        "slopes": slopes,
        "simulate_samples_per_s": n_sim / sim_s,
    }
