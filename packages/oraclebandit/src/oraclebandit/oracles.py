"""Exact combinatorial oracles :math:`\\mathrm{Oracle}(w) = \\arg\\max_{A \\in \\mathcal{A}}
\\sum_{i \\in A} w_i` (the linear-reward oracle of Section 2 of the paper), and a call counter.

Every oracle is a callable ``w (d,) -> bool mask (d,)`` with ``d``, ``m`` (the largest action
size), ``feasible(mask)`` and ``actions()`` (every feasible action, for exact index maximization
over small action sets). Weights must be finite: NaN and inf are refused.

>>> import numpy as np
>>> oracle = CountingOracle(TopMOracle(d=5, m=2))
>>> oracle(np.array([0.1, 0.9, 0.3, 0.8, 0.2])).nonzero()[0].tolist(), oracle.n_calls
([1, 3], 1)
"""

from __future__ import annotations

import itertools
import math
import time
from typing import Any

import networkx as nx
import numpy as np

from paperkit import check_array, check_int, check_real, param_error

__all__ = [
    "CountingOracle",
    "MatroidGreedyOracle",
    "ShortestPathOracle",
    "TopMOracle",
    "grid_dag",
]

#: The most actions ``actions()`` enumerates.
MAX_ACTIONS = 5000


def _masks(d: int, subsets: list[tuple[int, ...]]) -> np.ndarray:
    out = np.zeros((len(subsets), d), dtype=bool)
    for row, subset in enumerate(subsets):
        out[row, list(subset)] = True
    return out


def _weights(w: Any, d: int, owner: str) -> np.ndarray:
    """``w`` as a finite float (d,) array; a float64 array of that shape is checked for
    finiteness only (the per-round path of the algorithms), anything else by ``check_array``."""
    fast = isinstance(w, np.ndarray) and w.dtype == np.float64 and w.shape == (d,)
    if fast and np.isfinite(w).all():
        return w
    return check_array("w", owner, w, shape=(d,)).astype(float, copy=False)


class TopMOracle:
    """Top-m: :math:`\\mathcal{A} = \\{A \\subseteq [d] : |A| = m\\}`, solved by a partial sort
    (ties broken towards the lower index). NaN weights are refused."""

    def __init__(self, d: int, m: int) -> None:
        self.d = check_int("d", "TopMOracle", d, low=1)
        self.m = check_int("m", "TopMOracle", m, low=1, high=self.d)

    def __call__(self, w: np.ndarray) -> np.ndarray:
        w = _weights(w, self.d, "TopMOracle")
        mask = np.zeros(self.d, dtype=bool)
        mask[np.argsort(-w, kind="stable")[: self.m]] = True
        return mask

    def feasible(self, mask: np.ndarray) -> bool:
        """Whether ``mask`` holds exactly ``m`` arms."""
        return int(np.count_nonzero(mask)) == self.m

    def actions(self) -> np.ndarray:
        """All :math:`\\binom{d}{m}` actions as a bool array (at most 5000)."""
        if math.comb(self.d, self.m) > MAX_ACTIONS:
            raise param_error("m", "TopMOracle.actions", f"at most {MAX_ACTIONS} actions", self.m)
        return _masks(self.d, list(itertools.combinations(range(self.d), self.m)))


