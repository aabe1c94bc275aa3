"""Benchmark: time per interval against n, the grid size G and the baselines; batched throughput
and memory. ``bettingci bench [--quick] [--out DIR]``.

Betting intervals cost O(n G) time and O(G) memory (O(chunk x G) for the batched path); the
closed forms cost O(n). The log-log slopes of time against n and against G show the linear
scaling; the card's targets are n = 1000 with G = 10^4 in < 0.5 s, and (R = 1000, n = 50,
G = 2000) batched in < 10 s. Times are medians of repeated calls (``time.perf_counter``).
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from bettingci.intervals import lower_bound, lower_bound_batch
from paperkit import figure, loglog_slope, print_table, progress, save_figure

__all__ = ["bench", "median_seconds", "peak_bytes"]

BETTING = ("star", "bets", "star_hoeffding", "hoeffding_bet", "hedged")
CLOSED = ("hoeffding", "maurer_pontil", "clopper_pearson", "t_test")


def median_seconds(fn: Callable[[], Any], *, min_time: float = 0.2, max_calls: int = 50) -> float:
    """Median wall time of ``fn()`` over calls made for at least ``min_time`` seconds (after one
    warm-up call), at least 3 and at most ``max_calls`` calls."""
    fn()
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < min_time and len(times) < max_calls):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def peak_bytes(fn: Callable[[], Any]) -> int:
    """Peak bytes allocated (numpy arrays included) while ``fn()`` runs, by ``tracemalloc``."""
    tracemalloc.start()
    tracemalloc.reset_peak()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def _sample(n: int, method: str, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return (rng.random(n) < 0.3).astype(float) if method == "clopper_pearson" else rng.beta(2, 5, n)


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    ns: list[int] | None = None,
    grids: list[int] | None = None,
    batch: tuple[int, int, int] | None = None,
) -> dict[str, Any]:
    """Time per interval vs n (G = 10^4) for every method, vs G (n = 1000) for ``star``, the
    batched throughput and peak memory; a plot ``scaling.png``. ``device`` is accepted for the
    ``papers bench`` protocol and must be the CPU (numpy only).

    ``ns``, ``grids`` and ``batch = (R, n, G)`` override the sizes (for smoke tests).
    """
    if not device.startswith("cpu"):
        print(f"bettingci is numpy-only; benchmarking on the CPU instead of {device!r}.")
    ns = ns or ([100, 1000, 3000] if quick else [100, 300, 1000, 3000, 10_000])
    grids = grids or ([1000, 3000, 10_000] if quick else [1000, 3000, 10_000, 30_000])
    R, batch_n, batch_grid = batch or (1000, 50, 2000)
    min_time = 0.1 if quick else 0.3

    rows = []
    cases = [(m, n) for m in BETTING + CLOSED for n in ns]
    for method, n in progress(cases, "time vs n"):
        x = _sample(n, method)
        s = median_seconds(
            lambda x=x, m=method: lower_bound(x, 0.05, m, grid=10_000), min_time=min_time
        )
        rows.append({"method": method, "n": n, "G": 10_000, "ms": 1e3 * s})
    print_table(rows, title="time per lower bound (one sample), G = 10^4")

    grid_rows = []
    x = _sample(1000, "star")
    for G in progress(grids, "time vs G"):
        s = median_seconds(lambda G=G: lower_bound(x, 0.05, "star", grid=G), min_time=min_time)
        grid_rows.append({"method": "star", "n": 1000, "G": G, "ms": 1e3 * s})
    print_table(grid_rows, title="star: time per lower bound vs grid size G, n = 1000")

    ms = {(r["method"], r["n"]): r["ms"] for r in rows}
    # fit over the larger sizes, where the fixed per-call and per-step overheads no longer dominate
    fit_n = ns[1:] if len(ns) >= 3 else ns
    fit_g = grids[1:] if len(grids) >= 3 else grids
    slopes = [
        {
            "method": m,
            "fitted": f"n = {fit_n[0]}-{fit_n[-1]}",
            "slope": loglog_slope(fit_n, [ms[(m, n)] for n in fit_n]),
            f"ms at n={ns[-1]}": ms[(m, ns[-1])],
            "star time / this": ms[("star", ns[-1])] / ms[(m, ns[-1])],
        }
        for m in BETTING + CLOSED
    ]
    slopes.append(
        {
            "method": "star, n = 1000",
            "fitted": f"G = {fit_g[0]}-{fit_g[-1]}",
            "slope": loglog_slope(fit_g, [r["ms"] for r in grid_rows if r["G"] in fit_g]),
        }
    )
    print_table(slopes, title="log-log slopes (1 = linear) and time ratios at the largest n")

    X = np.random.default_rng(1).beta(2, 5, (R, batch_n))
    throughput = []
    for method in ("star", "hedged", "hoeffding"):
        start = time.perf_counter()
        lower_bound_batch(X, 0.05, method, grid=batch_grid, random_state=0)
        seconds = time.perf_counter() - start
        throughput.append(
            {
                "method": method,
                "R": R,
                "n": batch_n,
                "G": batch_grid,
                "seconds": seconds,
                "intervals / s": R / seconds,
            }
        )
    Xn = np.random.default_rng(2).beta(2, 5, (max(R // 10, 1), 1000))
    for method, G in (("star", 1000), ("star", 10_000), ("hedged", 1000), ("hoeffding", 10_000)):
        start = time.perf_counter()
        lower_bound_batch(Xn, 0.05, method, grid=G, random_state=0)
        seconds = time.perf_counter() - start
        throughput.append(
            {
                "method": method,
                "R": Xn.shape[0],
                "n": 1000,
                "G": G,
                "seconds": seconds,
                "intervals / s": Xn.shape[0] / seconds,
            }
        )
    print_table(throughput, title="batched lower bounds (lower_bound_batch)")

    memory = []
    for reps in (R // 10, R, 4 * R):
        Xr = np.random.default_rng(3).beta(2, 5, (max(reps, 1), batch_n))
        peak = peak_bytes(lambda Xr=Xr: lower_bound_batch(Xr, 0.05, "star", grid=batch_grid))
        memory.append({"R": Xr.shape[0], "n": batch_n, "G": batch_grid, "peak MiB": peak / 2**20})
    print_table(memory, title="peak memory of lower_bound_batch (rows chunked)")

    fig, axes = figure(1, 2, size=(10, 4))
    ax_n, ax_g = axes[0, 0], axes[0, 1]
    for m in BETTING + CLOSED:
        ax_n.loglog(ns, [ms[(m, n)] for n in ns], "o-", label=m)
    ax_n.set(xlabel="n", ylabel="ms per lower bound", title="time vs n (G = 10^4)")
    ax_n.legend(fontsize=6)
    ax_g.loglog(grids, [r["ms"] for r in grid_rows], "o-", label="star, n = 1000")
    ax_g.set(xlabel="grid size G", ylabel="ms per lower bound", title="time vs G")
    ax_g.legend(fontsize=7)
    save_figure(fig, out / "scaling.png")
    return {
        "device": "cpu",
        "time_vs_n": rows,
        "time_vs_grid": grid_rows,
        "slopes": slopes,
        "batched": throughput,
        "memory": memory,
    }
