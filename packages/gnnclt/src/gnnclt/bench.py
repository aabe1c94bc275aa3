"""Benchmark: ``gnnclt bench [--quick]`` (CPU; numpy/scipy only, registered without GPU code).

One :class:`paperkit.Measurement` per timing (median seconds over repeated calls,
``paperkit.measure``; peak bytes):

1. ``sample_csbm`` against n at nu = 100 (case ``sampling``): O(n nu) means a log-log slope near
   1; target n = 10^5, nu = 100 (about 7.8 million edges) in under 10 s;
2. ``poly_gnn_embed`` against k at n = 50 000, nu = 50 (case ``embedding``): k sparse mat-vecs,
   slope near 1 in k;
3. ``w1_distance`` exact (POT network simplex) against sliced (200 directions) against the number
   of points m (case ``w1``): the speed-up of sliced at the largest m, from the same run.

The targets are the package's (the paper is theoretical and states none); they are the claims.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from gnnclt.embedding import poly_gnn_embed
from gnnclt.reproduce import params
from gnnclt.sampling import sample_csbm
from gnnclt.wasserstein import w1_distance
from paperkit import (
    Claim,
    Measurement,
    Report,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["RUNS", "bench"]

#: Sizes of the quick and full runs: n for sampling, k for the embedding, m for W1, repeats.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"n": [25_000, 50_000, 100_000], "k": [1, 2, 4], "m": [250, 500, 1000], "repeats": 1},
    False: {
        "n": [12_500, 25_000, 50_000, 100_000],
        "k": [1, 2, 4, 8],
        "m": [250, 500, 1000, 2000],
        "repeats": 3,
    },
}
NU = 100.0
#: Seconds allowed for one draw at n = 10^5, nu = 100.
SAMPLING_TARGET = 10.0
SLOPE_RANGE = (0.8, 1.25)


def _timer(repeats: int, warmup: bool = False) -> dict[str, Any]:
    return {"min_repeats": repeats, "min_time": 0.0, "warmup": int(warmup or repeats > 1)}


def _sampling(ns: list[int], repeats: int) -> list[Measurement]:
    p = params()
    return [
        measure(
            "sample_csbm",
            n,
            lambda n=n: sample_csbm(p, n, NU, seed=0),
            case="sampling",
            memory=n == ns[-1],
            params={"nu": NU},
            **_timer(repeats),
        )
        for n in progress(ns, "sampling")
    ]


def _embedding(ks: list[int], repeats: int) -> list[Measurement]:
    A, X, _ = sample_csbm(params(), 50_000, 50.0, seed=1)
    return [
        measure(
            "poly_gnn_embed",
            k,
            lambda k=k: poly_gnn_embed(A, X, [0.0] * k + [1.0]),
            case="embedding",
            params={"n": 50_000, "nu": 50.0, "nnz": int(A.nnz)},
            min_repeats=max(3, repeats),
        )
        for k in progress(ks, "embedding")
    ]


def _w1(ms: list[int], repeats: int) -> list[Measurement]:
    rng = np.random.default_rng(2)
    rows = []
    for m in progress(ms, "W1"):
        P, Q = rng.standard_normal((m, 2)), rng.standard_normal((m, 2)) + 0.1
        for method in ("exact", "sliced"):
            rows.append(
                measure(
                    method,
                    m,
                    lambda P=P, Q=Q, method=method: w1_distance(P, Q, method=method, seed=0),
                    case="w1",
                    memory=False,
                    **_timer(repeats, warmup=True),  # the first call imports POT
                )
            )
    return rows


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Run the three measurements at the sizes of ``RUNS[quick]``; print the tables; write
    ``scaling_<case>.png``. ``device`` is always ``"cpu"``."""
    out = Path(out)
    run = RUNS[quick]
    rows = _sampling(run["n"], run["repeats"])
    rows += _embedding(run["k"], run["repeats"])
    rows += _w1(run["m"], run["repeats"])
    fits = {case: scaling(rows, case=case) for case in ("sampling", "embedding")}
    w1_fit = scaling(rows, case="w1", baseline="exact")
    s_slope = fits["sampling"]["sample_csbm"]["slope"]
    e_slope = fits["embedding"]["poly_gnn_embed"]["slope"]
    big = [r for r in rows if r.case == "sampling" and r.size == 100_000]
    t_big = big[0].seconds if big else float("nan")
    speedup = w1_fit["sliced"]["speedup_at_largest"]
    table = [
        {"case": r.case, "impl": r.impl, "size": r.size, "seconds": r.seconds, "repeats": r.repeats}
        for r in rows
    ]
    slopes = [
        {"case": "sampling (vs n)", "slope": s_slope},
        {"case": "embedding (vs k)", "slope": e_slope},
        {"case": "W1 exact (vs m)", "slope": w1_fit["exact"]["slope"]},
        {"case": "W1 sliced (vs m)", "slope": w1_fit["sliced"]["slope"]},
    ]
    print_table(table, title="gnnclt timings (median seconds per call)")
    print_table(slopes, title="log-log slopes")
    figures = [
        plot_scaling(rows, out / f"scaling_{case}.png", case=case, title=case, xlabel=label)
        for case, label in (("sampling", "n (nu = 100)"), ("embedding", "k"), ("w1", "points m"))
    ]
    no_paper = "no number in the paper (theory); the package's target"
    lo, hi = SLOPE_RANGE
    claims = [
        Claim(
            f"Sampling a CSBM with n = 10^5, nu = 100 takes less than {SAMPLING_TARGET:g} s",
            paper=no_paper,
            measured=f"{t_big:.3g} s",
            verdict=("held" if t_big < SAMPLING_TARGET else "not held")
            if big
            else "not testable here",
            why="one draw (binomial block counts, distinct uniform pairs, CSR build), 2 shared "
            "CPU cores",
        ),
        Claim(
            "Sampling time is linear in n (O(n nu))",
            paper=no_paper,
            measured=f"log-log slope {s_slope:.2f} over n = {run['n']}",
            verdict="held" if lo <= s_slope <= hi else "not held",
            why=f"held when the slope is in [{lo}, {hi}]",
        ),
        Claim(
            "Embedding time is linear in the number of layers k (k sparse mat-vecs)",
            paper=no_paper,
            measured=f"log-log slope {e_slope:.2f} over k = {run['k']}",
            verdict="held" if lo <= e_slope <= hi else "not held",
            why=f"n = 50 000, nu = 50; held when the slope is in [{lo}, {hi}]",
        ),
        Claim(
            "Sliced W1 is faster than exact OT at the largest size",
            paper=no_paper,
            measured=f"{speedup:.1f}x at m = {run['m'][-1]}; slopes exact "
            f"{w1_fit['exact']['slope']:.2f}, sliced {w1_fit['sliced']['slope']:.2f}",
            verdict="held" if speedup > 1 else "not held",
            why="200 directions; exact is the network simplex of POT (ot.emd2)",
        ),
    ]
    return Report(
        claims=claims,
        tables={"timings": table, "slopes": slopes},
        figures=figures,
        settings={**run, "nu_sampling": NU, "device": device},
        measurements=rows,
    )
