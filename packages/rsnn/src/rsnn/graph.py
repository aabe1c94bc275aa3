"""Input checks and CSR adjacency for undirected graphs given as PyG ``edge_index``.

An undirected graph G = (V, E) is stored the PyG way: ``edge_index`` of shape (2, 2|E|) holds both
directions u→v and v→u of every edge. The samplers read it as compressed sparse rows (CSR):
``indptr`` (|V|+1,) and ``indices`` (2|E|,) with the neighbours of v in
``indices[indptr[v]:indptr[v+1]]``, built by :mod:`scipy.sparse`.

The memory estimates below (bytes per node, per search, per walk step) size the work before it
starts, so that :func:`paperkit.check_memory` can refuse a call that would not fit.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from scipy import sparse
from scipy.sparse.csgraph import connected_components
from torch_geometric.data import Data

from paperkit import (
    PARAM_ERROR_PATTERN,
    Described,
    check_int,
    check_memory,
    check_tensor,
    param_error,
)

__all__ = [
    "CSRGraph",
    "check_edge_index",
    "check_generator",
    "check_graph_data",
    "check_node_ids",
    "graph_bytes",
    "search_bytes",
    "to_csr",
    "walk_bytes",
]


def graph_bytes(num_nodes: int) -> int:
    """Bytes the CSR form and the per-node work arrays of a graph need: about 64 per node."""
    return 64 * int(num_nodes)


def search_bytes(num_nodes: int, num_slots: int) -> int:
    """Bytes one random search needs: its key per adjacency slot (8 per slot) and its preorder,
    parent, Euler walk, flags and root order (about 100 per node)."""
    return 8 * int(num_slots) + 100 * int(num_nodes)


def walk_bytes(length: int) -> int:
    """Bytes one walk of ``length`` steps needs: a uniform draw and a node id per step."""
    return 16 * (int(length) + 1)


def check_generator(owner: str, generator: Any) -> torch.Generator | None:
    """``None`` (torch's global generator) or a CPU ``torch.Generator``."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator",
            owner,
            "a torch.Generator or None",
            Described(f"a {type(generator).__name__}"),
            cls=TypeError,
        )
    if generator is not None and generator.device.type != "cpu":
        raise param_error(
            "generator",
            owner,
            "a CPU generator (sampling runs on the CPU)",
            Described(f"a generator on {generator.device}"),
        )
    return generator


def check_node_ids(
    name: str, owner: str, ids: torch.Tensor, num_nodes: int, *, padding: bool = False
) -> None:
    """Node ids in ``[0, num_nodes)`` (``[-1, num_nodes)`` when -1 marks padding)."""
    if ids.numel() == 0:
        return
    low, high = int(ids.min()), int(ids.max())
    floor = -1 if padding else 0
    if low < floor or high >= num_nodes:
        what = f"node ids in [{floor}, {num_nodes})" + (" (-1 marks padding)" if padding else "")
        raise param_error(name, owner, what, Described(f"ids from {low} to {high}"))


def check_edge_index(
    edge_index: Any, num_nodes: Any, owner: str, *, name: str = "edge_index"
) -> np.ndarray:
    """Validate an undirected ``edge_index`` and return it as an int64 numpy array (2, 2|E|).

    ``num_nodes`` must be an integer >= 1 whose graph fits in memory; ``edge_index`` an integer
    tensor of shape (2, E) (E = 0 allowed: a graph without edges) with ids in [0, num_nodes), no
    self-loops, and symmetric (u→v with v→u). ``name`` is the argument as the caller's user
    passed it.
    """
    num_nodes = check_int("num_nodes", owner, num_nodes, low=1)
    check_memory("num_nodes", owner, num_nodes, graph_bytes(num_nodes))
    check_tensor(name, owner, edge_index, shape=(2, None), dtype="int", nonempty=False)
    check_node_ids(name, owner, edge_index, num_nodes)
    ei = edge_index.detach().cpu().numpy().astype(np.int64, copy=False)
    loops = ei[0] == ei[1]
    if loops.any():
        raise param_error(
            name,
            owner,
            "free of self-loops (remove them with remove_self_loops)",
            Described(f"{int(loops.sum())} self-loop(s), first at node {int(ei[0][loops][0])}"),
        )
    forward = np.sort(ei[0] * num_nodes + ei[1])
    backward = np.sort(ei[1] * num_nodes + ei[0])
    if not np.array_equal(forward, backward):
        raise param_error(
            name,
            owner,
            "symmetric: pass an undirected graph; use to_undirected",
            Described("a directed edge list"),
        )
    return ei


