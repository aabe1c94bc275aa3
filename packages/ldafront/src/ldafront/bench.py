"""Benchmark (CPU, numpy): ``ldafront bench [--quick] [--out DIR]``.

1. ``optimal_fair_postprocess`` against n (case ``postprocess``): the closed form is O(n) per
   multiplier and Brent's search needs a few dozen multipliers, so the time grows linearly
   (log-log slope about 1); target < 50 ms at n = 10^5 (this package's target).
2. The claimant's compute against the ground truth's (case ``training``): the 7 small models
   of the audit (MLP width 64, 300 epochs; n_s = 250, 500, 1000, 2000 and 3 penalised at 2000)
   against one big model (n = 16 000); the frontier sweep trains 12 such big models with the
   same epochs on the same rows, so its cost is 12 times the measured one. The ratio is the
   point of the paper: an audit under resource constraints.

Times are process CPU seconds as well as wall seconds: on a shared machine the wall clock
mostly measures the wait for a core. The claims use the CPU time. BLAS is single-threaded.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from ldafront.data import SyntheticLDA
from ldafront.postprocess import optimal_fair_postprocess
from ldafront.training import train_dp_penalized
from paperkit import (
    Claim,
    Report,
    loglog_slope,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["RUNS", "bench"]

#: Sizes of the quick and full runs: post-processing sizes, the small scales, the big n.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"n": [10_000, 30_000, 100_000], "scales": [250, 500, 1000, 2000], "n_big": 16_000},
    False: {
        "n": [10_000, 30_000, 100_000, 300_000, 1_000_000],
        "scales": [250, 500, 1000, 2000],
        "n_big": 16_000,
    },
}
SWEEP = 12
TARGET_MS = 50.0
MS = 1e3


def _postprocess_rows(sizes: list[int]) -> list[Any]:
    pop = SyntheticLDA.make(0)
    rows = []
    for n in progress(sizes, "bench: post-processing"):
        _, _, A, eta = pop.sample(n, 1)

        def call(eta: np.ndarray = eta, A: np.ndarray = A) -> Any:
            return optimal_fair_postprocess(eta, A, 0.1)

        rows.append(measure("optimal_fair_postprocess", n, call, case="postprocess", min_repeats=5))
    return rows


def _training_rows(scales: list[int], n_big: int) -> list[Any]:
    X, y, A, _ = SyntheticLDA.make(0).sample(n_big, 2)
    jobs = [(f"small n={n}", n, 0.0) for n in scales]
    jobs += [(f"small penalised {k}", scales[-1], 0.1 * k) for k in (1, 2, 3)]
    jobs.append(("big n=16000", n_big, 0.0))
    rows = []
    for name, n, lam in progress(jobs, "bench: training"):

        def train(n: int = n, lam: float = lam) -> Any:
            return train_dp_penalized(
                X[:n],
                y[:n],
                A[:n],
                lam,
                model="mlp",
                hidden=64,
                epochs=300,
                weight_decay=1e-2,
                seed=0,
            )

        row = measure(
            name, n, train, case="training", min_repeats=1, min_time=0, warmup=0, memory=False
        )
        row.params["lam"] = lam
        rows.append(row)
    return rows


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Run both measurements at the sizes of ``RUNS[quick]``; print the tables; write
    ``scaling_postprocess.png``. ``device`` is always ``"cpu"`` (numpy only). BLAS runs
    single-threaded (``threadpoolctl``), as in the reproduction: on shared cores threaded BLAS
    cost about 10 times more CPU time for these small MLPs."""
    from threadpoolctl import threadpool_limits

    out = Path(out)
    run = RUNS[quick]
    with threadpool_limits(1):
        post = _postprocess_rows(run["n"])
        train = _training_rows(run["scales"], run["n_big"])
    slope = scaling(post)["optimal_fair_postprocess"]["slope"]
    sizes = [r.size for r in post]
    cpu_slope = loglog_slope(sizes, [r.cpu_seconds for r in post])
    post_table = [
        {
            "n": r.size,
            "wall ms": MS * r.seconds,
            "wall IQR ms": MS * r.spread,
            "CPU ms": MS * r.cpu_seconds,
            "peak MiB": (r.peak_bytes or 0) / 2**20,
        }
        for r in post
    ]
    small = [r for r in train if r.impl.startswith("small")]
    big = next(r for r in train if r.impl.startswith("big"))
    train_table = [
        {"model": r.impl, "n": r.size, "wall s": r.seconds, "CPU s": r.cpu_seconds} for r in train
    ]
    totals = {
        "wall": (sum(r.seconds for r in small), SWEEP * big.seconds),
        "cpu": (sum(r.cpu_seconds for r in small), SWEEP * big.cpu_seconds),
    }
    train_table.append(
        {
            "model": "claimant: 7 small models",
            "n": None,
            "wall s": totals["wall"][0],
            "CPU s": totals["cpu"][0],
        }
    )
    train_table.append(
        {
            "model": f"ground truth: {SWEEP} big models",
            "n": run["n_big"],
            "wall s": totals["wall"][1],
            "CPU s": totals["cpu"][1],
        }
    )
    print_table(
        post_table, title=f"optimal_fair_postprocess (delta = 0.1); CPU slope {cpu_slope:.2f}"
    )
    print_table(train_table, title="training time: the claimant's 7 small models vs the sweep")
    cpu_at = {r.size: r.cpu_seconds for r in post}
    t5 = MS * cpu_at.get(100_000, float("nan"))
    ratio = totals["cpu"][1] / totals["cpu"][0]
    claims = [
        Claim(
            "Post-processing to a DP target takes under 50 ms at n = 10^5",
            paper="O(n) per multiplier, about 40 bisection steps (target < 50 ms)",
            measured=f"{t5:.1f} ms CPU at n = 1e5; log-log slope of the CPU time {cpu_slope:.2f} "
            f"(wall-clock slope {slope:.2f})",
            verdict="held" if t5 < TARGET_MS else "not held",
            why="process CPU time per call (the wall clock on this shared, overloaded machine "
            "mostly measures the wait for a core; both are in the table)",
        ),
        Claim(
            "The claimant's 7 small models cost a small fraction of the big-model frontier",
            paper="audits under resource constraints: small models instead of the big sweep",
            measured=f"{totals['cpu'][0]:.1f} s vs {totals['cpu'][1]:.1f} s CPU "
            f"({ratio:.1f}x less)",
            verdict="held" if ratio >= 5 else "not held",
            why=f"one run, process CPU time; the sweep is {SWEEP} x the measured big model "
            "(same rows, same epochs)",
        ),
    ]
    figures = [
        plot_scaling(post, out / "scaling_postprocess.png", case="postprocess", xlabel="rows n")
    ]
    return Report(
        claims=claims,
        tables={"postprocess": post_table, "training": train_table},
        figures=figures,
        settings={**run, "sweep": SWEEP, "device": "cpu"},
        measurements=post + train,
    )
