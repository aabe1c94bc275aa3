"""k-truss decomposition (Wang & Cheng, VLDB 2012): the backend dispatch, and node truss numbers.

The k-truss of a graph is its largest subgraph in which every edge lies in at least k - 2
triangles of the subgraph; the truss number tau(e) is the largest k whose k-truss holds e.
Backends (``backend=``):

- ``"reference"``: batched peeling with numpy and scipy (:mod:`trussreg.reference`);
- ``"cuda"``: the kernels of ``kernels/truss.cu`` through CuPy, one thread per edge
  (:mod:`trussreg.kernels.truss`);
- ``"auto"``: ``"cuda"`` when CuPy sees a GPU, else ``"reference"``.

Both give identical numbers: the k-truss is unique.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import (
    Described,
    check_array,
    check_int,
    check_memory,
    cupy_available,
    param_error,
    resolve_backend,
)
from trussreg import reference
from trussreg.graph import edge_list, sparse_graph

__all__ = ["BACKENDS", "check_levels", "node_truss", "resolve", "truss_decomposition"]

#: The named backends; ``"auto"`` picks one of them.
BACKENDS = ("reference", "cuda")


def resolve(owner: str, backend: Any) -> str:
    """The backend that runs: ``backend`` itself, or for ``"auto"`` ``"cuda"`` when CuPy sees a
    GPU, else ``"reference"``. ``"cuda"`` without CuPy and a GPU is a ``ValueError``."""
    available = {"reference": True, "cuda": cupy_available()}
    return resolve_backend(owner, backend, available, auto=("cuda",))


def truss_decomposition(A: Any, backend: str = "reference") -> tuple[np.ndarray, np.ndarray]:
    r"""Truss numbers of every edge of an undirected graph.

    .. math:: \tau(e) = \max\{k : e \in T_k\},\quad
              T_k = \text{largest subgraph with } \mathrm{sup}_{T_k}(e) \ge k-2\ \forall e \in T_k

    Args:
        A: adjacency; symmetrised (an edge where A_uv or A_vu is non-zero), diagonal ignored.
        backend: ``"reference"`` (numpy peeling), ``"cuda"`` (the CUDA kernel of
            ``kernels/truss.cu``: one thread per edge intersects sorted neighbour lists), or
            ``"auto"``. All give identical numbers.

    Shapes:
        A: (n, n) scipy sparse matrix with finite entries.
        returns: ``(edges, tau)``: (E, 2) int64 edges with u < v sorted by (u, v), and (E,) int64
        truss numbers (2 for an edge in no triangle, n for every edge of the complete graph K_n).

    >>> from scipy import sparse
    >>> triangle_and_tail = sparse.csr_matrix(([1.0] * 4, ([0, 0, 1, 2], [1, 2, 2, 3])), (4, 4))
    >>> truss_decomposition(triangle_and_tail)[1].tolist()
    [3, 3, 3, 2]
    """
    owner = "truss_decomposition"
    A = sparse_graph(owner, A)
    name = resolve(owner, backend)
    edges = edge_list(A)
    if len(edges) == 0:
        return edges, np.zeros(0, dtype=np.int64)
    if name == "cuda":
        from trussreg.kernels import truss

        return edges, truss.peel(edges, A.shape[0])
    return edges, reference.peel(edges, A.shape[0])


def check_levels(owner: str, edges: Any, levels: Any, n: Any) -> tuple[np.ndarray, np.ndarray, int]:
    """Edges (E, 2) of nodes in [0, n), one non-negative integer level per edge, and n >= 1 whose
    (n,) int64 output fits in memory; an empty edge list is a graph without edges."""
    n = check_int("n", owner, n, low=1)
    check_memory("n", owner, n, 8 * n)
    edges = check_array("edges", owner, edges, shape=(None, 2), kind="int", nonempty=False)
    levels = check_array("levels", owner, levels, ndim=1, kind="int", nonempty=False)
    if len(levels) != len(edges):
        expected = f"one level per row of 'edges' ({len(edges)} rows)"
        raise param_error("levels", owner, expected, Described(f"{len(levels)} levels"))
    if len(edges) and (edges.min() < 0 or edges.max() >= n):
        expected = f"node indices from 0 to below 'n' ({n})"
        raise param_error(
            "edges", owner, expected, Described(f"indices in [{edges.min()}, {edges.max()}]")
        )
    if len(levels) and levels.min() < 0:
        raise param_error("levels", owner, "non-negative", Described(f"a level {levels.min()}"))
    return edges.astype(np.int64), levels.astype(np.int64), n


def node_truss(edges: Any, levels: Any, n: int) -> np.ndarray:
    """Per-node truss number: the largest truss number of an incident edge (0 when isolated).

    Shapes:
        edges: (E, 2) integer node indices in [0, n) (E = 0: every node gets 0).
        levels: (E,) non-negative integer truss numbers, one per edge.
        returns: (n,) int64.

    Floating arrays (and with them NaN and inf) are refused.

    >>> node_truss([[0, 1], [1, 2], [2, 3]], [3, 5, 2], 5).tolist()
    [3, 5, 5, 2, 0]
    """
    edges, levels, n = check_levels("node_truss", edges, levels, n)
    out = np.zeros(n, dtype=np.int64)
    np.maximum.at(out, edges[:, 0], levels)
    np.maximum.at(out, edges[:, 1], levels)
    return out
