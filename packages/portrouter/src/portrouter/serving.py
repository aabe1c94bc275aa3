"""Serving a stream under per-model budgets, and the paper's metrics.

Queries arrive in segments (256 in the paper's code); the router returns a model per query; the
query is served, and its true quality d_ij and cost g_ij revealed, iff the chosen model's spent
cost plus g_ij stays within B_i — otherwise (or when the router returns M, "not routed") it is lost.

    Performance = Σ_served d_ij,  Cost = Σ_served g_ij,  PPC = Performance / Cost,
    Throughput = #served,  Acc = Performance / #served.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from paperkit import Described, param_error
from portrouter.features import check_table

__all__ = ["ServingResult", "simulate_serving"]


@dataclass
class ServingResult:
    perf: float
    cost: float
    ppc: float
    throughput: int
    acc: float
    per_model_cost: np.ndarray
    lost: int
    route_seconds: float = 0.0
    choices: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64), repr=False)

    @property
    def ms_per_query(self) -> float:
        return 1e3 * self.route_seconds / max(len(self.choices), 1)

    def row(self) -> dict[str, float]:
        return {
            "Perf": self.perf,
            "Cost": self.cost,
            "PPC": self.ppc,
            "Throughput": self.throughput,
            "Acc": self.acc,
            "ms/query": self.ms_per_query,
        }


def simulate_serving(
    choices_fn: Callable[[np.ndarray], np.ndarray] | object | np.ndarray,
    stream_d: np.ndarray,
    stream_g: np.ndarray,
    emb: np.ndarray | None,
    budgets: np.ndarray,
    segment: int = 256,
) -> ServingResult:
    """Serve the stream in order. ``choices_fn``: a router (``route_batch``), a callable on a batch
    of embeddings, or a precomputed array of choices (offline methods)."""
    stream_d = check_table(stream_d, "stream_d", "simulate_serving")
    stream_g = check_table(stream_g, "stream_g", "simulate_serving", stream_d.shape[1])
    N, M = stream_d.shape
    budgets = np.asarray(budgets, dtype=np.float64)
    if budgets.shape != (M,) or (budgets < 0).any():
        raise param_error("budgets", "simulate_serving", f"{M} non-negative numbers", budgets)
    if segment < 1:
        raise param_error("segment", "simulate_serving", "a positive integer", segment)
    route = getattr(choices_fn, "route_batch", choices_fn)
    precomputed = isinstance(route, np.ndarray)
    if not precomputed and (emb is None or len(emb) != N):
        got = Described("None" if emb is None else f"{len(emb)} rows")
        raise param_error("emb", "simulate_serving", f"one embedding per query ({N})", got)
    choices = np.empty(N, dtype=np.int64)
    seconds = 0.0
    for start in range(0, N, segment):
        stop = min(start + segment, N)
        if precomputed:
            choices[start:stop] = route[start:stop]
        else:
            tic = time.perf_counter()
            choices[start:stop] = route(emb[start:stop])
            seconds += time.perf_counter() - tic
    spent = np.zeros(M)
    perf, served = 0.0, 0
    # budget accounting is sequential by nature: a query is lost once its model is exhausted
    for j, i in enumerate(choices):
        if i < M and spent[i] + stream_g[j, i] <= budgets[i]:
            spent[i] += stream_g[j, i]
            perf += stream_d[j, i]
            served += 1
    cost = float(spent.sum())
    return ServingResult(
        perf=float(perf),
        cost=cost,
        ppc=float(perf / cost) if cost > 0 else 0.0,
        throughput=served,
        acc=float(perf / served) if served else 0.0,
        per_model_cost=spent,
        lost=N - served,
        route_seconds=seconds,
        choices=choices,
    )
