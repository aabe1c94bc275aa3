"""Serialisation of sampled searches and walks into token sequences.

Every token stands for a node w_t together with the edge that brought the sequence there, from
a predecessor p_t (the previous node of an Euler walk or random walk, the DFS parent in the
preorder; none at a start or restart). Token t is

    tokens[t]    = [ x_{w_t} ; e_{p_t w_t} ; onehot(flag_t) ]        (F + F_e + 3 floats)
    anon[t]      = anon(w_t)          anon_prev[t] = anon(p_t)   (0 when there is no p_t)

where anon(w) = 1 + the rank of w's first visit in that sequence (the anonymisation of RWNNs: the
tokens depend on node ids only through it), e = 0 for no edge, and the flag is 0 for a first visit
(a DFS descent), 1 for a revisit (a DFS backtrack, a walk returning), 2 for a start or restart at
a new root. The model embeds ``anon`` and ``anon_prev`` with learned tables.

Modes: ``"euler"`` (the DFS traversal as a walk, 2(N − c) + c tokens), ``"preorder"`` (N tokens,
one per node with its tree edge to the parent), ``"walk"`` (a random walk, one token per step).
Euler and preorder encode exactly the tree edges of the search; non-tree edges are not encoded.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch_geometric.data import Data

from paperkit import (
    Described,
    check_choice,
    check_int,
    check_memory,
    check_tensor,
    param_error,
)
from rsnn.graph import check_graph_data, check_node_ids
from rsnn.sampling import BACKTRACK, RESTART, SearchBatch, check_search_batch

__all__ = ["SeqBatch", "anonymize", "encode", "serialize", "window_features"]

MODES = ("euler", "preorder", "walk")


@dataclass
class SeqBatch:
    """A batch of S token sequences padded to length L.

    Attributes:
        tokens: (S, L, F + F_e + 3) float token features (zeros at padding).
        node_ids: (S, L) int64 node of each token, -1 at padding.
        pad_mask: (S, L) bool, True at padding.
        anon: (S, L) int64 anonymised id of the token's node (1-based; 0 at padding).
        anon_prev: (S, L) int64 anonymised id of the predecessor (0 at starts and padding).
    """

    tokens: torch.Tensor
    node_ids: torch.Tensor
    pad_mask: torch.Tensor
    anon: torch.Tensor
    anon_prev: torch.Tensor


def anonymize(nodes: torch.Tensor) -> torch.Tensor:
    """anon(w_t) = 1 + rank of w_t's first occurrence in its row; 0 where ``nodes`` is -1.

    ``nodes``: an (S, L) integer tensor of node ids, -1 at padding (ids need not be < any bound;
    they are only compared). Integer input, so no NaN policy is needed.

    Vectorised: each (row, node) pair gets a key; for each key, its first position; a token is a
    first visit when it sits at that position; the cumulative count of first visits up to that
    position is the rank.

    >>> anonymize(torch.tensor([[7, 3, 7, -1]])).tolist()
    [[1, 2, 1, 0]]
    """
    check_tensor("nodes", "anonymize", nodes, ndim=2, dtype="int")
    if int(nodes.min()) < -1:
        raise param_error(
            "nodes",
            "anonymize",
            "node ids >= 0, or -1 at padding",
            Described(f"a smallest entry of {int(nodes.min())}"),
        )
    return _anonymize(nodes.long())


def _anonymize(nodes: torch.Tensor) -> torch.Tensor:
    """:func:`anonymize` without the checks (for the package's own, valid sequences)."""
    S, L = nodes.shape
    valid = nodes >= 0
    _, dense = torch.unique(nodes.clamp(min=0), return_inverse=True)  # ids -> 0..U-1
    key = (torch.arange(S).unsqueeze(1) * (int(dense.max()) + 1) + dense).reshape(-1)
    _, inv = torch.unique(key, return_inverse=True)
    pos = torch.arange(S * L)
    pos_masked = torch.where(valid.reshape(-1), pos, torch.full_like(pos, S * L))
    first = torch.full((int(inv.max()) + 1,), S * L, dtype=torch.long)
    first = first.scatter_reduce(0, inv, pos_masked, reduce="amin")
    is_first = (first[inv] == pos) & valid.reshape(-1)
    rank = torch.cumsum(is_first.reshape(S, L).long(), dim=1).reshape(-1)
    anon = rank[first[inv].clamp(max=S * L - 1)].reshape(S, L)
    return torch.where(valid, anon, torch.zeros_like(anon))


def _edge_positions(edge_index: torch.Tensor, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    """Column of ``edge_index`` holding src→dst, or -1 (the first column for multi-edges)."""
    n = int(torch.cat([edge_index.reshape(-1), src, dst]).max()) + 1 if edge_index.numel() else 1
    code = edge_index[0] * n + edge_index[1]
    sorted_code, perm = torch.sort(code, stable=True)
    query = src.clamp(min=0) * n + dst.clamp(min=0)
    at = torch.searchsorted(sorted_code, query).clamp(max=max(len(code) - 1, 0))
    if not len(code):
        return torch.full_like(src, -1)
    found = (sorted_code[at] == query) & (src >= 0) & (dst >= 0)
    return torch.where(found, perm[at], torch.full_like(at, -1))


def encode(
    nodes: torch.Tensor,
    prev: torch.Tensor,
    flags: torch.Tensor,
    anon_prev: torch.Tensor,
    x: torch.Tensor | None,
    edge_index: torch.Tensor,
    edge_attr: torch.Tensor | None,
) -> SeqBatch:
    """Token features of padded sequences.

    ``nodes``, ``prev`` (predecessor, -1 for none), ``flags`` and ``anon_prev`` are (S, L) with -1
    in ``nodes`` at padding; ``x`` (N, F) or None (F = 0); ``edge_attr`` (2|E|, F_e) or None.
    """
    pad = nodes < 0
    safe = nodes.clamp(min=0)
    parts = []
    if x is not None:
        parts.append(x[safe].float())
    if edge_attr is not None:
        ea = edge_attr.float().reshape(edge_attr.size(0), -1)
        col = _edge_positions(edge_index, prev.reshape(-1), nodes.reshape(-1)).reshape(nodes.shape)
        gathered = ea[col.clamp(min=0)] if ea.size(0) else ea.new_zeros(*nodes.shape, ea.size(1))
        parts.append(torch.where((col >= 0).unsqueeze(-1), gathered, torch.zeros_like(gathered)))
    parts.append(torch.nn.functional.one_hot(flags.long().clamp(min=0), 3).float())
    tokens = torch.cat(parts, dim=-1) * (~pad).unsqueeze(-1)
    return SeqBatch(
        tokens=tokens,
        node_ids=torch.where(pad, torch.full_like(nodes, -1), nodes),
        pad_mask=pad,
        anon=_anonymize(nodes),
        anon_prev=torch.where(pad, torch.zeros_like(anon_prev), anon_prev),
    )


def window_features(node_ids: torch.Tensor, edge_index: torch.Tensor, window: int) -> torch.Tensor:
    """CRaWl's structural features of each token over the ``window`` tokens before it.

    For token t and j = 1..s (s = ``window``): ``same[t, j] = [w_t = w_{t-j}]`` and
    ``adj[t, j] = [(w_{t-j}, w_t) ∈ E]``, both 0 where t − j is before the sequence start or at
    padding. Returns an (S, L, 2s) float tensor [same_1..same_s, adj_1..adj_s].

    With these, an Euler tour also shows the non-tree edges between nodes at most s tokens apart
    (the tree-only token format does not), and a walk shows its short cycles explicitly: the
    features CRaWl (Tönshoff et al., 2023) gives its 1-D CNN. ``node_ids`` are (S, L) with -1 at
    padding; integer input, so no NaN policy is needed.

    >>> ei = torch.tensor([[0, 1, 1, 2, 2, 0], [1, 0, 2, 1, 0, 2]])  # a triangle
    >>> window_features(torch.tensor([[0, 1, 2, 0]]), ei, 2)[0, 3].tolist()  # back at 0
    [0.0, 0.0, 1.0, 1.0]
    """
    owner = "window_features"
    check_tensor("node_ids", owner, node_ids, ndim=2, dtype="int")
    check_tensor("edge_index", owner, edge_index, shape=(2, None), dtype="int")
    window = check_int("window", owner, window, low=0)
    S, L = node_ids.shape
    check_memory("window", owner, window, 3 * 8 * S * L * max(window, 1))
    if window == 0:
        return torch.zeros(S, L, 0)
    node_ids, edge_index = node_ids.long(), edge_index.long()
    padded = torch.cat([torch.full_like(node_ids[:, :1], -1).expand(S, window), node_ids], dim=1)
    # before[:, t, j - 1] = w_{t-j} (-1 before the start), for j = 1..s
    before = torch.stack([padded[:, window - j : window - j + L] for j in range(1, window + 1)], -1)
    now = node_ids.unsqueeze(-1).expand_as(before)
    valid = (before >= 0) & (now >= 0)
    same = valid & (before == now)
    adj = valid & (_edge_positions(edge_index, before.reshape(-1), now.reshape(-1)) >= 0).reshape(
        before.shape
    )
    return torch.cat([same, adj], dim=-1).float()


def walk_flags(nodes: torch.Tensor, anon: torch.Tensor) -> torch.Tensor:
    """Flags of walk tokens: 2 at the start, 0 at a first visit, 1 at a revisit."""
    running_max = torch.cummax(anon, dim=1).values
    earlier = torch.cat([torch.zeros_like(running_max[:, :1]), running_max[:, :-1]], dim=1)
    flags = torch.where(anon > earlier, 0, BACKTRACK)
    flags[:, 0] = RESTART
    return torch.where(nodes >= 0, flags, torch.zeros_like(flags))


def shifted(values: torch.Tensor, flags: torch.Tensor) -> torch.Tensor:
    """values[t-1] along rows, -1 at t = 0 and at restarts (the predecessor in a walk)."""
    out = torch.cat([torch.full_like(values[:, :1], -1), values[:, :-1]], dim=1)
    return torch.where(flags == RESTART, torch.full_like(out, -1), out)


def serialize(
    data: Data,
    batch: SearchBatch | torch.Tensor,
    mode: Literal["euler", "preorder", "walk"] = "euler",
) -> SeqBatch:
    """Token sequences of one graph's searches (``"euler"``, ``"preorder"``) or walks (``"walk"``).

    Args:
        data: the graph (``x`` optional, ``edge_index``, ``edge_attr`` optional).
        batch: a :class:`SearchBatch` of that graph for ``"euler"``/``"preorder"``; an (m, L)
            int64 tensor of walks for ``"walk"``.
        mode: the token format (see the module docstring).

    Returns:
        a :class:`SeqBatch` with m sequences: L = 2(N − c) + c (euler), N (preorder), the walk
        length + 1 (walk).

    NaN or inf in ``data.x`` or ``data.edge_attr`` is refused (the tokens would carry it).
    """
    owner = "serialize"
    check_choice("mode", owner, mode, MODES)
    check_graph_data("data", owner, data)
    n = int(data.num_nodes)
    if mode == "walk":
        if not isinstance(batch, torch.Tensor):
            raise param_error(
                "batch",
                owner,
                "an (m, L) tensor of walks for mode 'walk'",
                Described(f"a {type(batch).__name__}"),
                cls=TypeError,
            )
        check_tensor("batch", owner, batch, shape=(None, None), dtype="int")
        check_node_ids("batch", owner, batch, n, padding=True)
        nodes = batch.long()
        anon = _anonymize(nodes)
        flags = walk_flags(nodes, anon)
        prev, anon_prev = shifted(nodes, flags), shifted(anon, flags).clamp(min=0)
    else:
        if not isinstance(batch, SearchBatch):
            raise param_error(
                "batch",
                owner,
                f"a SearchBatch for mode {mode!r}",
                Described(f"a {type(batch).__name__}"),
                cls=TypeError,
            )
        check_search_batch("batch", owner, batch, n)
        if mode == "euler":
            nodes, flags = batch.euler.long(), batch.euler_flag.long()
            anon = _anonymize(nodes)
            prev, anon_prev = shifted(nodes, flags), shifted(anon, flags).clamp(min=0)
        else:
            nodes = batch.order.long()
            prev = torch.gather(batch.parent.long(), 1, nodes)
            flags = torch.where(prev < 0, RESTART, 0)
            rank = torch.empty_like(nodes).scatter_(
                1, nodes, torch.arange(1, n + 1).expand_as(nodes).contiguous()
            )
            anon_prev = torch.where(prev >= 0, torch.gather(rank, 1, prev.clamp(min=0)), 0)
    return encode(
        nodes, prev, flags, anon_prev, data.x, data.edge_index, getattr(data, "edge_attr", None)
    )
