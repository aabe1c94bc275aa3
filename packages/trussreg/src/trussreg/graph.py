"""The compatibility graph of putative correspondences, triangle support and consensus sampling.

Two correspondences c_i = (p_i, q_i) and c_j are compatible when a rigid motion can map both:
it preserves lengths, so d_ij = | ||p_i - p_j|| - ||q_i - q_j|| | must be small.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from paperkit import Described, check_bool, check_int, check_real, describe, param_error
from trussreg.geometry import point_pair

__all__ = [
    "adjacency",
    "compatibility_graph",
    "consensus_sample",
    "edge_list",
    "edge_support",
    "pair_counts",
    "sparse_graph",
    "vote_counts",
]

#: Above this many nodes, products use sparse right-hand sides instead of dense ones.
DENSE_MAX = 4096
#: Entries of one row block of a product (bounds the memory of :func:`pair_counts`).
BLOCK_ENTRIES = 1 << 23


def compatibility_graph(P: Any, Q: Any, tau: float, soft: bool = False) -> sparse.csr_matrix:
    r"""The compatibility graph of N correspondences, an (N, N) symmetric CSR matrix.

    .. math:: d_{ij} = \bigl|\,\|p_i - p_j\| - \|q_i - q_j\|\,\bigr|, \qquad
              A_{ij} = \mathbb 1[d_{ij} < \tau]\ (i \ne j)

    With ``soft=True`` the stored values are :math:`s_{ij} = \max(0, 1 - d_{ij}^2/\tau^2)` on the
    same edges, otherwise 1. Computed in row blocks, O(N^2) time, O(N + E) memory.

    Shapes:
        P, Q: (N, 3) source and target points of N >= 3 correspondences (NaN and inf refused).
        returns: (N, N) CSR matrix.

    >>> P = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0]])
    >>> compatibility_graph(P, P + 5, tau=0.1).toarray().tolist()
    [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
    """
    P, Q = point_pair("compatibility_graph", P, Q)
    tau = check_real("tau", "compatibility_graph", tau, low=0, low_open=True)
    soft = check_bool("soft", "compatibility_graph", soft)
    n = len(P)
    P, Q = P - P.mean(axis=0), Q - Q.mean(axis=0)  # centred: smaller round-off in the Gram form
    p2, q2 = (P**2).sum(axis=1), (Q**2).sum(axis=1)
    block = max(1, BLOCK_ENTRIES // (2 * n))
    rows, cols, vals = [], [], []
    for start in range(0, n, block):
        stop = min(n, start + block)
        dp = np.sqrt(np.maximum(p2[start:stop, None] + p2[None, :] - 2 * P[start:stop] @ P.T, 0))
        dq = np.sqrt(np.maximum(q2[start:stop, None] + q2[None, :] - 2 * Q[start:stop] @ Q.T, 0))
        d = np.abs(dp - dq)
        ok = d < tau
        ok[np.arange(stop - start), np.arange(start, stop)] = False
        r, c = np.nonzero(ok)
        rows.append(r + start)
        cols.append(c)
        vals.append(np.maximum(0.0, 1.0 - (d[r, c] / tau) ** 2) if soft else np.ones(len(r)))
    A = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(n, n)
    )
    A.sort_indices()
    return A


def sparse_graph(owner: str, A: Any) -> sparse.csr_matrix:
    """``A`` as CSR: a square scipy sparse matrix with finite entries (paperkit's checks cover
    dense arrays only)."""
    if not sparse.issparse(A):
        raise param_error("A", owner, "a scipy sparse matrix", describe(A), cls=TypeError)
    if A.ndim != 2 or A.shape[0] != A.shape[1]:
        raise param_error("A", owner, "a square matrix", Described(f"shape {A.shape}"))
    A = sparse.csr_matrix(A)
    if A.data.dtype.kind not in "biuf" or not np.isfinite(A.data).all():
        raise param_error("A", owner, "finite real entries", Described(f"dtype {A.dtype}"))
    return A


def edge_list(A: Any) -> np.ndarray:
    """The undirected edges of a graph, (E, 2) int64 with u < v, sorted by (u, v).

    An edge is present when A_uv or A_vu is non-zero; the diagonal is ignored.
    """
    A = sparse_graph("edge_list", A)
    coo = sparse.triu(A + A.T, k=1).tocoo()
    keep = coo.data != 0
    edges = np.stack([coo.row[keep], coo.col[keep]], axis=1).astype(np.int64)
    return edges[np.lexsort((edges[:, 1], edges[:, 0]))] if len(edges) else edges.reshape(0, 2)


def adjacency(edges: np.ndarray, n: int) -> sparse.csr_matrix:
    """The symmetric 0/1 adjacency (float32 CSR) of ``edges`` (E, 2) on n nodes."""
    u, v = edges[:, 0], edges[:, 1]
    data = np.ones(2 * len(edges), dtype=np.float32)
    return sparse.csr_matrix((data, (np.concatenate([u, v]), np.concatenate([v, u]))), (n, n))


def pair_counts(X: sparse.csr_matrix, Y: Any, rows: np.ndarray, cols: np.ndarray) -> np.ndarray:
    """Entries (XY)[rows[i], cols[i]] of a product, computed in row blocks of X.

    X is sparse; Y is a dense array or a sparse matrix. Only the blocks of X holding a requested
    row are multiplied, so memory stays at one (block, n) slab. For 0/1 adjacency matrices the
    entries count common neighbours, exactly (integers below 2^24 in float32).
    """
    out = np.zeros(len(rows))
    if len(rows) == 0:
        return out
    n = X.shape[0]
    block = max(1, BLOCK_ENTRIES // max(n, 1))
    order = np.argsort(rows, kind="stable")
    starts = np.searchsorted(rows[order], np.arange(0, n + block, block))
    for b, start in enumerate(range(0, n, block)):
        lo, hi = starts[b], starts[b + 1]
        if lo == hi:
            continue
        sel = order[lo:hi]
        slab = X[start : start + block] @ Y
        r, c = rows[sel] - start, cols[sel]
        out[sel] = np.asarray(slab[r, c]).ravel()
    return out


def edge_support(A: Any) -> tuple[np.ndarray, np.ndarray]:
    r"""Edges (u < v) and their triangle support.

    .. math:: \mathrm{sup}(u, v) = |N(u) \cap N(v)| = (A^2)_{uv}

    the number of triangles that contain the edge, from a blocked sparse-times-dense product
    (sparse-times-sparse above :data:`DENSE_MAX` nodes): O(E * n) time at most.

    Shapes:
        A: (n, n) scipy sparse adjacency (an edge where A_uv or A_vu is non-zero; finite).
        returns: edges (E, 2) int64 and supports (E,) int64.
    """
    A = sparse_graph("edge_support", A)
    edges = edge_list(A)
    n = A.shape[0]
    B = adjacency(edges, n)
    Y = B.toarray() if n <= DENSE_MAX else B
    support = pair_counts(B, Y, edges[:, 0], edges[:, 1]).astype(np.int64)
    return edges, support


def consensus_sample(A: Any, m: int) -> np.ndarray:
    r"""The "skeleton": the top-m correspondences by second-order consensus votes.

    .. math:: v_i = \tfrac12 \sum_j A_{ij} (A^2)_{ij}

    the number of compatibility triangles through node i (SC²-PCR's second-order consensus). Ties
    are broken by first-order degree, then by index. Returns min(m, N) distinct indices, sorted by
    votes in non-increasing order.

    Shapes:
        A: (N, N) scipy sparse compatibility graph (finite entries).
        returns: (min(m, N),) int64 indices.
    """
    A = sparse_graph("consensus_sample", A)
    m = check_int("m", "consensus_sample", m, low=3)
    votes, degree = _votes_and_degree(A)
    n = A.shape[0]
    order = np.lexsort((np.arange(n), -degree, -votes))
    return order[: min(m, n)]


def vote_counts(A: Any) -> np.ndarray:
    """Consensus votes v_i (compatibility triangles through each node).

    Shapes:
        A: (N, N) scipy sparse compatibility graph (finite entries).
        returns: (N,) float.
    """
    return _votes_and_degree(sparse_graph("vote_counts", A))[0]


def _votes_and_degree(A: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
    n = A.shape[0]
    edges, support = edge_support(A)
    votes = (np.bincount(edges[:, 0], support, n) + np.bincount(edges[:, 1], support, n)) / 2
    return votes, np.bincount(edges.ravel(), minlength=n)
