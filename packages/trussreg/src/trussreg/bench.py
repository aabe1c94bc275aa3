"""Benchmark: truss decomposition against maximal-clique search, and the skeleton's savings.

``trussreg bench [--quick] [--device cpu|cuda]``

(a) Time of :func:`trussreg.truss_decomposition` on the full compatibility graph of N synthetic
    correspondences (95% outliers) for growing N, against enumerating every maximal clique of the
    same graph (networkx ``find_cliques``, the MAC/TEASER++ building block, capped at a time
    budget), with the log-log slope of time against the edge count E (O(E^1.5) for peeling).
(b) The same on consensus-sampled skeletons of growing size M at N = 2000 and 50% outliers: here
    the skeleton is a near-clique of inliers, the worst case for triangle counting and the case
    where clique enumeration explodes.
(c) The whole pipeline with and without consensus sampling (m = 500 vs m = N) over N, up to
    N = 10,000 with sampling (m = N only up to 5,000).
On a GPU, (a) and (b) add the CuPy kernel with the speed-up over the numpy path.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np

from paperkit import figure, loglog_slope, print_table, progress, save_figure
from trussreg.data import make_synthetic_pair
from trussreg.graph import compatibility_graph, consensus_sample, edge_list
from trussreg.registration import TrussRegistration
from trussreg.reproduce import median_seconds
from trussreg.truss import truss_decomposition

__all__ = ["bench", "clique_enumeration_seconds"]

TAU = 0.1


def clique_enumeration_seconds(edges: np.ndarray, budget_s: float) -> tuple[float, int, bool]:
    """Time to enumerate every maximal clique (networkx ``find_cliques``); stops at the budget.

    Returns (seconds, cliques found, finished).
    """
    graph = nx.Graph()
    graph.add_edges_from(edges.tolist())
    start, count = time.perf_counter(), 0
    for count, _ in enumerate(nx.find_cliques(graph), start=1):
        if count % 256 == 0 and time.perf_counter() - start > budget_s:
            return time.perf_counter() - start, count, False
    return time.perf_counter() - start, count, True


def _row(label: str, size: int, A: Any, device: str, budget_s: float, repeats: int) -> dict:
    edges = edge_list(A)
    row: dict[str, Any] = {label: size, "edges": len(edges)}
    row["truss ms"] = 1e3 * median_seconds(lambda: truss_decomposition(A), repeats, warmup=False)
    if device.startswith("cuda"):
        row["cupy ms"] = 1e3 * median_seconds(lambda: truss_decomposition(A, "cupy"), repeats)
        row["numpy / cupy"] = row["truss ms"] / row["cupy ms"]
    seconds, count, finished = clique_enumeration_seconds(edges, budget_s)
    row["cliques"] = count if finished else f">= {count}"
    row["clique ms"] = 1e3 * seconds if finished else f"> {1e3 * budget_s:.0f}"
    row["clique / truss"] = (
        (1e3 * seconds / row["truss ms"])
        if finished
        else (f"> {1e3 * seconds / row['truss ms']:.1f}")
    )
    return row


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    sizes: list[int] | None = None,
    skeletons: list[int] | None = None,
    budget_s: float | None = None,
) -> dict[str, Any]:
    """Tables (a)-(c), slopes and ``bench.png``. ``sizes``, ``skeletons`` and ``budget_s``
    override N values, M values and the clique time budget (for smoke tests)."""
    sizes = sizes or ([500, 1000, 2000] if quick else [500, 1000, 2000, 5000])
    skeletons = skeletons or ([100, 200, 500] if quick else [100, 200, 300, 500, 1000, 2000])
    budget_s = budget_s if budget_s is not None else (5.0 if quick else 20.0)
    repeats = 1 if not quick else 3
    full_rows, skeleton_rows, pipeline_rows = [], [], []
    for n in progress(sizes, "full graphs"):
        pair = make_synthetic_pair(n_corr=n, outlier_ratio=0.95, seed=n)
        A = compatibility_graph(pair["P"], pair["Q"], TAU)
        full_rows.append(_row("N", n, A, device, budget_s, repeats))
    pair = make_synthetic_pair(n_corr=max(2000, max(skeletons)), outlier_ratio=0.5, seed=1)
    A_big = compatibility_graph(pair["P"], pair["Q"], TAU)
    for m in progress(skeletons, "skeletons"):
        nodes = consensus_sample(A_big, m)
        skeleton_rows.append(_row("M", m, A_big[nodes][:, nodes], device, budget_s, repeats))
    pipeline_sizes = sizes if quick or len(sizes) < 4 else [*sizes[1:], 2 * sizes[-1]]
    for n in progress(pipeline_sizes, "pipeline"):
        pair = make_synthetic_pair(n_corr=n, outlier_ratio=0.9, seed=n)
        times = {}
        for label, m in (("m=500", 500), ("m=N", None)):
            if m is None and n > 5000:  # the unsampled truss on 10^6+ edges: minutes
                continue
            reg = TrussRegistration(tau_c=TAU, m=m)
            times[label] = median_seconds(
                lambda reg=reg, P=pair["P"], Q=pair["Q"]: reg.fit(P, Q), 1, warmup=False
            )
        pipeline_rows.append(
            {
                "N": n,
                "pipeline m=500 ms": 1e3 * times["m=500"],
                "pipeline m=N ms": 1e3 * times["m=N"] if "m=N" in times else "not run",
                "sampling speed-up": times["m=N"] / times["m=500"] if "m=N" in times else "",
            }
        )
    print_table(full_rows, title=f"(a) full compatibility graph, 95% outliers, {device}")
    print_table(skeleton_rows, title=f"(b) skeletons of N=2000 at 50% outliers, {device}")
    print_table(pipeline_rows, title="(c) whole pipeline at 90% outliers")
    slopes = {}
    for name, rows in (("full", full_rows), ("skeleton", skeleton_rows)):
        big = [r for r in rows if r["truss ms"] > 5]
        if len(big) >= 2:
            slopes[name] = loglog_slope([r["edges"] for r in big], [r["truss ms"] for r in big])
    print("log-log slope of truss time against edge count:", slopes)

    fig, axes = figure(1, 2, size=(10, 4))
    for ax, rows, label in ((axes[0, 0], full_rows, "N"), (axes[0, 1], skeleton_rows, "M")):
        ax.loglog([r["edges"] for r in rows], [r["truss ms"] for r in rows], "o-", label="truss")
        done = [r for r in rows if not isinstance(r["clique ms"], str)]
        ax.loglog(
            [r["edges"] for r in done], [r["clique ms"] for r in done], "s-", label="all cliques"
        )
        ax.set(xlabel="edges E", ylabel="ms", title=f"over {label}")
        ax.legend()
    save_figure(fig, out / "bench.png")
    return {
        "device": device,
        "full": full_rows,
        "skeleton": skeleton_rows,
        "pipeline": pipeline_rows,
        "slopes": slopes,
        "clique_budget_s": budget_s,
    }
