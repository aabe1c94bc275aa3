"""Node and edge coverage of sampled searches and walks, and the samples needed to cover a graph.

A search covers its tree edges (parent, child); a walk covers its consecutive pairs (w_t, w_{t+1}).
Edges are counted undirected: {u, v} is covered when u→v or v→u is. One search covers every node
and N − c edges; on a tree that is every edge. On K_n a DFS is a uniformly random Hamiltonian
path, so a given edge is covered with probability 2/n per search. For sparse graphs with bounded
degree, O(log|V|) searches cover every edge with high probability (the paper's Theorem), against
O(|V|) walks of length ~|V| for random walks.
"""

from __future__ import annotations

import numpy as np
import torch

from paperkit import (
    Described,
    check_choice,
    check_int,
    check_memory,
    check_tensor,
    param_error,
)
from rsnn.graph import (
    check_edge_index,
    check_generator,
    check_node_ids,
    search_bytes,
    to_csr,
    walk_bytes,
)
from rsnn.sampling import SearchBatch, check_search_batch, sample_searches, walk_kernel

__all__ = ["coverage", "samples_to_cover"]

#: Bytes one chunk of samples may use in :func:`samples_to_cover` (the chunk size is capped so).
CHUNK_BYTES = 2**26


def _undirected_codes(u: np.ndarray, v: np.ndarray, n: int) -> np.ndarray:
    return np.minimum(u, v) * n + np.maximum(u, v)


def coverage(
    edge_index: torch.Tensor, num_nodes: int, seqs: SearchBatch | torch.Tensor
) -> dict[str, float | torch.Tensor]:
    """Fraction of nodes and of undirected edges covered by a set of searches or walks.

    Args:
        edge_index: the graph, (2, 2|E|) undirected.
        num_nodes: N.
        seqs: a :class:`SearchBatch` (its tree edges count) or an (m, L) integer tensor of walks
            (their consecutive pairs count; -1 marks padding).

    Returns:
        ``node_frac`` = |visited nodes| / N, ``edge_frac`` = |covered edges| / |E| (1.0 for a graph
        without edges) and ``uncovered_edges`` (2, U) int64, rows u < v, sorted.

    All inputs are integer, so no NaN can arise; ids out of range are refused.
    """
    owner = "coverage"
    ei = check_edge_index(edge_index, num_nodes, owner)
    n = num_nodes
    all_codes = np.unique(_undirected_codes(ei[0], ei[1], n))
    if isinstance(seqs, SearchBatch):
        check_search_batch("seqs", owner, seqs, n)
        pairs = torch.cat(seqs.tree_edges, dim=1).numpy()
        visited = np.unique(seqs.order.numpy())
    elif isinstance(seqs, torch.Tensor):
        check_tensor("seqs", owner, seqs, shape=(None, None), dtype="int")
        check_node_ids("seqs", owner, seqs, n, padding=True)
        w = seqs.long().numpy()
        a, b = w[:, :-1].reshape(-1), w[:, 1:].reshape(-1)
        keep = (a >= 0) & (b >= 0) & (a != b)
        pairs = np.stack([a[keep], b[keep]])
        visited = np.unique(w[w >= 0])
    else:
        raise param_error(
            "seqs",
            owner,
            "a SearchBatch or an (m, L) tensor of walks",
            Described(f"a {type(seqs).__name__}"),
            cls=TypeError,
        )
    covered = np.isin(all_codes, _undirected_codes(pairs[0], pairs[1], n))
    missing = all_codes[~covered]
    return {
        "node_frac": float(len(visited) / n),
        "edge_frac": float(covered.mean()) if len(all_codes) else 1.0,
        "uncovered_edges": torch.from_numpy(np.stack([missing // n, missing % n])),
    }


def samples_to_cover(
    edge_index: torch.Tensor,
    num_nodes: int,
    kind: str = "search",
    walk_length: int | None = None,
    max_samples: int = 100_000,
    generator: torch.Generator | None = None,
) -> int:
    """Number of i.i.d. searches (``kind="search"``) or walks (``kind="walk"``, ``walk_length``
    steps, default N) drawn until their union covers every undirected edge.

    Returns ``max_samples + 1`` when ``max_samples`` do not cover the graph (a disconnected graph
    can never be covered by walks). Samples are drawn in growing chunks (capped at
    :data:`CHUNK_BYTES` of work arrays), counted one by one. One sample must fit in memory
    (``walk_length`` sizes a walk). Integer inputs only: no NaN policy is needed.
    """
    owner = "samples_to_cover"
    check_choice("kind", owner, kind, ("search", "walk"))
    max_samples = check_int("max_samples", owner, max_samples, low=1)
    ei = check_edge_index(edge_index, num_nodes, owner)
    n = num_nodes
    if walk_length is None:
        length = n
    else:
        length = check_int("walk_length", owner, walk_length, low=1)
        check_memory("walk_length", owner, length, walk_bytes(length))
    check_generator(owner, generator)
    csr = to_csr(ei, n)
    all_codes = np.unique(_undirected_codes(ei[0], ei[1], n))
    covered = np.zeros(len(all_codes), bool)
    per_sample = search_bytes(n, ei.shape[1]) if kind == "search" else 2 * walk_bytes(length)
    largest = max(1, CHUNK_BYTES // per_sample)
    drawn, chunk = 0, 4
    while drawn < max_samples:
        chunk = min(chunk, max_samples - drawn, largest)
        if kind == "search":
            order, parent, *_ = sample_searches(csr, chunk, generator)
            child = order
            par = np.take_along_axis(parent, order, axis=1)
        else:
            starts = np.floor(
                torch.rand(chunk, generator=generator, dtype=torch.float64).numpy() * n
            ).astype(np.int64)
            w = walk_kernel(csr, starts, length, False, generator)
            par, child = w[:, :-1], w[:, 1:]
        for j in range(chunk):
            keep = (par[j] >= 0) & (par[j] != child[j])
            idx = np.searchsorted(all_codes, _undirected_codes(par[j][keep], child[j][keep], n))
            covered[idx] = True
            if covered.all():
                return drawn + j + 1
        drawn += chunk
        chunk *= 2
    return max_samples + 1