class MatroidGreedyOracle:
    """A partition matroid truncated at rank m: at most ``capacities[g]`` arms of group ``g`` and
    at most ``m`` arms in all. The greedy algorithm (decreasing weight, add while independent,
    positive weights only) is exact on matroids (Edmonds 1971). ``groups=None``: one group of
    capacity ``m`` (the uniform matroid). NaN weights are refused."""

    def __init__(
        self,
        d: int,
        m: int,
        groups: np.ndarray | None = None,
        capacities: np.ndarray | None = None,
    ) -> None:
        owner = "MatroidGreedyOracle"
        self.d = check_int("d", owner, d, low=1)
        self.m = check_int("m", owner, m, low=1, high=self.d)
        if groups is None:
            self.groups = np.zeros(self.d, dtype=np.int64)
        else:
            self.groups = check_array("groups", owner, groups, shape=(self.d,), kind="int")
            if self.groups.min() < 0:
                raise param_error("groups", owner, "non-negative group labels", "a negative label")
        n_groups = int(self.groups.max()) + 1
        if capacities is None:
            self.capacities = np.full(n_groups, self.m, dtype=np.int64)
        else:
            self.capacities = check_array(
                "capacities", owner, capacities, shape=(n_groups,), kind="int"
            )
            if self.capacities.min() < 0:
                raise param_error("capacities", owner, "non-negative capacities", "a negative one")

    def __call__(self, w: np.ndarray) -> np.ndarray:
        w = _weights(w, self.d, "MatroidGreedyOracle")
        mask = np.zeros(self.d, dtype=bool)
        used = np.zeros_like(self.capacities)
        size = 0
        for i in np.argsort(-w, kind="stable"):
            if w[i] <= 0 or size == self.m:
                break
            g = self.groups[i]
            if used[g] < self.capacities[g]:
                mask[i], used[g], size = True, used[g] + 1, size + 1
        return mask

    def feasible(self, mask: np.ndarray) -> bool:
        """Whether ``mask`` is independent (group capacities and size ``<= m``)."""
        used = np.bincount(self.groups[mask], minlength=len(self.capacities))
        return bool(np.count_nonzero(mask) <= self.m and (used <= self.capacities).all())

    def actions(self) -> np.ndarray:
        """Every non-empty independent set as a bool array (at most 5000)."""
        total = sum(math.comb(self.d, k) for k in range(1, self.m + 1))
        if total > MAX_ACTIONS:
            raise param_error("m", "MatroidGreedyOracle.actions", f"at most {MAX_ACTIONS}", total)
        subsets = [
            s
            for k in range(1, self.m + 1)
            for s in itertools.combinations(range(self.d), k)
            if self.feasible(_masks(self.d, [s])[0])
        ]
        return _masks(self.d, subsets)


def grid_dag(rows: int = 4, cols: int = 4) -> nx.DiGraph:
    """The ``rows x cols`` grid DAG with edges right and down (``2 rows cols - rows - cols``
    edges; 24 for 4 x 4), source ``(0, 0)``, target ``(rows - 1, cols - 1)``."""
    rows = check_int("rows", "grid_dag", rows, low=2, high=64)
    cols = check_int("cols", "grid_dag", cols, low=2, high=64)
    graph = nx.DiGraph()
    for r in range(rows):
        for c in range(cols):
            if c + 1 < cols:
                graph.add_edge((r, c), (r, c + 1))
            if r + 1 < rows:
                graph.add_edge((r, c), (r + 1, c))
    graph.graph["source"], graph.graph["target"] = (0, 0), (rows - 1, cols - 1)
    return graph


