"""Serving a stream under per-model budgets, and the paper's metrics.

Queries arrive in segments (256 in the paper's code); the router returns a model per query; the
query is served, and its true quality d_ij and cost g_ij revealed, iff the chosen model's spent
cost plus g_ij stays within B_i — otherwise (or when the router returns M, "not routed") it is lost.

    Performance = Σ_served d_ij,  Cost = Σ_served g_ij,  PPC = Performance / Cost,
    Throughput = #served,  Acc = Performance / #served.

NaN policy: NaN or inf in the stream's outcomes, the budgets or the embeddings is refused
(``ValueError``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from paperkit import Described, check_array, check_int, describe, param_error

__all__ = ["ServingResult", "simulate_serving"]


@dataclass
class ServingResult:
    """What :func:`simulate_serving` measured: the paper's metrics, the cost spent per model, the
    number of lost queries, the routing time and the choices (M: not routed)."""

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
    of embeddings, or a precomputed array (N,) of choices in {0, …, M} (offline methods, ``emb``
    may then be None). ``stream_d``, ``stream_g`` (N, M) are the true quality and cost, ``emb``
    (N, dim) the query embeddings, ``budgets`` (M,) finite and non-negative."""
    owner = "simulate_serving"
    dims: dict = {}
    stream_d = check_array("stream_d", owner, stream_d, shape=("N", "M"), dims=dims)
    stream_g = check_array("stream_g", owner, stream_g, shape=("N", "M"), dims=dims)
    N, M = stream_d.shape
    budgets = check_array("budgets", owner, budgets, shape=("M",), dims=dims)
    if (budgets < 0).any():
        raise param_error("budgets", owner, "non-negative", describe(budgets))
    segment = check_int("segment", owner, segment, low=1)
    route = getattr(choices_fn, "route_batch", choices_fn)
    precomputed = not callable(route)
    if precomputed:
        route = check_array(
            "choices_fn", owner, route, shape=("N",), dims=dims, kind="int", finite=False
        )
        if route.min() < 0 or route.max() > M:
            raise param_error("choices_fn", owner, f"choices in [0, {M}]", describe(route))
    elif emb is None:
        raise param_error("emb", owner, "the (N, dim) query embeddings", Described("None"))
    else:
        emb = check_array("emb", owner, emb, shape=("N", None), dims=dims)
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
