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
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from paperkit import figure, loglog_slope, print_table, progress, save_figure
from portrouter.ann import ANNIndex, normalize, recall_at_k
from portrouter.dual import dual_objective, solve_dual
from portrouter.router import PORTRouter

__all__ = ["bench", "clustered"]

SEGMENT, K = 256, 5


def clustered(n: int, dim: int, rng: np.random.Generator, n_clusters: int = 512) -> np.ndarray:
    """``n`` unit vectors around ``n_clusters`` random centres (spread 0.5 per coordinate scale)."""
    centres = rng.standard_normal((n_clusters, dim)).astype(np.float32)
    x = centres[rng.integers(0, n_clusters, size=n)]
    x += 0.5 * rng.standard_normal((n, dim)).astype(np.float32)
    return normalize(x)


def _per_query_ms(index: ANNIndex, q: np.ndarray) -> tuple[float, np.ndarray]:
    tic = time.perf_counter()
    found = [index.search(q[i : i + SEGMENT])[0] for i in range(0, len(q), SEGMENT)]
    return 1e3 * (time.perf_counter() - tic) / len(q), np.concatenate(found)


def _search_rows(sizes, dim, n_queries, rng) -> list[dict]:
    rows = []
    for n in progress(sizes, "history sizes"):
        hist, q = clustered(n, dim, rng), clustered(n_queries, dim, rng)
        tic = time.perf_counter()
        hnsw = ANNIndex("hnsw", dim=dim, k=K, threads=-1)
        hnsw.add(hist)
        build = time.perf_counter() - tic
        flat, exact = ANNIndex("faiss", dim=dim, k=K), ANNIndex("exact", dim=dim, k=K)
        flat.add(hist)
        exact.add(hist)
        ms_hnsw, found = _per_query_ms(hnsw, q)
        ms_flat, truth = _per_query_ms(flat, q)
        ms_exact, _ = _per_query_ms(exact, q)
        recall = recall_at_k(found, truth)
        rows.append(
            {
                "history": n,
                "HNSW build s": build,
                "HNSW ms/query": ms_hnsw,
                "faiss flat ms/query": ms_flat,
                "numpy exact ms/query": ms_exact,
                "flat / HNSW": ms_flat / ms_hnsw,
                "HNSW recall@5": float(recall),
            }
        )
    return rows


def _optimisation_rows(lengths, rng) -> list[dict]:
    M, rows = 11, []
    price = np.geomspace(5e-5, 3e-3, M)
    for L in progress(lengths, "learning-phase lengths"):
        d = (rng.random((L, M)) < rng.uniform(0.2, 0.8, M)).astype(float)
        g = price * rng.lognormal(0.0, 0.4, size=(L, M))
        n_stream = L / 0.025  # the learning phase is the first ε = 2.5 % of the stream
        budgets = np.full(M, g.min(axis=1).mean() * n_stream / M)
        args = (d, g, budgets, 0.025, 1e-4)
        out = {"L": L}
        for solver in ("lp", "lbfgsb"):
            tic = time.perf_counter()
            gamma = solve_dual(*args, solver=solver)
            out[f"{solver} ms"] = 1e3 * (time.perf_counter() - tic)
            out[f"F({solver})"] = dual_objective(gamma, *args)
        rows.append(out)
    return rows


def _end_to_end(n_hist, n_stream, dim, rng) -> dict:
    M = 11
    hist, stream = clustered(n_hist, dim, rng), clustered(n_stream, dim, rng)
    d = rng.random((n_hist, M))
    g = np.geomspace(5e-5, 3e-3, M) * rng.lognormal(0.0, 0.4, size=(n_hist, M))
    index = ANNIndex("hnsw", dim=dim, k=K, threads=-1)
    index.add(hist)
    router = PORTRouter(index, d, g, np.full(M, g.mean() * n_stream / M), n_stream)
    tic = time.perf_counter()
    for i in range(0, n_stream, SEGMENT):
        router.route_batch(stream[i : i + SEGMENT])
    seconds = time.perf_counter() - tic
    return {"history": n_hist, "stream": n_stream, "queries/s": n_stream / seconds}


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    sizes: list[int] | None = None,
    dim: int = 384,
) -> dict[str, Any]:
    """Search latency vs history size, optimisation time vs L, routing throughput.

    ``device`` is accepted for the common interface (hnswlib and faiss-cpu run on the CPU);
    ``sizes`` and ``dim`` override the history sizes and the embedding dimension.
    """
    rng = np.random.default_rng(0)
    sizes = sizes or ([1_000, 3_000, 10_000] if quick else [1_000, 10_000, 100_000])
    search = _search_rows(sizes, dim, 1024 if quick else 4096, rng)
    print_table(search, title=f"neighbour search, dim {dim}, k={K}, segments of {SEGMENT}")
    xs = [r["history"] for r in search]
    slopes = {
        name: loglog_slope(xs, [r[f"{name} ms/query"] for r in search])
        for name in ("HNSW", "faiss flat", "numpy exact")
    }
    print(
        "log-log slope of ms/query vs history: "
        + ", ".join(f"{k} {v:.2f}" for k, v in slopes.items())
    )
    opt = _optimisation_rows([25, 200] if quick else [25, 200, 1000], rng)
    print_table(opt, title="one-time optimisation, M = 11")
    e2e = _end_to_end(min(sizes[-1], 10_000), 2048 if quick else 8192, dim, rng)
    print(f"PORT end to end: {e2e['queries/s']:.0f} routing decisions/s (history {e2e['history']})")
    fig, ax = figure()
    for name, style in (("HNSW", "o-"), ("faiss flat", "s-"), ("numpy exact", "^-")):
        ax.loglog(xs, [r[f"{name} ms/query"] for r in search], style, label=name)
    ax.set(xlabel="history size", ylabel="ms per query", title=f"kNN search (k={K}, dim {dim})")
    ax.legend()
    save_figure(fig, out / "bench.png")
    return {"dim": dim, "search": search, "slopes": slopes, "optimisation": opt, "end_to_end": e2e}
