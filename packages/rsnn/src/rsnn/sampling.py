"""Sequence samplers: random searches (randomised depth-first search) and random walks.

**Random search.** Pick a start s uniformly at random and run a depth-first search that visits
the not-yet-visited neighbours of each node in a uniformly random order. The order is drawn by
giving every (search, directed edge) slot an i.i.d. Uniform(0, 1) key: when the search first
enters v it sorts v's neighbours by key, and from then on descends into the unvisited neighbour
with the smallest key, which is the same as shuffling v's adjacency list on the visit. When the
stack empties while nodes are left (a disconnected graph), the search restarts from a uniformly
random unvisited node: the roots are taken in the order of a uniformly random permutation of V,
skipping visited nodes, so one search is a spanning forest with one tree per component.

One search gives the preorder π (length N), the parent of every node (-1 for roots), the tree
edges T (N − c of them for c components) and the Euler walk of the traversal: every descent v→u
and every backtrack u→v is a step, so its length is 2(N − c) + c, with flags 0 (descend),
1 (backtrack) and 2 (restart at a new root; the first token is a restart too).

The search runs in a compiled (numba) loop over CSR arrays with an explicit stack, O(|V| + |E|)
per search (an insertion sort orders the d <= 16 neighbours of a node, argsort longer lists);
the searches of all graphs of a batch run in one call. The randomness comes from a
``torch.Generator`` (or torch's global generator), so results are reproducible under
``torch.manual_seed``.

**Random walk.** A uniform random walk of ℓ steps from a uniformly random start, w_{t+1} uniform
over the neighbours of w_t; the non-backtracking walk excludes w_{t-1} unless w_t has degree 1.
A node without neighbours repeats itself. Walks run in a compiled loop too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numba
import numpy as np
import torch

from paperkit import Described, check_bool, check_int, check_memory, check_tensor, param_error
from rsnn.graph import (
    CSRGraph,
    check_edge_index,
    check_generator,
    check_node_ids,
    search_bytes,
    to_csr,
    walk_bytes,
)

__all__ = [
    "SearchBatch",
    "check_search_batch",
    "random_dfs",
    "random_walks",
    "sample_searches",
    "walk_kernel",
]

DESCEND, BACKTRACK, RESTART = 0, 1, 2


@dataclass
class SearchBatch:
    """``num_searches`` random searches of one graph with ``N`` nodes.

    Attributes:
        order: (m, N) int64, the preorder π: ``order[j, i]`` is the i-th node search j visits.
        parent: (m, N) int64, indexed by node id: the DFS-tree parent, -1 for the roots.
        tree_edges: m tensors (2, N − c): rows (parent, child), in preorder of the child.
        euler: (m, L) int64, the traversal as a walk, L = 2(N − c) + c.
        euler_flag: (m, L) int8: 0 descend, 1 backtrack, 2 restart (new root).
    """

    order: torch.Tensor
    parent: torch.Tensor
    tree_edges: list[torch.Tensor]
    euler: torch.Tensor
    euler_flag: torch.Tensor

    @property
    def num_searches(self) -> int:
        return int(self.order.size(0))

    @property
    def num_nodes(self) -> int:
        return int(self.order.size(1))


def _uniform(shape: tuple[int, ...], generator: torch.Generator | None) -> np.ndarray:
    return torch.rand(shape, generator=generator, dtype=torch.float64).numpy()


@numba.njit(cache=True)
def _enter(
    j,
    u,
    p,
    f,
    pos,
    e,
    indptr,
    indices,
    edge_keys,
    nbr,
    nkey,
    ptr,
    visited,
    stamp,
    order,
    parent,
    euler,
    flag,
):
    """Mark u visited from p, order its neighbours by this search's keys, emit token (u, f)."""
    visited[u] = stamp
    order[j, pos] = u
    parent[j, u] = p
    a, b = indptr[u], indptr[u + 1]
    if b - a <= 16:  # insertion sort of a short adjacency list, no allocation
        for k in range(a, b):
            key, v = edge_keys[j, k], indices[k]
            i = k - 1
            while i >= a and nkey[i] > key:
                nkey[i + 1] = nkey[i]
                nbr[i + 1] = nbr[i]
                i -= 1
            nkey[i + 1] = key
            nbr[i + 1] = v
    else:
        sort = np.argsort(edge_keys[j, a:b])
        for k in range(b - a):
            nbr[a + k] = indices[a + sort[k]]
    ptr[u] = a
    euler[j, e] = u
    flag[j, e] = f


