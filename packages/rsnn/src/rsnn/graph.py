"""Input checks and CSR adjacency for undirected graphs given as PyG ``edge_index``.

An undirected graph G = (V, E) is stored the PyG way: ``edge_index`` of shape (2, 2|E|) holds both
directions u→v and v→u of every edge. The samplers read it as compressed sparse rows (CSR):
``indptr`` (|V|+1,) and ``indices`` (2|E|,) with the neighbours of v in
``indices[indptr[v]:indptr[v+1]]``, built by :mod:`scipy.sparse`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from paperkit import Described, param_error

__all__ = ["CSRGraph", "check_edge_index", "check_positive", "to_csr"]


def check_positive(value: int, param: str, owner: str) -> int:
    """Return ``value`` when it is an integer >= 1, else raise the worded ``ValueError``."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise param_error(param, owner, "an integer", value, cls=TypeError)
    if value < 1:
        raise param_error(param, owner, "at least 1", value)
    return int(value)


def check_edge_index(edge_index: torch.Tensor, num_nodes: int, owner: str) -> np.ndarray:
    """Validate an undirected ``edge_index`` and return it as an int64 numpy array (2, 2|E|).

    Raises ``TypeError`` for a non-integer tensor, ``ValueError`` for a wrong shape, ids outside
    [0, num_nodes), self-loops, or a graph that is not symmetric (an edge u→v without v→u).
    """
    if isinstance(num_nodes, bool) or not isinstance(num_nodes, (int, np.integer)):
        raise param_error("num_nodes", owner, "an integer", num_nodes, cls=TypeError)
    if num_nodes < 1:
        raise param_error(
            "num_nodes", owner, "at least 1 (an empty graph has nothing to search)", num_nodes
        )
    if not isinstance(edge_index, torch.Tensor):
        raise param_error(
            "edge_index",
            owner,
            "a torch.Tensor",
            Described(type(edge_index).__name__),
            cls=TypeError,
        )
    if edge_index.is_floating_point() or edge_index.is_complex() or edge_index.dtype == torch.bool:
        raise param_error(
            "edge_index",
            owner,
            "an integer tensor",
            Described(f"dtype {edge_index.dtype}"),
            cls=TypeError,
        )
    if edge_index.dim() != 2 or edge_index.size(0) != 2:
        raise param_error(
            "edge_index",
            owner,
            "of shape (2, num_edges)",
            Described(f"shape {tuple(edge_index.shape)}"),
        )
    ei = edge_index.detach().cpu().numpy().astype(np.int64, copy=False)
    if ei.size and (ei.min() < 0 or ei.max() >= num_nodes):
        raise param_error(
            "edge_index",
            owner,
            f"node ids in [0, {num_nodes})",
            Described(f"ids from {int(ei.min())} to {int(ei.max())}"),
        )
    loops = ei[0] == ei[1]
    if loops.any():
        raise param_error(
            "edge_index",
            owner,
            "free of self-loops (remove them with remove_self_loops)",
            Described(f"{int(loops.sum())} self-loop(s), first at node {int(ei[0][loops][0])}"),
        )
    forward = np.sort(ei[0] * num_nodes + ei[1])
    backward = np.sort(ei[1] * num_nodes + ei[0])
    if not np.array_equal(forward, backward):
        raise param_error(
            "edge_index",
            owner,
            "symmetric: pass an undirected graph; use to_undirected",
            Described("a directed edge list"),
        )
    return ei


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
