"""Benchmark: ``graphtop bench [--quick] [--out DIR]``.

Every timing is a :class:`paperkit.Measurement` (median seconds per call, interquartile spread,
peak bytes) made with :func:`paperkit.measure`:

1. ``construction``: :func:`build_target_subgraphs` for every node of a CSBM graph with mean
   degree 10 (``"vectorised"``), against a loop of per-target ``k_hop_subgraph`` calls that only
   extracts the balls and their edges (``"k_hop_subgraph loop"``, a lower bound on any
   per-target builder); size = nodes. The log-log slope, the speed-up at the largest size and
   the crossover come from :func:`paperkit.scaling`.
2. ``epoch_vs_targets``: one GraphTOP training epoch (batches of 50 subgraphs, forward +
   backward + Adam step) on N = 2000, mean degree 8; size = training targets.
3. ``epoch_vs_degree``: one epoch at 100 targets; size = the mean degree (2..16), with the mean
   2-hop ball and edge counts in ``params``.
4. ``step_50_targets``: one training step on 50 targets; its peak bytes against the analytic
   bytes of the candidate-edge set (per target, both directions: two int64 ids, a float32
   weight, a bool mask).

Claims (complexity, this package's targets for the official builder and training loop):
construction is linear in the graph size (held when its slope is at most 1.2, partly up to
1.5) and an epoch is linear in the training targets (the same rule).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch_geometric.utils import k_hop_subgraph

from graphtop.data import make_csbm
from graphtop.encoder import GCNEncoder
from graphtop.model import GraphTOP
from graphtop.subgraphs import build_target_subgraphs, num_candidates
from paperkit import (
    Claim,
    Measurement,
    Report,
    figure,
    loglog_slope,
    measure,
    plot_scaling,
    print_table,
    progress,
    save_figure,
    scaling,
)

__all__ = ["bench"]

BYTES_PER_DIRECTED_EDGE = 2 * 8 + 4 + 1  # int64 source and target, float32 weight, bool mask
LINEAR, ROUGHLY_LINEAR = 1.2, 1.5  # slope bounds of "linear" (held) and "partly"
LOOP = "k_hop_subgraph loop"


def _loop_balls(data, nodes) -> None:
    for v in nodes.tolist():
        k_hop_subgraph(v, 2, data.edge_index, relabel_nodes=True, num_nodes=data.num_nodes)


def _model(data, hidden: int, device: str, seed: int = 0) -> GraphTOP:
    torch.manual_seed(seed)
    encoder = GCNEncoder(data.num_features, hidden, hidden).to(device)
    return GraphTOP(encoder, int(data.y.max()) + 1, hidden=hidden).to(device)


def _epoch(data, targets: torch.Tensor, hidden: int, device: str):
    """One training epoch of GraphTOP over the subgraphs of ``targets``, as a callable."""
    model = _model(data, hidden, device)
    subgraphs = build_target_subgraphs(data, targets)
    ctx = model._context(data, "bench")
    optimizer = torch.optim.Adam(model.trainable_parameters(), lr=5e-4)
    noise = torch.Generator(device=device).manual_seed(0)

    def one_epoch() -> None:
        model.train_epoch(subgraphs, ctx, optimizer, epoch=1, epochs=2, batch_size=50, noise=noise)

    return one_epoch


def _construction(sizes: list[int], timer: dict[str, Any]) -> list[Measurement]:
    rows = []
    for n in progress(sizes, "construction"):
        data = make_csbm(n, 4, 32, 10.0, 0.5, 1.0, seed=0)
        nodes = torch.arange(n)
        edges = {"edges": data.edge_index.shape[1] // 2}
        rows.append(
            measure(
                "vectorised",
                n,
                lambda d=data, v=nodes: build_target_subgraphs(d, v),
                case="construction",
                params=edges,
                **timer,
            )
        )
        rows.append(
            measure(
                LOOP,
                n,
                lambda d=data, v=nodes: _loop_balls(d, v),
                case="construction",
                memory=False,
                params=edges,
                **timer,
            )
        )
    return rows


def _degree_rows(degrees: list[float], hidden: int, device: str, timer: dict[str, Any]):
    """Epoch time, candidate set and step memory against the mean degree."""
    rows, memory = [], []
    for d in progress(degrees, "epoch and memory vs degree"):
        g = make_csbm(2000, 4, 32, d, 0.5, 1.0, seed=0).to(device)
        nodes = torch.arange(100)
        subs = build_target_subgraphs(g, nodes)
        ball = {
            "mean ball": float(np.mean([s.num_nodes for s in subs])),
            "mean edges": float(np.mean([s.edge_index.shape[1] for s in subs])),
        }
        rows.append(
            measure(
                "graphtop",
                d,
                _epoch(g, nodes, hidden, device),
                case="epoch_vs_degree",
                memory=False,
                params=ball,
                **timer,
            )
        )
        step = measure(
            "graphtop", d, _epoch(g, nodes[:50], hidden, device), case="step_50_targets", **timer
        )
        rows.append(step)
        cand = float(np.mean([num_candidates(s) for s in subs]))
        original = float(np.mean([float(s.edge_weight[s.cand_mask].sum()) / 2 for s in subs]))
        memory.append(
            {
                "mean degree": d,
                "candidates per target": cand,
                "original target edges": original,
                "candidate_bytes": cand * 2 * BYTES_PER_DIRECTED_EDGE,
                "candidates / original": cand / max(original, 1e-9),
                "step peak_bytes (50 targets)": step.peak_bytes,
            }
        )
    return rows, memory


def _tables(rows: list[Measurement], memory: list[dict[str, Any]]) -> dict[str, list[dict]]:
    def case(name: str, impl: str = "graphtop") -> list[Measurement]:
        return [r for r in rows if r.case == name and r.impl == impl]

    loop = {r.size: r.seconds for r in case("construction", LOOP)}
    construction = [
        {
            "nodes": r.size,
            "edges": r.params["edges"],
            "seconds": r.seconds,
            "peak_bytes": r.peak_bytes,
            f"{LOOP} s": loop[r.size],
            "speed-up": loop[r.size] / r.seconds,
        }
        for r in case("construction", "vectorised")
    ]
    epoch = [
        {"targets": r.size, "seconds": r.seconds, "ms per target": 1e3 * r.seconds / r.size}
        for r in case("epoch_vs_targets")
    ]
    ball = [
        {"mean degree": r.size, **r.params, "seconds": r.seconds} for r in case("epoch_vs_degree")
    ]
    return {"construction": construction, "epoch": epoch, "ball": ball, "memory": memory}


def _slopes(rows: list[Measurement], tables: dict[str, list[dict]]) -> dict[str, Any]:
    construction = scaling(rows, baseline=LOOP, case="construction")
    epoch = scaling(rows, case="epoch_vs_targets")
    ball, memory = tables["ball"], tables["memory"]
    return {
        "construction_vs_nodes": construction["vectorised"]["slope"],
        "construction_speedup_at_largest": construction["vectorised"]["speedup_at_largest"],
        "construction_crossover": construction["vectorised"]["crossover"],
        "epoch_vs_targets": epoch["graphtop"]["slope"],
        "epoch_vs_ball_edges": loglog_slope(
            [r["mean edges"] for r in ball], [r["seconds"] for r in ball]
        ),
        "candidates_vs_degree": loglog_slope(
            [r["mean degree"] for r in memory], [r["candidates per target"] for r in memory]
        ),
    }


def _linear(slope: float) -> str:
    return "held" if slope <= LINEAR else ("partly" if slope <= ROUGHLY_LINEAR else "not held")


def _claims(slopes: dict[str, Any]) -> list[Claim]:
    rule = f"held when the log-log slope is at most {LINEAR}, partly up to {ROUGHLY_LINEAR}"
    return [
        Claim(
            "Building every target's rewirable 2-hop subgraph is linear in the graph size",
            paper="not a claim of the paper: this package's target for its vectorised builder",
            measured=f"slope {slopes['construction_vs_nodes']:.3g} over the nodes; "
            f"{slopes['construction_speedup_at_largest']:.3g}x the k_hop_subgraph loop at the "
            "largest size",
            verdict=_linear(slopes["construction_vs_nodes"]),
            why=f"{rule}; mean degree 10, every node a target",
        ),
        Claim(
            "One GraphTOP training epoch is linear in the number of training targets",
            paper="not a claim of the paper: the cost of the per-target subgraphs",
            measured=f"slope {slopes['epoch_vs_targets']:.3g} over the training targets",
            verdict=_linear(slopes["epoch_vs_targets"]),
            why=f"{rule}; N = 2000, mean degree 8, batches of 50",
        ),
    ]


def _plot(rows: list[Measurement], memory: list[dict[str, Any]], path: Path) -> Path:
    fig, axes = figure(1, 2, size=(9, 3.6))
    ax = axes[0, 0]
    for impl, marker in (("vectorised", "o-"), (LOOP, "s--")):
        mine = [r for r in rows if r.case == "construction" and r.impl == impl]
        ax.loglog([r.size for r in mine], [r.seconds for r in mine], marker, label=impl)
    ax.set(xlabel="nodes (all are targets)", ylabel="seconds", title="construction")
    ax.legend()
    ax = axes[0, 1]
    degrees = [r["mean degree"] for r in memory]
    ax.loglog(degrees, [r["candidates per target"] for r in memory], "o-", label="candidates")
    ax.loglog(degrees, [r["original target edges"] for r in memory], "s--", label="original")
    ax.set(xlabel="mean degree", ylabel="edges per target", title="candidate set")
    ax.legend()
    return save_figure(fig, path)


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    sizes: list[int] | None = None,
    targets: list[int] | None = None,
    degrees: list[float] | None = None,
) -> Report:
    """Construction, epoch and memory scaling; prints the tables, writes ``bench.png`` and
    ``epoch_scaling.png``. ``sizes``, ``targets`` and ``degrees`` override the sweeps."""
    out = Path(out)
    sizes = list(sizes or ([500, 1000, 2000] if quick else [500, 1000, 2000, 4000, 8000]))
    targets = list(targets or ([25, 50, 100, 200] if quick else [25, 50, 100, 200, 400]))
    degrees = list(degrees or ([2.0, 4.0, 8.0, 16.0] if quick else [2.0, 4.0, 8.0, 16.0, 32.0]))
    hidden = 64
    timer = {"device": device, "min_repeats": 2 if quick else 3, "min_time": 0.1}

    rows = _construction(sizes, timer)
    data = make_csbm(2000, 4, 32, 8.0, 0.5, 1.0, seed=0).to(device)
    for t in progress(targets, "epoch vs targets"):
        epoch = _epoch(data, torch.arange(t), hidden, device)
        rows.append(measure("graphtop", t, epoch, case="epoch_vs_targets", memory=False, **timer))
    degree_rows, memory = _degree_rows(degrees, hidden, device, timer)
    rows += degree_rows

    tables = _tables(rows, memory)
    slopes = _slopes(rows, tables)
    tables["slopes"] = [{"quantity": k, "value": v} for k, v in slopes.items()]
    print_table(tables["construction"], title="subgraph construction for every node (degree 10)")
    print_table(tables["epoch"], title="one GraphTOP epoch vs training targets (N=2000, degree 8)")
    print_table(tables["ball"], title="one GraphTOP epoch (100 targets) vs 2-hop ball size")
    print_table(tables["memory"], title="candidate-edge set vs mean degree (N=2000)")
    print_table(tables["slopes"], title="log-log slopes")
    figures = [
        _plot(rows, memory, out / "bench.png"),
        plot_scaling(
            rows, out / "epoch_scaling.png", case="epoch_vs_targets", xlabel="training targets"
        ),
    ]
    return Report(
        claims=_claims(slopes),
        tables=tables,
        figures=figures,
        settings={
            "sizes": sizes,
            "targets": targets,
            "degrees": degrees,
            "hidden": hidden,
            "batch_size": 50,
            "device": device,
            **{k: v for k, v in timer.items() if k != "device"},
        },
        measurements=rows,
    )