class ShortestPathOracle:
    """Online shortest path: base arms are the edges of a DAG (in ``list(graph.edges)`` order),
    actions are source-target paths, and the oracle is networkx's Dijkstra on the edge costs
    :math:`c_e = s - w_e` with :math:`s = \\max(1, \\max_e w_e)`: the costs :math:`1 - w_e` of
    the paper's delay model when :math:`w \\le 1`, shifted to stay non-negative for optimistic
    indices above 1. When every path has the same number of edges (grid DAGs) this is the exact
    :math:`\\arg\\max` of :math:`\\sum_{e \\in A} w_e`. ``source``/``target`` default to the
    graph's ``graph["source"]``/``graph["target"]``. NaN weights are refused."""

    def __init__(self, graph: nx.DiGraph, source: Any = None, target: Any = None) -> None:
        owner = "ShortestPathOracle"
        if not isinstance(graph, nx.DiGraph) or not nx.is_directed_acyclic_graph(graph):
            raise param_error("graph", owner, "a networkx DiGraph without cycles", type(graph))
        self.graph = graph
        self.source = graph.graph.get("source") if source is None else source
        self.target = graph.graph.get("target") if target is None else target
        for name, node in (("source", self.source), ("target", self.target)):
            if node not in graph:
                raise param_error(name, owner, "a node of the graph", repr(node))
        if self.target == self.source or not nx.has_path(graph, self.source, self.target):
            raise param_error("target", owner, "reachable from the source", repr(self.target))
        self.edges = list(graph.edges)
        self.d = len(self.edges)
        self._index = {edge: i for i, edge in enumerate(self.edges)}
        reach = nx.descendants(graph, self.source) | {self.source}
        self.m = len(nx.dag_longest_path(graph.subgraph(reach))) - 1
        nodes = {node: k for k, node in enumerate(graph.nodes)}
        self._incidence = np.zeros((len(nodes), self.d), dtype=np.int64)
        for i, (u, v) in enumerate(self.edges):
            self._incidence[nodes[u], i], self._incidence[nodes[v], i] = 1, -1
        self._flow = np.zeros(len(nodes), dtype=np.int64)
        self._flow[nodes[self.source]], self._flow[nodes[self.target]] = 1, -1

    def _path_mask(self, nodes: list[Any]) -> np.ndarray:
        mask = np.zeros(self.d, dtype=bool)
        mask[[self._index[e] for e in zip(nodes[:-1], nodes[1:], strict=True)]] = True
        return mask

    def __call__(self, w: np.ndarray) -> np.ndarray:
        w = _weights(w, self.d, "ShortestPathOracle")
        cost = max(1.0, float(w.max())) - w
        index = self._index
        nodes = nx.dijkstra_path(
            self.graph, self.source, self.target, weight=lambda u, v, _: cost[index[(u, v)]]
        )
        return self._path_mask(nodes)

    def feasible(self, mask: np.ndarray) -> bool:
        """Whether the edges of ``mask`` form one source-target path: in a DAG, an edge set is
        one such path exactly when its net out-flow is +1 at the source, -1 at the target and 0
        elsewhere (an acyclic edge set has no zero-flow component)."""
        return bool(np.array_equal(self._incidence @ np.asarray(mask, dtype=np.int64), self._flow))

    def actions(self) -> np.ndarray:
        """Every source-target path as a bool array (at most 5000)."""
        paths = []
        for nodes in nx.all_simple_paths(self.graph, self.source, self.target):
            paths.append(self._path_mask(nodes))
            if len(paths) > MAX_ACTIONS:
                raise param_error(
                    "graph", "ShortestPathOracle.actions", "at most 5000 paths", "more"
                )
        return np.array(paths)


class CountingOracle:
    """Wraps an oracle and counts its calls (``n_calls``); ``delay`` seconds of busy waiting per
    call emulate an expensive combinatorial solver (the regime the paper targets). ``feasible``,
    ``actions``, ``d`` and ``m`` are the wrapped oracle's."""

    def __init__(self, oracle: Any, delay: float = 0.0) -> None:
        owner = "CountingOracle"
        if not callable(oracle) or not hasattr(oracle, "d"):
            raise param_error(
                "oracle",
                owner,
                "an oracle (a callable with attribute d)",
                type(oracle),
                cls=TypeError,
            )
        self.oracle = oracle
        self.delay = check_real("delay", owner, delay, low=0, high=1)
        self.n_calls = 0

    @property
    def d(self) -> int:
        return self.oracle.d

    @property
    def m(self) -> int:
        return self.oracle.m

    def __call__(self, w: np.ndarray) -> np.ndarray:
        self.n_calls += 1
        if self.delay:
            end = time.perf_counter() + self.delay
            while time.perf_counter() < end:
                pass
        return self.oracle(w)

    def feasible(self, mask: np.ndarray) -> bool:
        """The wrapped oracle's feasibility test (True when it has none)."""
        test = getattr(self.oracle, "feasible", None)
        return True if test is None else bool(test(mask))

    def actions(self) -> np.ndarray:
        """The wrapped oracle's action set."""
        return self.oracle.actions()