@numba.njit(cache=True)
def _dfs_kernel(indptr, indices, node_ptr, euler_ptr, edge_keys, root_order):
    """Run ``edge_keys.shape[0]`` searches on every graph of a CSR batch.

    ``edge_keys`` (m, 2|E|) orders each adjacency list per search; ``root_order`` (m, N) lists,
    per search, graph g's nodes in a uniformly random order in columns node_ptr[g]:node_ptr[g+1]
    (the candidate roots). Returns order and parent (m, N), euler and flag (m, sum of Euler
    lengths), graph g's Euler walks lying in columns ``euler_ptr[g]:euler_ptr[g+1]``.
    """
    m = edge_keys.shape[0]
    n_total = indptr.shape[0] - 1
    order = np.empty((m, n_total), np.int64)
    parent = np.empty((m, n_total), np.int64)
    euler = np.empty((m, euler_ptr[-1]), np.int64)
    flag = np.empty((m, euler_ptr[-1]), np.int8)
    visited = np.zeros(n_total, np.int64)  # stamp of the last search that visited the node
    ptr = np.empty(n_total, np.int64)  # next slot of the sorted adjacency to try, per node
    stack = np.empty(n_total, np.int64)
    nbr = np.empty(indices.shape[0], np.int64)  # adjacency sorted by the current search's keys
    nkey = np.empty(indices.shape[0], np.float64)
    stamp = 0
    for j in range(m):
        for g in range(node_ptr.shape[0] - 1):
            stamp += 1
            n0, n1 = node_ptr[g], node_ptr[g + 1]
            pos, e = n0, euler_ptr[g]
            for q in range(n0, n1):
                r = root_order[j, q]
                if visited[r] == stamp:
                    continue
                _enter(
                    j,
                    r,
                    -1,
                    RESTART,
                    pos,
                    e,
                    indptr,
                    indices,
                    edge_keys,
                    nbr,
                    nkey,
                    ptr,
                    visited,
                    stamp,
                    order,
                    parent,
                    euler,
                    flag,
                )
                pos += 1
                e += 1
                top = 0
                stack[0] = r
                while top >= 0:
                    v = stack[top]
                    end = indptr[v + 1]
                    while ptr[v] < end and visited[nbr[ptr[v]]] == stamp:
                        ptr[v] += 1
                    if ptr[v] < end:
                        w = nbr[ptr[v]]
                        ptr[v] += 1
                        _enter(
                            j,
                            w,
                            v,
                            DESCEND,
                            pos,
                            e,
                            indptr,
                            indices,
                            edge_keys,
                            nbr,
                            nkey,
                            ptr,
                            visited,
                            stamp,
                            order,
                            parent,
                            euler,
                            flag,
                        )
                        pos += 1
                        e += 1
                        top += 1
                        stack[top] = w
                    else:
                        top -= 1
                        if top >= 0:
                            euler[j, e] = stack[top]
                            flag[j, e] = BACKTRACK
                            e += 1
    return order, parent, euler, flag


