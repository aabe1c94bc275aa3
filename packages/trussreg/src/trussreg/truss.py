"""k-truss decomposition by batched peeling (Wang & Cheng, VLDB 2012), numpy/scipy and CUDA.

The k-truss of a graph is its largest subgraph in which every edge lies in at least k - 2
triangles of the subgraph; the truss number tau(e) is the largest k whose k-truss holds e.
Peeling: for k = 2, 3, ... delete the edges with support <= k - 2 (they get tau = k) and update
the support of the others, until no such edge is left; then k <- k + 1. Removing every such edge
at once and recomputing supports gives the same numbers as removing them one by one, because the
k-truss is unique (the union of two subgraphs with the property has it too).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_choice, cupy_available
from trussreg.graph import DENSE_MAX, _check_graph, adjacency, edge_list, pair_counts

__all__ = ["BACKENDS", "node_truss", "truss_decomposition"]

BACKENDS = ("auto", "numpy", "cupy")


def _peel_numpy(edges: np.ndarray, n: int) -> np.ndarray:
    u, v = edges[:, 0], edges[:, 1]
    tau = np.zeros(len(edges), dtype=np.int64)
    alive = np.ones(len(edges), dtype=bool)
    A = adjacency(edges, n)
    dense = n <= DENSE_MAX
    Y = A.toarray() if dense else A
    support = pair_counts(A, Y, u, v)
    k = 2
    while alive.any():
        peel = alive & (support <= k - 2)
        if not peel.any():
            k = int(support[alive].min()) + 2
            continue
        tau[peel] = k
        alive &= ~peel
        R = adjacency(edges[peel], n)
        # Only edges with an endpoint on a peeled edge can lose triangles.
        touched = np.zeros(n, dtype=bool)
        touched[edges[peel].ravel()] = True
        hit = np.flatnonzero(alive & (touched[u] | touched[v]))
        uh, vh = u[hit], v[hit]
        # A_old^2 - A_new^2 = R A_old + A_new R, and (A_new R)_uv = (R A_new)_vu (symmetry)
        lost = pair_counts(R, Y, uh, vh)
        if dense:
            Y[u[peel], v[peel]] = 0
            Y[v[peel], u[peel]] = 0
        else:
            Y = adjacency(edges[alive], n)
        support[hit] -= lost + pair_counts(R, Y, vh, uh)
    return tau


def truss_decomposition(A: Any, backend: str = "numpy") -> tuple[np.ndarray, np.ndarray]:
    r"""Truss numbers of every edge of an undirected graph.

    .. math:: \tau(e) = \max\{k : e \in T_k\},\quad
              T_k = \text{largest subgraph with } \mathrm{sup}_{T_k}(e) \ge k-2\ \forall e \in T_k

    Args:
        A: (n, n) scipy sparse adjacency; symmetrised, diagonal ignored.
        backend: ``"numpy"`` (blocked sparse products, the reference), ``"cupy"`` (the CUDA
            kernel of ``kernels/truss.cu``: one thread per edge intersects sorted neighbour
            lists), or ``"auto"`` (CuPy when a GPU is visible). All give identical numbers.

    Returns:
        ``(edges, tau)``: (E, 2) int64 edges with u < v sorted by (u, v), and (E,) int64 truss
        numbers (2 for an edge in no triangle, n for every edge of the complete graph K_n).
    """
    A = _check_graph(A, "truss_decomposition")
    backend = check_choice("backend", "truss_decomposition", backend, BACKENDS)
    edges = edge_list(A)
    if backend == "auto":
        backend = "cupy" if cupy_available() else "numpy"
    if len(edges) == 0:
        return edges, np.zeros(0, dtype=np.int64)
    if backend == "cupy":
        from trussreg.truss_cuda import peel_cupy

        return edges, peel_cupy(edges, A.shape[0])
    return edges, _peel_numpy(edges, A.shape[0])


def node_truss(edges: np.ndarray, levels: np.ndarray, n: int) -> np.ndarray:
    """Per-node truss number: the largest truss number of an incident edge (0 when isolated)."""
    out = np.zeros(n, dtype=np.int64)
    np.maximum.at(out, edges[:, 0], levels)
    np.maximum.at(out, edges[:, 1], levels)
    return out
