"""Routing cost: ``portrouter bench [--quick]``.

(1) Per-query latency of the neighbour search as the history grows: HNSW (hnswlib, the paper's
    index) against exact search (faiss flat inner product, and numpy brute force), queries in
    segments of 256 on one thread, with HNSW's recall@5 against exact and the log-log slopes
    (sub-linear for HNSW, linear for brute force). The history is clustered unit vectors (a
    mixture of 512 Gaussian clusters), standing in for sentence embeddings: embedding 10^5–10^6
    real strings with MiniLM is out of reach on a CPU (the reproduction reports its embedding time).
    The full run stops at 10^5 (the HNSW build alone takes minutes there on 2 cores); pass
    ``sizes=[..., 1_000_000]`` for 10^6.
(2) The one-time optimisation: the exact LP (HiGHS) against the paper code's L-BFGS-B, over the
    learning-phase length L (M = 11), with the objective each reaches.
(3) End to end: PORT's routing decisions per second (search + argmax) over a stream.

Every timing is a :class:`paperkit.Measurement` (``paperkit.measure``) of one call, no warm-up:
a pass over the queries, the HNSW build, one solve of the optimisation, and the routed stream
(router construction, learning phase and the one optimisation included).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

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
from portrouter.ann import ANNIndex, recall_at_k, unit_rows
from portrouter.dual import dual_objective, solve_dual
from portrouter.router import PORTRouter

__all__ = ["bench", "clustered"]

SEGMENT, K = 256, 5
#: One timed call, no warm-up: a pass over the queries or a build is long and not repeated.
ONCE = dict(warmup=0, min_time=0.0, min_repeats=1, max_repeats=1)
SEARCHES = {"HNSW": "hnsw", "faiss flat": "faiss", "numpy exact": "exact"}


def clustered(n: int, dim: int, rng: np.random.Generator, n_clusters: int = 512) -> np.ndarray:
    """``n`` unit vectors around ``n_clusters`` random centres (spread 0.5 per coordinate scale)."""
    centres = rng.standard_normal((n_clusters, dim)).astype(np.float32)
    x = centres[rng.integers(0, n_clusters, size=n)]
    x += 0.5 * rng.standard_normal((n, dim)).astype(np.float32)
    return unit_rows(x)


def _search_all(index: ANNIndex, q: np.ndarray) -> np.ndarray:
    return np.concatenate([index.search(q[i : i + SEGMENT])[0] for i in range(0, len(q), SEGMENT)])


def _search_rows(sizes, dim, n_queries, rng, device) -> tuple[list[Measurement], list[dict]]:
    rows, table = [], []
    for n in progress(sizes, "history sizes"):
        hist, q = clustered(n, dim, rng), clustered(n_queries, dim, rng)
        indexes = {}

        def build(n=n, hist=hist, indexes=indexes):
            indexes["HNSW"] = ANNIndex("hnsw", dim=dim, k=K, threads=-1)
            indexes["HNSW"].add(hist)

        rows.append(measure("HNSW", n, build, device=device, case="build", memory=False, **ONCE))
        for name, method in SEARCHES.items():
            if name != "HNSW":
                indexes[name] = ANNIndex(method, dim=dim, k=K)
                indexes[name].add(hist)
        found: dict[str, np.ndarray] = {}
        for name, index in indexes.items():

            def search(name=name, index=index, q=q, found=found) -> None:
                found[name] = _search_all(index, q)  # one timed pass; its neighbours are kept

            rows.append(
                measure(
                    name,
                    n,
                    search,
                    device=device,
                    case="search",
                    memory=False,
                    params={"queries": n_queries},
                    **ONCE,
                )
            )
        ms = {r.impl: 1e3 * r.seconds / n_queries for r in rows[-3:]}
        table.append(
            {
                "history": n,
                "HNSW build s": rows[-4].seconds,
                **{f"{name} ms/query": ms[name] for name in SEARCHES},
                "flat / HNSW": ms["faiss flat"] / ms["HNSW"],
                "HNSW recall@5": recall_at_k(found["HNSW"], found["faiss flat"]),
            }
        )
    return rows, table


def _optimisation_rows(lengths, rng, device) -> tuple[list[Measurement], list[dict]]:
    M, rows, table = 11, [], []
    price = np.geomspace(5e-5, 3e-3, M)
    for L in progress(lengths, "learning-phase lengths"):
        d = (rng.random((L, M)) < rng.uniform(0.2, 0.8, M)).astype(float)
        g = price * rng.lognormal(0.0, 0.4, size=(L, M))
        n_stream = L / 0.025  # the learning phase is the first ε = 2.5 % of the stream
        budgets = np.full(M, g.min(axis=1).mean() * n_stream / M)
        args = (d, g, budgets, 0.025, 1e-4)
        out: dict[str, Any] = {"L": L}
        for solver in ("lp", "lbfgsb"):
            gamma: dict[str, np.ndarray] = {}

            def solve(solver=solver, args=args, gamma=gamma) -> None:
                gamma[solver] = solve_dual(*args, solver=solver)

            row = measure(
                solver, L, solve, device=device, case="optimisation", memory=False, **ONCE
            )
            rows.append(row)
            out[f"{solver} ms"] = 1e3 * row.seconds
            out[f"F({solver})"] = dual_objective(gamma[solver], *args)
        table.append(out)
    return rows, table


def _end_to_end(n_hist, n_stream, dim, rng, device) -> Measurement:
    M = 11
    hist, stream = clustered(n_hist, dim, rng), clustered(n_stream, dim, rng)
    d = rng.random((n_hist, M))
    g = np.geomspace(5e-5, 3e-3, M) * rng.lognormal(0.0, 0.4, size=(n_hist, M))
    index = ANNIndex("hnsw", dim=dim, k=K, threads=-1)
    index.add(hist)
    budgets = np.full(M, g.mean() * n_stream / M)

    def route() -> None:  # a fresh router: the learning phase and the one optimisation included
        router = PORTRouter(index, d, g, budgets, n_stream)
        for i in range(0, n_stream, SEGMENT):
            router.route_batch(stream[i : i + SEGMENT])

    return measure(
        "PORT",
        n_hist,
        route,
        device=device,
        case="end to end",
        memory=False,
        params={"stream": n_stream},
        **ONCE,
    )


def _claims(search: dict[str, dict[str, Any]], opt: list[dict]) -> list[Claim]:
    hnsw = search["HNSW"]
    flat = search["faiss flat"]
    largest = hnsw["sizes"][-1]
    lp_ok = all(r["F(lp)"] <= r["F(lbfgsb)"] + 1e-12 for r in opt)
    return [
        Claim(
            "HNSW neighbour search is sub-linear in the history size",
            paper="PORT's feature estimation uses an HNSW index (approximate nearest neighbours)",
            measured=f"log-log slope of time per query against history size {hnsw['slope']:.2f} "
            f"(faiss flat {flat['slope']:.2f})",
            verdict="held" if hnsw["slope"] < 1 else "not held",
            why="held when the slope is below 1",
        ),
        Claim(
            "HNSW answers faster than exact search on a large history",
            paper="the reason to use an approximate index",
            measured=f"faiss flat / HNSW time at history {largest}: "
            f"{flat['seconds'][-1] / hnsw['seconds'][-1]:.2f}",
            verdict="held" if hnsw["seconds"][-1] < flat["seconds"][-1] else "not held",
            why="one pass over the queries each, one search thread",
        ),
        Claim(
            "The exact LP reaches a dual objective no higher than the paper code's L-BFGS-B",
            paper="the paper's code minimises F by L-BFGS-B from 1/M",
            measured="; ".join(
                f"L={r['L']}: {r['F(lp)']:.6g} vs {r['F(lbfgsb)']:.6g}" for r in opt
            ),
            verdict="held" if lp_ok else "not held",
            why="F is convex and piecewise linear: the LP is exact",
        ),
    ]


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    sizes: list[int] | None = None,
    dim: int = 384,
) -> Report:
    """Search latency vs history size, optimisation time vs L, routing throughput.

    hnswlib and faiss-cpu run on the CPU (the package is registered without GPU code);
    ``sizes`` and ``dim`` override the history sizes and the embedding dimension.
    """
    rng = np.random.default_rng(0)
    sizes = sizes or ([1_000, 3_000, 10_000] if quick else [1_000, 10_000, 100_000])
    n_queries = 1024 if quick else 4096
    rows, search = _search_rows(sizes, dim, n_queries, rng, device)
    print_table(search, title=f"neighbour search, dim {dim}, k={K}, segments of {SEGMENT}")
    fit = scaling(rows, case="search")
    print(
        "log-log slope of ms/query vs history: "
        + ", ".join(f"{name} {fit[name]['slope']:.2f}" for name in SEARCHES)
    )
    opt_rows, opt = _optimisation_rows([25, 200] if quick else [25, 200, 1000], rng, device)
    print_table(opt, title="one-time optimisation, M = 11")
    e2e = _end_to_end(min(sizes[-1], 10_000), 2048 if quick else 8192, dim, rng, device)
    per_s = e2e.params["stream"] / e2e.seconds
    print(f"PORT end to end: {per_s:.0f} routing decisions/s (history {e2e.size})")
    figure = plot_scaling(
        rows,
        out / "bench.png",
        case="search",
        title=f"kNN search of {n_queries} queries (k={K}, dim {dim})",
        xlabel="history size",
    )
    return Report(
        claims=_claims(fit, opt),
        tables={
            "neighbour search": search,
            "one-time optimisation": opt,
            "end to end": [
                {"history": e2e.size, "stream": e2e.params["stream"], "queries/s": per_s}
            ],
        },
        figures=[figure],
        settings={"sizes": sizes, "dim": dim, "queries": n_queries, "k": K, "segment": SEGMENT},
        measurements=[*rows, *opt_rows, e2e],
        data={"slopes": {name: fit[name]["slope"] for name in SEARCHES}},
    )
