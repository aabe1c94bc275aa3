"""The ``cuda`` backend of the truss decomposition: ``truss.cu`` launched through CuPy (imported
when a kernel runs, never at import).

The graph is stored as a CSR of sorted neighbour lists with the edge id of each entry. Each
round, ``edge_support`` (one thread per edge) counts the live triangles of every live edge by a
merge intersection of the two sorted lists, and ``peel_edges`` deletes the frontier
{e live : sup(e) <= k - 2}, giving it tau = k. When the frontier is empty, k jumps to the
smallest live support + 2. Same result as the reference path: the k-truss is unique.
"""

from __future__ import annotations

import numpy as np

from paperkit import load_cuda_module, require_cupy

__all__ = ["THREADS", "csr_with_ids", "peel"]

#: Threads per block of both kernels (one thread per edge).
THREADS = 256


def csr_with_ids(edges: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The layout the kernels intersect: ``indptr`` (n + 1,) int64, the sorted neighbour lists
    ``indices`` (2E,) int32 and the edge id of each entry ``eid`` (2E,) int32."""
    ids = np.arange(len(edges), dtype=np.int32)
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    eid = np.concatenate([ids, ids])
    order = np.lexsort((dst, src))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=indptr[1:])
    return indptr, dst[order].astype(np.int32), eid[order]


def peel(edges: np.ndarray, n: int) -> np.ndarray:
    """Truss numbers (E,) int64 of ``edges`` (E, 2), u < v, computed on the GPU."""
    cp = require_cupy("trussreg")
    module = load_cuda_module("trussreg", "kernels/truss.cu")
    support_kernel = module.get_function("edge_support")
    peel_kernel = module.get_function("peel_edges")
    indptr, indices, eid = csr_with_ids(edges, n)
    n_edges = len(edges)
    d_indptr = cp.asarray(indptr)
    d_indices = cp.asarray(indices)
    d_eid = cp.asarray(eid)
    d_u = cp.asarray(edges[:, 0].astype(np.int32))
    d_v = cp.asarray(edges[:, 1].astype(np.int32))
    alive = cp.ones(n_edges, dtype=cp.int32)
    support = cp.zeros(n_edges, dtype=cp.int32)
    tau = cp.zeros(n_edges, dtype=cp.int32)
    peeled = cp.zeros(1, dtype=cp.int32)
    grid = ((n_edges + THREADS - 1) // THREADS,)
    args_support = (d_indptr, d_indices, d_eid, d_u, d_v, alive, support, np.int32(n_edges))
    support_kernel(grid, (THREADS,), args_support)
    k, remaining = 2, n_edges
    while remaining > 0:
        peeled.fill(0)
        peel_kernel(grid, (THREADS,), (support, alive, tau, np.int32(k), np.int32(n_edges), peeled))
        count = int(peeled.get()[0])
        if count == 0:
            live = support[alive.astype(cp.bool_)]
            k = int(live.min()) + 2
            continue
        remaining -= count
        support_kernel(grid, (THREADS,), args_support)
    return cp.asnumpy(tau).astype(np.int64)