def check_graph_data(
    name: str,
    owner: str,
    data: Any,
    *,
    in_dim: int | None = None,
    edge_dim: int | None = None,
) -> np.ndarray:
    """A PyG ``Data`` (or ``Batch``) of an undirected graph; returns its checked edge_index.

    ``edge_index`` is checked as by :func:`check_edge_index` against ``num_nodes``; ``x`` (N, F)
    and ``edge_attr`` (2|E|, F_e) must be finite floating tensors when present, of widths
    ``in_dim`` / ``edge_dim`` when those are given (0: the field is not used, not checked).
    Errors name ``name``, the argument as the user passed it, and the field at fault.
    """
    if not isinstance(data, Data):
        raise param_error(
            name,
            owner,
            "a torch_geometric Data or Batch",
            Described(f"a {type(data).__name__}"),
            cls=TypeError,
        )
    n = data.num_nodes
    ei = _field(name, owner, lambda: check_edge_index(data.edge_index, n, owner))
    x = data.x
    if in_dim is None or in_dim > 0:
        if x is None and in_dim:
            raise param_error(
                name, owner, f"a graph with x of shape (N, {in_dim})", Described("no x")
            )
        if x is not None:
            _field(name, owner, lambda: check_tensor("x", owner, x, shape=(int(n), in_dim)))
    ea = getattr(data, "edge_attr", None)
    if edge_dim is None or edge_dim > 0:
        if ea is None and edge_dim:
            raise param_error(
                name,
                owner,
                f"a graph with edge_attr of width {edge_dim}",
                Described("no edge_attr"),
            )
        if ea is not None:
            _field(name, owner, lambda: _check_edge_attr(owner, ea, ei.shape[1], edge_dim))
    return ei


def _check_edge_attr(owner: str, ea: Any, rows: int, width: int | None) -> None:
    """``edge_attr`` (rows,) or (rows, F_e), finite floating; F_e = ``width`` when given."""
    check_tensor("edge_attr", owner, ea, ndim=(1, 2))
    shape = (rows,) if ea.ndim == 1 else (rows, None)
    check_tensor("edge_attr", owner, ea, shape=shape, finite=False)
    got = 1 if ea.ndim == 1 else int(ea.size(1))
    if width is not None and got != width:
        raise param_error(
            "edge_attr", owner, f"of width {width}", Described(f"edge_attr of width {got}")
        )


def _field(name: str, owner: str, check: Any) -> Any:
    """Run the check of one field of the user's ``name`` argument; word its error for ``name``."""
    try:
        return check()
    except (TypeError, ValueError) as exc:
        match = PARAM_ERROR_PATTERN.match(str(exc))
        if match is None:  # pragma: no cover - every check here raises the shared wording
            raise
        raise param_error(
            name,
            owner,
            f"a graph whose {match['param']} is {match['expected']}",
            Described(match["got"]),
            cls=type(exc),
        ) from exc


@dataclass(frozen=True)
class CSRGraph:
    """Undirected graph in CSR form, possibly a batch of disjoint graphs.

    Attributes:
        indptr, indices: the CSR rows (int64); ``indices[indptr[v]:indptr[v+1]]`` are v's
            neighbours, sorted by id.
        node_ptr: (G+1,) node ranges of the G graphs (one graph: ``[0, N]``).
        num_components: (G,) number of connected components of each graph.
    """

    indptr: np.ndarray
    indices: np.ndarray
    node_ptr: np.ndarray
    num_components: np.ndarray

    @property
    def num_nodes(self) -> int:
        return int(self.node_ptr[-1])

    @property
    def degree(self) -> np.ndarray:
        return np.diff(self.indptr)


def to_csr(ei: np.ndarray, num_nodes: int, node_ptr: np.ndarray | None = None) -> CSRGraph:
    """CSR arrays of a checked ``edge_index`` (see :func:`check_edge_index`).

    ``node_ptr`` splits the nodes into graphs (a PyG ``Batch.ptr``); edges must not cross graphs.
    """
    node_ptr = np.array([0, num_nodes]) if node_ptr is None else np.asarray(node_ptr, np.int64)
    adj = sparse.csr_matrix(
        (np.ones(ei.shape[1], dtype=np.int8), (ei[0], ei[1])), shape=(num_nodes, num_nodes)
    )
    adj.sum_duplicates()
    adj.sort_indices()
    _, labels = connected_components(adj, directed=False)
    graph_of_node = np.repeat(np.arange(len(node_ptr) - 1), np.diff(node_ptr))
    comps = np.zeros(len(node_ptr) - 1, dtype=np.int64)
    uniq = np.unique(np.stack([graph_of_node, labels]), axis=1)
    np.add.at(comps, uniq[0], 1)
    return CSRGraph(
        indptr=adj.indptr.astype(np.int64),
        indices=adj.indices.astype(np.int64),
        node_ptr=node_ptr,
        num_components=comps,
    )
