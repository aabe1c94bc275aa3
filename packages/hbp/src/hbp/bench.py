"""Benchmark: the planning cost of HBP over the number of samples n, against naive packing.

``hbp bench [--quick]`` measures (:func:`paperkit.measure`: median seconds per call, their
interquartile range, peak bytes), for n ``synth_lengths`` samples, (1) the HBP plan: group
selection, GreedyFill of every group and LPT over ranks (packs sorted by time, 8 ranks per step)
and (2) the naive baseline (``naive_pack``); :func:`paperkit.scaling` fits the log-log slope of
time against n (about 1 for the sort-based O(n log n) plan). It also measures the simulator
(``simulate("hbp")`` on 32 GPUs) and reports its throughput in samples per second.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from hbp.batching import balance_ranks
from hbp.cost import CostModel, cost_model
from hbp.data import sample_lengths, synth_lengths
from hbp.groups import assign_to_groups, select_groups
from hbp.packing import greedy_fill, naive_pack
from hbp.simulator import simulate
from paperkit import (
    Claim,
    Measurement,
    Report,
    check_int,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["FULL_SIZES", "QUICK_SIZES", "SIMULATED_SAMPLES", "bench", "hbp_plan"]

QUICK_SIZES = (10_000, 30_000, 100_000)
FULL_SIZES = (10_000, 30_000, 100_000, 300_000, 1_000_000)
#: Samples of the simulator's throughput run (quick: the smallest size of the sweep).
SIMULATED_SAMPLES = 20_000
#: From this many samples on, one timed call (a plan of 3 s or more needs no repeats).
ONE_CALL_FROM = 300_000


def hbp_plan(lengths: np.ndarray, cost: CostModel, n_ranks: int = 8) -> int:
    """Groups, assignment, GreedyFill per group and LPT of all packs onto ``n_ranks``; #packs.

    ``lengths``: positive integers (NaN cannot occur), at most 131072 (the longest candidate).

    >>> from hbp import synth_lengths
    >>> hbp_plan(synth_lengths(1000, seed=0), CostModel.preset("8b")) > 0
    True
    """
    owner = "hbp_plan"
    lengths = sample_lengths("lengths", owner, lengths)
    cost_model("cost", owner, cost)
    n_ranks = check_int("n_ranks", owner, n_ranks, low=1)
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


def _measure(impl: str, n: int, fn: Any, device: str, case: str) -> Measurement:
    few = {"warmup": 0, "min_repeats": 1, "min_time": 0.0} if n >= ONE_CALL_FROM else {}
    return measure(impl, n, fn, device=device, case=case, **few)


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Plan time against n, log-log slopes, simulator throughput; ``scaling.png``."""
    sizes = list(QUICK_SIZES if quick else FULL_SIZES)
    cost = CostModel.preset("8b")
    rows: list[Measurement] = []
    for n in progress(sizes, "bench"):
        lengths = synth_lengths(n, seed=0)
        rows.append(_measure("hbp plan", n, lambda x=lengths: hbp_plan(x, cost), device, "plan"))
        rows.append(
            _measure("naive_pack", n, lambda x=lengths: naive_pack(x, 131072), device, "plan")
        )
    n_sim = sizes[0] if quick else SIMULATED_SAMPLES
    sim_lengths = synth_lengths(n_sim, seed=0)
    sim = measure(
        "simulate hbp",
        n_sim,
        lambda: simulate("hbp", sim_lengths, 32, cost),
        device=device,
        case="simulate",
        params={"n_gpus": 32},
    )
    fits = scaling(rows, baseline="naive_pack", case="plan")
    seconds = {(r.impl, r.size): r for r in rows}
    table = [
        {
            "n": n,
            "hbp plan s": seconds["hbp plan", n].seconds,
            "naive_pack s": seconds["naive_pack", n].seconds,
            "plan / naive": seconds["hbp plan", n].seconds / seconds["naive_pack", n].seconds,
            "hbp plan peak bytes": seconds["hbp plan", n].peak_bytes,
        }
        for n in sizes
    ]
    print_table(table, title=f"planning time over n ({device}; numpy, one process; median)")
    summary = [
        {"quantity": "log-log slope, hbp plan", "value": fits["hbp plan"]["slope"]},
        {"quantity": "log-log slope, naive_pack", "value": fits["naive_pack"]["slope"]},
        {"quantity": f"simulate('hbp') samples/s (n={n_sim})", "value": n_sim / sim.seconds},
        {
            "quantity": f"hbp plan at n={sizes[-1]} (s)",
            "value": seconds["hbp plan", sizes[-1]].seconds,
        },
    ]
    print_table(summary, title="slopes and throughput")
    figure = plot_scaling(
        rows, out / "scaling.png", case="plan", title="planning time", xlabel="samples n"
    )
    slope = fits["hbp plan"]["slope"]
    largest = seconds["hbp plan", sizes[-1]].seconds
    return Report(
        claims=[
            Claim(
                "Planning an epoch with HBP (groups, GreedyFill, balanced batching) costs about "
                "n log n in the number of samples, negligible next to training",
                paper="no number in the paper",
                measured=f"log-log slope {slope:.2f} for n = {sizes[0]}..{sizes[-1]}; "
                f"{largest:.3g} s at n = {sizes[-1]}",
                verdict="held" if slope < 1.3 else "not held",
                why="held when the slope of time against n stays below 1.3 (n log n gives about "
                "1.1 over this range); one process, numpy, shared CPU cores",
            )
        ],
        tables={"planning": table, "summary": summary},
        figures=[figure],
        settings={
            "sizes": sizes,
            "simulated_samples": n_sim,
            "n_ranks": 8,
            "naive_pack_len": 131072,
            "one_call_from": ONE_CALL_FROM,
            "cost": "CostModel.preset('8b')",
        },
        measurements=[*rows, sim],
        data={"scaling": fits, "simulate_samples_per_s": n_sim / sim.seconds},
    )
