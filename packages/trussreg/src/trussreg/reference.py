"""The reference backend of the truss decomposition: batched peeling with numpy and scipy.

For k = 2, 3, ... every live edge with support <= k - 2 is deleted at once and gets truss number
k; then the supports of the edges next to a deleted one are updated with sparse products,

    A_old² - A_new² = R A_old + A_new R,

R the adjacency of the deleted edges (only edges with an endpoint on a deleted edge can lose
triangles). When nothing is left to delete, k jumps to the smallest live support + 2. Deleting the
whole frontier at once gives the numbers of one-edge-at-a-time peeling (Wang & Cheng, VLDB 2012),
because the k-truss is unique. Products use a dense right-hand side up to
:data:`trussreg.graph.DENSE_MAX` nodes, a sparse one above.
"""

from __future__ import annotations

import numpy as np

from trussreg import graph

__all__ = ["peel"]


def peel(edges: np.ndarray, n: int) -> np.ndarray:
    """Truss numbers (E,) int64 of ``edges`` (E, 2), u < v, on n nodes."""
    u, v = edges[:, 0], edges[:, 1]
    tau = np.zeros(len(edges), dtype=np.int64)
    alive = np.ones(len(edges), dtype=bool)
    A = graph.adjacency(edges, n)
    dense = n <= graph.DENSE_MAX
    Y = A.toarray() if dense else A
    support = graph.pair_counts(A, Y, u, v)
    k = 2
    while alive.any():
        frontier = alive & (support <= k - 2)
        if not frontier.any():
            k = int(support[alive].min()) + 2
            continue
        tau[frontier] = k
        alive &= ~frontier
        R = graph.adjacency(edges[frontier], n)
        touched = np.zeros(n, dtype=bool)
        touched[edges[frontier].ravel()] = True
        hit = np.flatnonzero(alive & (touched[u] | touched[v]))
        uh, vh = u[hit], v[hit]
        # (R A_old)_uv, then (A_new R)_uv = (R A_new)_vu by symmetry
        lost = graph.pair_counts(R, Y, uh, vh)
        if dense:
            Y[u[frontier], v[frontier]] = 0
            Y[v[frontier], u[frontier]] = 0
        else:
            Y = graph.adjacency(edges[alive], n)
        support[hit] -= lost + graph.pair_counts(R, Y, vh, uh)
    return tau
