r"""Target-node k-hop subgraphs with a candidate edge from the target to every other node.

For a target :math:`v` with k-hop ball :math:`S_v` (the node set that
``torch_geometric.utils.k_hop_subgraph(v, k, edge_index)`` returns, relabelled to local ids in
increasing global id):

* candidate (trainable) edges :math:`(v, u)` for every :math:`u \in S_v \setminus \{v\}`, both
  directions, stored first and interleaved :math:`(v,u_1), (u_1,v), (v,u_2), \dots`; initial
  weight :math:`a_{vu} = 1` if :math:`(v,u)` or :math:`(u,v)` is an edge of the graph, else 0;
* fixed edges: every edge of :math:`S_v` not incident to :math:`v`, weight 1.

Each subgraph is a PyG ``Data`` with ``x``, ``edge_index``, ``edge_weight``, ``cand_mask`` (bool
over edges), ``target`` (local index of v, shape (1,)), ``node_idx`` (global ids of the local
nodes), ``center`` (global id of v, shape (1,)) and ``y`` (v's label, shape (1,)) when the graph
has labels.

The construction is vectorised over all targets at once: the balls grow as sorted
``(target, node)`` keys, each hop gathering the in-neighbours of every key through a CSR index
(``k_hop_subgraph``'s source-to-target flow); the edges of every ball are the in-edges of its
nodes whose source is in the same ball (a ``searchsorted`` membership test). No Python loop over
targets or edges runs until the per-target tensors are cut apart with ``split``. The balls are
found first (their keys are small); the subgraphs are built only once the memory they need
(features, candidate and fixed edges) is known to fit.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch_geometric.data import Data
from torch_geometric.utils import index_to_mask

from graphtop.inputs import graph_arg, node_ids
from paperkit import Described, check_int, check_memory, describe, param_error

__all__ = ["build_target_subgraphs", "k_hop_balls", "num_candidates"]


def _gather(ptr: torch.Tensor, values: torch.Tensor, rows: torch.Tensor):
    """For each entry of ``rows``, all ``values[ptr[r]:ptr[r+1]]``; returns (owner, value)."""
    counts = ptr[rows + 1] - ptr[rows]
    owner = torch.repeat_interleave(torch.arange(rows.numel(), device=rows.device), counts)
    first = torch.cumsum(counts, 0) - counts
    offset = torch.arange(int(counts.sum()), device=rows.device) - first[owner]
    return owner, values[ptr[rows][owner] + offset]


def k_hop_balls(
    edge_index: torch.Tensor,
    num_nodes: int,
    nodes: torch.Tensor,
    num_hops: int,
    caller: str = "k_hop_balls",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The k-hop balls of all ``nodes`` at once, as sorted keys ``target_position * N + node``.

    Returns ``(keys, ptr, (src, dst))``: ball ``i`` is ``keys[ptr[i]:ptr[i+1]] - i*N`` (sorted
    global ids); ``src, dst`` are the in-edge CSR of the graph (sorted by destination) that the
    caller reuses to collect each ball's edges. Before each hop the memory its gather needs
    (about six int64 arrays of the keys' total in-degree) is checked, naming ``nodes`` at
    ``caller``.
    """
    n = num_nodes
    device = edge_index.device
    order = torch.argsort(edge_index[1] * n + edge_index[0])
    src, dst = edge_index[0, order], edge_index[1, order]
    ptr = torch.zeros(n + 1, dtype=torch.long, device=device)
    ptr[1:] = torch.cumsum(torch.bincount(dst, minlength=n), 0)
    keys = torch.arange(nodes.numel(), device=device) * n + nodes
    for _ in range(num_hops):
        rows = keys % n
        gathered = int((ptr[rows + 1] - ptr[rows]).sum())
        check_memory(
            "nodes",
            caller,
            Described(f"{nodes.numel()} nodes"),
            6 * 8 * (gathered + keys.numel()),
        )
        owner, sources = _gather(ptr, src, rows)
        keys = torch.unique(torch.cat([keys, (keys // n)[owner] * n + sources]))
    counts = torch.bincount(keys // n, minlength=nodes.numel())
    ball_ptr = torch.zeros(nodes.numel() + 1, dtype=torch.long, device=device)
    ball_ptr[1:] = torch.cumsum(counts, 0)
    return keys, ball_ptr, (src, ptr)


def build_target_subgraphs(
    data: Data, nodes: torch.Tensor | Sequence[int], num_hops: int = 2
) -> list[Data]:
    """One rewirable k-hop subgraph per node of ``nodes`` (fields: see the module docstring).

    The candidate count of a subgraph is ``|S_v| - 1``; ``edge_weight[cand_mask]`` reproduces the
    original adjacency of the target; ``edge_index[:, ~cand_mask]`` are the non-target edges.
    ``data`` must be a valid graph (finite ``x``, integer ``edge_index`` of shape (2, E) with ids
    below N: NaN or inf features are refused), ``nodes`` non-empty ids in [0, N); a set of
    subgraphs that would not fit in memory is refused before it is built.

    >>> from torch_geometric.data import Data
    >>> g = Data(x=torch.zeros(4, 1), edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]))
    >>> build_target_subgraphs(g, [0])[0].node_idx.tolist()  # node 3 is isolated
    [0, 1, 2]
    """
    owner = "build_target_subgraphs"
    graph_arg(owner, data)
    num_hops = check_int("num_hops", owner, num_hops, low=1)
    nodes = node_ids(owner, nodes, data.num_nodes)
    return subgraphs_of(data, nodes, num_hops, owner)


def subgraphs_of(data: Data, nodes: torch.Tensor, num_hops: int, caller: str) -> list[Data]:
    """:func:`build_target_subgraphs` of a checked graph and nodes; the memory check names
    ``nodes`` at ``caller``."""
    n = data.num_nodes
    device = data.edge_index.device
    nodes = nodes.to(device)
    keys, ball_ptr, (src, in_ptr) = k_hop_balls(data.edge_index, n, nodes, num_hops, caller)
    balls = keys.numel()
    features = data.x.shape[1] * data.x.element_size()
    # per ball node: its features and two candidate edges (two int64 ids, a weight, a mask);
    # fixed edges are at most the ball's in-edges, counted from the CSR degrees.
    in_degree = (in_ptr[1:] - in_ptr[:-1])[keys % n]
    nbytes = balls * (features + 2 * (16 + data.x.element_size() + 1))
    nbytes += int(in_degree.sum()) * (16 + data.x.element_size() + 1)
    check_memory("nodes", caller, Described(f"{nodes.numel()} nodes, {balls} ball nodes"), nbytes)
    ball_of = keys // n  # target position of every ball node
    node = keys % n
    local = torch.arange(keys.numel(), device=device) - ball_ptr[ball_of]
    sizes = ball_ptr[1:] - ball_ptr[:-1]

    # Every edge s -> u with u in ball b and s in ball b, found as an in-edge of u.
    owner, sources = _gather(in_ptr, src, node)
    edge_key = ball_of[owner] * n + sources
    pos = torch.searchsorted(keys, edge_key).clamp_max(keys.numel() - 1)
    inside = keys[pos] == edge_key
    e_ball, e_src, e_dst = ball_of[owner][inside], pos[inside], owner[inside]  # key positions
    center = nodes[e_ball]
    incident = (node[e_src] == center) | (node[e_dst] == center)

    # Initial candidate weights: key positions of the target's neighbours in its ball.
    adjacent = index_to_mask(
        torch.where(node[e_src[incident]] == center[incident], e_dst[incident], e_src[incident]),
        size=keys.numel(),
    )
    is_target = node == nodes[ball_of]
    cand = (~is_target).nonzero().reshape(-1)  # key positions of every candidate
    target_local = local[is_target.nonzero().reshape(-1)]  # one per ball, in ball order
    t = target_local[ball_of[cand]]
    u = local[cand]
    cand_src = torch.stack([t, u], 1).reshape(-1)
    cand_dst = torch.stack([u, t], 1).reshape(-1)
    cand_w = adjacent[cand].to(data.x.dtype).repeat_interleave(2)
    fixed = ~incident
    fixed_ball = e_ball[fixed]
    fixed_src, fixed_dst = local[e_src[fixed]], local[e_dst[fixed]]
    fixed_order = torch.argsort(fixed_ball, stable=True)
    fixed_ball, fixed_src, fixed_dst = (
        fixed_ball[fixed_order],
        fixed_src[fixed_order],
        fixed_dst[fixed_order],
    )

    num_cand = (sizes - 1).tolist()
    num_fixed = torch.bincount(fixed_ball, minlength=nodes.numel()).tolist()
    pieces = zip(
        node.split(sizes.tolist()),
        cand_src.split([2 * c for c in num_cand]),
        cand_dst.split([2 * c for c in num_cand]),
        cand_w.split([2 * c for c in num_cand]),
        fixed_src.split(num_fixed),
        fixed_dst.split(num_fixed),
        strict=True,
    )
    has_y = isinstance(getattr(data, "y", None), torch.Tensor)
    out = []
    for i, (subset, cs, cd, cw, fs, fd) in enumerate(pieces):
        nc, nf = cs.numel(), fs.numel()
        sub = Data(
            x=data.x[subset],
            edge_index=torch.stack([torch.cat([cs, fs]), torch.cat([cd, fd])]),
            edge_weight=torch.cat([cw, torch.ones(nf, dtype=cw.dtype, device=device)]),
            cand_mask=torch.arange(nc + nf, device=device) < nc,
            target=target_local[i : i + 1],
            node_idx=subset,
            center=nodes[i : i + 1],
        )
        if has_y:
            sub.y = data.y[nodes[i : i + 1]]
        out.append(sub)
    return out


def num_candidates(subgraph: Data) -> int:
    """The number of candidate edges (one per other node of the ball) of one subgraph built by
    :func:`build_target_subgraphs` (anything else is refused: it needs a boolean ``cand_mask``).

    >>> from torch_geometric.data import Data
    >>> g = Data(x=torch.zeros(3, 1), edge_index=torch.tensor([[0, 1], [1, 0]]))
    >>> num_candidates(build_target_subgraphs(g, [0])[0])
    1
    """
    owner = "num_candidates"
    if not isinstance(subgraph, Data):
        raise param_error(
            "subgraph", owner, "a torch_geometric.data.Data", describe(subgraph), cls=TypeError
        )
    mask = getattr(subgraph, "cand_mask", None)
    if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool or mask.ndim != 1:
        raise param_error(
            "subgraph",
            owner,
            "a subgraph from build_target_subgraphs (with a boolean cand_mask)",
            Described(f"cand_mask = {describe(mask)}"),
        )
    return int(mask.sum()) // 2
