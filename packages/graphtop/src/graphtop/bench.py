"""Benchmark: ``graphtop bench [--quick] [--out DIR]``.

1. Subgraph construction vs graph size: :func:`build_target_subgraphs` for every node of a CSBM
   graph with mean degree 10 (N = 2000 is the card's "2000 nodes on a 10k-edge graph", target
   < 2 s), against a loop of per-target ``k_hop_subgraph`` calls that only extracts the balls and
   their edges (a lower bound on any per-target builder); log-log slope over N (1 = linear).
   Wall time (best of the repeats) and the process CPU time are both reported: on a shared
   machine the wall time includes waiting for a core.
2. One GraphTOP training epoch (batches of 50 subgraphs, forward + backward + Adam step) vs the
   number of training targets (expected slope 1) and vs the mean 2-hop ball size (mean degree
   2..16 at 100 targets).
3. Memory of the candidate-edge set vs the mean degree: candidates per target = |S_v| - 1, each
   stored as two directed edges (two int64 ids, a float weight, a bool mask); against the
   target's original edges; plus the measured peak memory of one training step on a batch of 50.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch_geometric.utils import k_hop_subgraph

from graphtop.data import make_csbm
from graphtop.encoder import GCNEncoder
from graphtop.model import GraphTOP
from graphtop.subgraphs import build_target_subgraphs, num_candidates
from paperkit import figure, loglog_slope, peak_memory, print_table, progress, save_figure

__all__ = ["bench"]

BYTES_PER_DIRECTED_EDGE = 2 * 8 + 4 + 1  # int64 source and target, float32 weight, bool mask


def _best_of(fn, repeats: int, clock=time.perf_counter) -> float:
    times = []
    for _ in range(repeats):
        start = clock()
        fn()
        times.append(clock() - start)
    return min(times)


def _loop_balls(data, nodes) -> None:
    for v in nodes.tolist():
        k_hop_subgraph(v, 2, data.edge_index, relabel_nodes=True, num_nodes=data.num_nodes)


def _model(data, hidden: int, device: str, seed: int = 0):
    torch.manual_seed(seed)
    encoder = GCNEncoder(data.num_features, hidden, hidden).to(device)
    return GraphTOP(encoder, int(data.y.max()) + 1, hidden=hidden).to(device)


def _epoch_seconds(data, targets: torch.Tensor, hidden: int, device: str, repeats: int) -> float:
    model = _model(data, hidden, device)
    subgraphs = build_target_subgraphs(data, targets)
    ctx = model._context(data)
    optimizer = torch.optim.Adam(model.trainable_parameters(), lr=5e-4)
    noise = torch.Generator(device=device).manual_seed(0)

    def one_epoch():
        model.train_epoch(subgraphs, ctx, optimizer, epoch=1, epochs=2, batch_size=50, noise=noise)
        if device.startswith("cuda"):
            torch.cuda.synchronize()

    one_epoch()  # warm-up
    return _best_of(one_epoch, repeats)


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    sizes: list[int] | None = None,
    targets: list[int] | None = None,
    degrees: list[float] | None = None,
) -> dict[str, Any]:
    """Construction, epoch and memory scaling; prints three tables and writes ``bench.png``."""
    out = Path(out)
    sizes = sizes or ([500, 1000, 2000] if quick else [500, 1000, 2000, 4000, 8000])
    targets = targets or ([25, 50, 100, 200] if quick else [25, 50, 100, 200, 400])
    degrees = degrees or ([2.0, 4.0, 8.0, 16.0] if quick else [2.0, 4.0, 8.0, 16.0, 32.0])
    hidden = 64
    repeats = 2 if quick else 3

    construction = []
    for n in progress(sizes, "construction"):
        data = make_csbm(n, 4, 32, 10.0, 0.5, 1.0, seed=0)
        nodes = torch.arange(n)
        seconds = _best_of(lambda d=data, v=nodes: build_target_subgraphs(d, v), repeats)
        cpu = _best_of(lambda d=data, v=nodes: build_target_subgraphs(d, v), 1, time.process_time)
        loop = _best_of(lambda d=data, v=nodes: _loop_balls(d, v), 1)
        construction.append(
            {
                "nodes": n,
                "edges": data.edge_index.shape[1] // 2,
                "seconds": seconds,
                "cpu seconds": cpu,
                "loop k_hop_subgraph s": loop,
                "speed-up": loop / seconds,
            }
        )

    data = make_csbm(2000, 4, 32, 8.0, 0.5, 1.0, seed=0).to(device)
    epoch_rows = []
    for t in progress(targets, "epoch vs targets"):
        seconds = _epoch_seconds(data, torch.arange(t), hidden, device, repeats)
        epoch_rows.append({"targets": t, "seconds": seconds, "ms per target": 1e3 * seconds / t})

    ball_rows, memory = [], []
    for d in progress(degrees, "epoch and memory vs degree"):
        g = make_csbm(2000, 4, 32, d, 0.5, 1.0, seed=0).to(device)
        nodes = torch.arange(100)
        subs = build_target_subgraphs(g, nodes)
        ball = float(np.mean([s.num_nodes for s in subs]))
        edges = float(np.mean([s.edge_index.shape[1] for s in subs]))
        seconds = _epoch_seconds(g, nodes, hidden, device, repeats)
        ball_rows.append(
            {"mean degree": d, "mean ball": ball, "mean edges": edges, "seconds": seconds}
        )
        cand = float(np.mean([num_candidates(s) for s in subs]))
        original = float(np.mean([float(s.edge_weight[s.cand_mask].sum()) / 2 for s in subs]))
        model = _model(g, hidden, device)
        batch_subs = subs[:50]

        def step(model=model, g=g, batch_subs=batch_subs):
            ctx = model._context(g)
            optimizer = torch.optim.Adam(model.trainable_parameters(), lr=5e-4)
            model.train_epoch(batch_subs, ctx, optimizer, epoch=1, epochs=2, batch_size=50)

        memory.append(
            {
                "mean degree": d,
                "candidates per target": cand,
                "original target edges": original,
                "candidate_bytes": cand * 2 * BYTES_PER_DIRECTED_EDGE,
                "candidates / original": cand / max(original, 1e-9),
                "step peak MB (50 targets)": peak_memory(step, device=device) / 2**20,
            }
        )

    slopes = {
        "construction_vs_nodes": loglog_slope(sizes, [r["seconds"] for r in construction]),
        "epoch_vs_targets": loglog_slope(targets, [r["seconds"] for r in epoch_rows]),
        "epoch_vs_ball_edges": loglog_slope(
            [r["mean edges"] for r in ball_rows], [r["seconds"] for r in ball_rows]
        ),
        "candidates_vs_degree": loglog_slope(degrees, [r["candidates per target"] for r in memory]),
    }
    print_table(construction, title="subgraph construction for every node (mean degree 10)")
    print_table(epoch_rows, title="one GraphTOP epoch vs training targets (N=2000, degree 8)")
    print_table(ball_rows, title="one GraphTOP epoch (100 targets) vs 2-hop ball size")
    print_table(memory, title="candidate-edge set vs mean degree (N=2000)")
    print_table([{"slope": k, "value": v} for k, v in slopes.items()], title="log-log slopes")

    fig, axes = figure(1, 3, size=(13, 3.6))
    axes = axes.ravel()
    axes[0].loglog(sizes, [r["seconds"] for r in construction], "o-", label="vectorised")
    axes[0].loglog(sizes, [r["loop k_hop_subgraph s"] for r in construction], "s--", label="loop")
    axes[0].set(xlabel="nodes (all are targets)", ylabel="seconds", title="construction")
    axes[0].legend()
    axes[1].loglog(targets, [r["seconds"] for r in epoch_rows], "o-")
    axes[1].set(xlabel="training targets", ylabel="seconds per epoch", title="epoch")
    axes[2].loglog(degrees, [r["candidates per target"] for r in memory], "o-", label="candidates")
    axes[2].loglog(degrees, [r["original target edges"] for r in memory], "s--", label="original")
    axes[2].set(xlabel="mean degree", ylabel="edges per target", title="candidate set")
    axes[2].legend()
    save_figure(fig, out / "bench.png")
    return {
        "device": device,
        "construction": construction,
        "epoch": epoch_rows,
        "ball": ball_rows,
        "memory": memory,
        "slopes": slopes,
    }
