"""Benchmark: ``rsnn bench [--quick]``.

1. Sampling throughput on a batch of 1000 random 3-regular graphs of 30 nodes (one compiled call
   for all graphs): random searches per second against random walks of length |V| per second.
2. Scaling on one random 3-regular graph of |V| up to 10^5 nodes: time of one search and of one
   walk of |V| steps; a search is O(|V| + |E|), so its log-log slope against |V| should be ~1.
3. Training cost per step on a CSL batch (32 graphs): RSNN at m searches against RWNN at m walks
   of length |V|, forward + backward, so the cost of matching accuracy with more walks can be read
   off against the reproduction's accuracies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import networkx as nx
import numpy as np
import torch
from torch_geometric.data import Batch

from paperkit import figure, loglog_slope, print_table, progress, save_figure, time_callable
from rsnn.data import graph_data, make_csl
from rsnn.graph import to_csr
from rsnn.models import RSNN, RWNN
from rsnn.sampling import sample_searches, walk_kernel

__all__ = ["bench"]


def _regular_batch(num_graphs: int, n: int):
    graphs = [nx.random_regular_graph(3, n, seed=i) for i in range(num_graphs)]
    d = graph_data(nx.disjoint_union_all(graphs))
    ptr = np.arange(num_graphs + 1) * n
    return to_csr(d.edge_index.numpy(), num_graphs * n, ptr)


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, sizes: list[int] | None = None
) -> dict[str, Any]:
    """Sampling throughput, sampling scaling over |V| and training step cost (CPU sampling).

    ``device`` runs the training-step models (sampling always runs on the CPU); ``sizes``
    overrides the graph sizes of part 2 (for smoke tests).
    """
    sizes = sizes or ([1000, 10_000] if quick else [1000, 10_000, 100_000])
    gen = torch.Generator().manual_seed(0)

    csr = _regular_batch(1000, 30)
    starts = csr.node_ptr[:-1].copy()
    t_search = time_callable(lambda: sample_searches(csr, 1, gen), label="searches")
    t_walk = time_callable(lambda: walk_kernel(csr, starts, 30, False, gen), label="walks")
    throughput = {
        "searches/s": 1000 / t_search.median_s,
        "walks/s (len 30)": 1000 / t_walk.median_s,
        "search tokens/s": 1000 * 59 / t_search.median_s,
        "walk tokens/s": 1000 * 31 / t_walk.median_s,
    }
    print_table([throughput], title="1000 random 3-regular graphs of 30 nodes, one call, CPU")

    scaling = []
    for n in progress(sizes, "scaling"):
        one = _regular_batch(1, n)
        ts = time_callable(lambda one=one: sample_searches(one, 1, gen), min_run_time=0.5)
        tw = time_callable(
            lambda one=one, n=n: walk_kernel(one, np.array([0]), n, False, gen), min_run_time=0.5
        )
        scaling.append(
            {
                "|V|": n,
                "|E|": 3 * n // 2,
                "search ms": 1e3 * ts.median_s,
                "walk ms": 1e3 * tw.median_s,
            }
        )
    slopes = {
        "search": loglog_slope([r["|V|"] for r in scaling], [r["search ms"] for r in scaling]),
        "walk": loglog_slope([r["|V|"] for r in scaling], [r["walk ms"] for r in scaling]),
    }
    print_table(scaling, title="one random 3-regular graph: one search vs one walk of |V| steps")
    print(f"log-log slope vs |V|: search {slopes['search']:.2f}, walk {slopes['walk']:.2f}")

    batch = Batch.from_data_list(make_csl(num_per_class=4)[:32])
    steps = []
    for cls, m in progress(
        [(RSNN, 1), (RSNN, 4), (RWNN, 1), (RWNN, 4), (RWNN, 16)] + ([] if quick else [(RWNN, 64)]),
        "training step",
    ):
        torch.manual_seed(0)
        model = cls(1, hidden=32, out_dim=10, seq_model="cnn").to(device)
        opt = torch.optim.Adam(model.parameters())

        def step(model=model, opt=opt, m=m):
            opt.zero_grad()
            loss = model(batch, m).logsumexp(-1).mean()
            loss.backward()
            opt.step()

        t = time_callable(step, device=device, min_run_time=0.5)
        steps.append(
            {
                "model": cls.__name__,
                "m": m,
                "tokens/graph": model.last_num_tokens // 32,
                "ms/step": 1e3 * t.median_s,
            }
        )
    base = steps[0]["ms/step"]
    for row in steps:
        row["vs RSNN m=1"] = row["ms/step"] / base
    print_table(steps, title=f"training step on 32 CSL graphs, CNN hidden 32, {device}")

    fig, axes = figure(1, 2, size=(9, 3.5))
    ax1, ax2 = axes[0]
    ax1.loglog([r["|V|"] for r in scaling], [r["search ms"] for r in scaling], "o-", label="search")
    ax1.loglog([r["|V|"] for r in scaling], [r["walk ms"] for r in scaling], "s-", label="walk")
    ax1.set(xlabel="|V|", ylabel="ms per sample", title="sampling cost")
    ax1.legend()
    for name in ("RSNN", "RWNN"):
        rows = [r for r in steps if r["model"] == name]
        ax2.loglog([r["m"] for r in rows], [r["ms/step"] for r in rows], "o-", label=name)
    ax2.set(xlabel="sequences per graph m", ylabel="ms per training step", title="training cost")
    ax2.legend()
    save_figure(fig, out / "bench.png")
    return {"throughput": throughput, "scaling": scaling, "slopes": slopes, "train_step": steps}