def sample_searches(
    csr: CSRGraph, num_searches: int, generator: torch.Generator | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``num_searches`` random searches of every graph of a CSR batch.

    Returns ``order, parent`` (m, N) and ``euler, flag`` (m, sum_g L_g) with graph g's Euler walk
    (length L_g = 2(N_g − c_g) + c_g) in columns ``euler_ptr[g]:euler_ptr[g+1]``, and
    ``euler_ptr``. The candidate roots of graph g come from one vectorised sort of
    (graph id + Uniform(0, 1)) per search: a uniform permutation of each graph's nodes.
    """
    sizes = np.diff(csr.node_ptr)
    comps = csr.num_components
    euler_ptr = np.concatenate([[0], np.cumsum(2 * (sizes - comps) + comps)]).astype(np.int64)
    edge_keys = _uniform((num_searches, csr.indices.shape[0]), generator)
    graph_of = np.repeat(np.arange(len(sizes), dtype=np.float64), sizes)
    root_order = np.argsort(graph_of + _uniform((num_searches, csr.num_nodes), generator), axis=1)
    order, parent, euler, flag = _dfs_kernel(
        csr.indptr, csr.indices, csr.node_ptr, euler_ptr, edge_keys, root_order
    )
    return order, parent, euler, flag, euler_ptr


def random_dfs(
    edge_index: torch.Tensor,
    num_nodes: int,
    num_searches: int,
    generator: torch.Generator | None = None,
) -> SearchBatch:
    """``num_searches`` independent random searches (randomised DFS) of one undirected graph.

    Each search starts at a uniformly random node, visits the unvisited neighbours of every node
    in a uniformly random order, and restarts at a uniformly random unvisited node when a
    component is exhausted, so it visits all N nodes (a spanning forest with N − c tree edges).
    A graph without edges gives N one-node trees. Multi-edges count once.

    Args:
        edge_index: (2, 2|E|) integer tensor holding both directions of every edge.
        num_nodes: N >= 1.
        num_searches: m >= 1; the m searches must fit in memory (about 8 bytes per adjacency
            slot and 100 bytes per node each).
        generator: the source of randomness (torch's global generator when None).

    Raises:
        TypeError: non-integer ``edge_index``. ValueError: m < 1, N < 1, bad shape, ids out of
        range, self-loops, a directed edge list ("pass an undirected graph; use
        to_undirected"), or more searches than fit in memory. There are no floating inputs, so
        no NaN can arise.
    """
    owner = "random_dfs"
    ei = check_edge_index(edge_index, num_nodes, owner)
    m = check_int("num_searches", owner, num_searches, low=1)
    check_memory("num_searches", owner, m, m * search_bytes(num_nodes, ei.shape[1]))
    check_generator(owner, generator)
    csr = to_csr(ei, num_nodes)
    order, parent, euler, flag, _ = sample_searches(csr, m, generator)
    order_t, parent_t = torch.from_numpy(order), torch.from_numpy(parent)
    tree_edges = []
    for j in range(m):
        children = order_t[j][parent_t[j, order_t[j]] >= 0]
        tree_edges.append(torch.stack([parent_t[j, children], children]))
    return SearchBatch(
        order=order_t,
        parent=parent_t,
        tree_edges=tree_edges,
        euler=torch.from_numpy(euler),
        euler_flag=torch.from_numpy(flag),
    )


def check_search_batch(name: str, owner: str, batch: SearchBatch, num_nodes: int) -> None:
    """A :class:`SearchBatch` of a graph with ``num_nodes`` nodes: integer fields of matching
    shapes, node ids in range (parents -1 at roots), flags in {0, 1, 2}."""
    if not isinstance(batch, SearchBatch):
        raise param_error(
            name, owner, "a SearchBatch", Described(f"a {type(batch).__name__}"), cls=TypeError
        )
    fields = (("order", "m N"), ("parent", "m N"), ("euler", "m L"), ("euler_flag", "m L"))
    dims: dict = {}
    for field, axes in fields:
        value = getattr(batch, field)
        if not isinstance(value, torch.Tensor) or value.is_floating_point() or value.ndim != 2:
            raise param_error(
                name,
                owner,
                f"a SearchBatch whose {field} is a 2-D integer tensor",
                Described(f"{field} = {type(value).__name__}"),
                cls=TypeError,
            )
        for size, axis in zip(value.shape, axes.split(), strict=True):
            if dims.setdefault(axis, (size, field))[0] != size:
                raise param_error(
                    name,
                    owner,
                    f"a SearchBatch whose {field} has {axis} = {dims[axis][0]} as {dims[axis][1]}",
                    Described(f"{field} of shape {tuple(value.shape)}"),
                )
    if batch.num_nodes != num_nodes:
        raise param_error(
            name,
            owner,
            f"a SearchBatch of a graph with {num_nodes} nodes",
            Described(f"one with {batch.num_nodes} nodes"),
        )
    if len(batch.tree_edges) != batch.num_searches:
        raise param_error(
            name,
            owner,
            f"a SearchBatch with one tree_edges tensor per search ({batch.num_searches})",
            Described(f"{len(batch.tree_edges)} tree_edges tensors"),
        )
    check_node_ids(name, owner, batch.order, num_nodes)
    check_node_ids(name, owner, batch.euler, num_nodes)
    check_node_ids(name, owner, batch.parent, num_nodes, padding=True)
    for edges in batch.tree_edges:
        check_tensor(name, owner, edges, shape=(2, None), dtype="int", nonempty=False)
        check_node_ids(name, owner, edges, num_nodes)
    flags = batch.euler_flag
    if flags.numel() and (int(flags.min()) < DESCEND or int(flags.max()) > RESTART):
        raise param_error(
            name,
            owner,
            "a SearchBatch whose euler_flag holds 0 (descend), 1 (backtrack) or 2 (restart)",
            Described(f"flags from {int(flags.min())} to {int(flags.max())}"),
        )


@numba.njit(cache=True)
def _walk_loop(indptr, indices, rev, starts, u, non_backtracking):
    """Walks over CSR arrays; ``u`` (length, walks) uniforms pick each step's slot."""
    length, num = u.shape
    walks = np.empty((num, length + 1), np.int64)
    for i in range(num):
        cur, back = starts[i], -1  # back: slot of the edge to the previous node in cur's list
        walks[i, 0] = cur
        for t in range(length):
            a, d = indptr[cur], indptr[cur + 1] - indptr[cur]
            if d == 0:
                walks[i, t + 1] = cur
                continue
            if non_backtracking and back >= 0 and d > 1:
                k = min(int(u[t, i] * (d - 1)), d - 2)
                slot = a + k + (1 if a + k >= back else 0)
            else:
                slot = a + min(int(u[t, i] * d), d - 1)
            cur = indices[slot]
            back = rev[slot]
            walks[i, t + 1] = cur
    return walks


def walk_kernel(
    csr: CSRGraph,
    starts: np.ndarray,
    length: int,
    non_backtracking: bool,
    generator: torch.Generator | None = None,
) -> np.ndarray:
    """Walks of ``length`` steps from the given starts over a CSR graph: (len(starts), length + 1).

    Compiled loop. Uniform: w_{t+1} = indices[indptr[w_t] + floor(U·deg)]. Non-backtracking: one
    slot of w_t's list is the edge back to w_{t-1} (``rev`` maps the slot of u→v to that of v→u);
    a uniform draw over the other deg − 1 slots skips it (unless deg = 1: the walk turns back).
    """
    n = csr.num_nodes
    rows = np.repeat(np.arange(n), csr.degree)
    code = rows * n + csr.indices  # sorted: CSR rows with sorted columns
    rev = np.searchsorted(code, csr.indices * n + rows)
    u = _uniform((length, len(starts)), generator)
    return _walk_loop(
        csr.indptr, csr.indices, rev, np.asarray(starts, np.int64), u, bool(non_backtracking)
    )


def random_walks(
    edge_index: torch.Tensor,
    num_nodes: int,
    num_walks: int,
    length: int,
    non_backtracking: bool = False,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """``num_walks`` uniform random walks of ``length`` steps from uniformly random starts.

    Returns (num_walks, length + 1) int64 node ids. ``non_backtracking=True`` never steps back to
    the previous node unless it is the only neighbour. A node without neighbours repeats itself.
    Input errors as :func:`random_dfs`; ``length`` >= 0, and the walks must fit in memory
    (16 bytes per step). No floating inputs, so no NaN policy is needed.
    """
    owner = "random_walks"
    ei = check_edge_index(edge_index, num_nodes, owner)
    m = check_int("num_walks", owner, num_walks, low=1)
    length = check_int("length", owner, length, low=0)
    check_memory("length", owner, length, walk_bytes(length))
    check_memory("num_walks", owner, m, m * walk_bytes(length))
    non_backtracking = check_bool("non_backtracking", owner, non_backtracking)
    check_generator(owner, generator)
    csr = to_csr(ei, num_nodes)
    starts = np.floor(_uniform((m,), generator) * num_nodes).astype(np.int64)
    return torch.from_numpy(walk_kernel(csr, starts, length, non_backtracking, generator))
