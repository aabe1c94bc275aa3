"""RSNN (random search neural network) and the RWNN baseline on the same sequence model.

For a graph G, m sequences are sampled (random searches for RSNN, random walks for RWNN) and
serialised (:mod:`rsnn.serialize`). A token is embedded as

    z_t = W [x_{w_t}; e_{p_t w_t}; onehot(flag_t)] + Emb(anon(w_t)) + Emb'(anon(p_t)),

read by a sequence model (bidirectional GRU, Transformer encoder or CRaWl-style 1-D CNN) into
h_t ∈ R^D, and pooled by scatter-mean onto nodes,

    r_v = mean{ h_t : token t of any of the m sequences has w_t = v },

then onto the graph, g = mean_{v seen} r_v, and an MLP head gives the output (graph level), or the
head reads r_v directly (node level). Fresh sequences are drawn at every forward pass (from torch's
global generator, so ``torch.manual_seed`` fixes them); more sequences at evaluation average over
more of them, which estimates the isomorphism-invariant expectation better.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Batch, Data
from torch_geometric.utils import scatter

from paperkit import Described, check_choice, param_error
from rsnn.graph import check_edge_index, check_positive, to_csr
from rsnn.sampling import sample_searches, walk_kernel
from rsnn.serialize import SeqBatch, anonymize, encode, shifted, walk_flags

__all__ = ["RSNN", "RWNN", "SequenceEncoder", "pool_nodes"]

SEQ_MODELS = ("gru", "transformer", "cnn")
LEVELS = ("graph", "node")


def pool_nodes(h: torch.Tensor, node_ids: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Scatter-mean of token states onto nodes: r_v = mean of h[s, t] over tokens with node v.

    ``h`` (S, L, D), ``node_ids`` (S, L) with -1 at padding. Nodes without a token get 0.
    """
    keep = node_ids.reshape(-1) >= 0
    flat = h.reshape(-1, h.size(-1))[keep]
    return scatter(flat, node_ids.reshape(-1)[keep], dim=0, dim_size=num_nodes, reduce="mean")


class SequenceEncoder(nn.Module):
    """The sequence model: (S, L, D) token embeddings with a padding mask → (S, L, D) states.

    ``"gru"``: 2-layer bidirectional GRU (D/2 per direction, packed so padding is never read).
    ``"transformer"``: 2-layer Transformer encoder, 4 heads, sinusoidal positions.
    ``"cnn"``: 2 residual 1-D convolutions of width 9 with ReLU, as in CRaWl (padding zeroed).
    """

    def __init__(self, kind: str, hidden: int):
        super().__init__()
        self.kind = kind
        if kind == "gru":
            if hidden % 2:
                raise param_error("hidden", "SequenceEncoder", "even for the GRU", hidden)
            self.net = nn.GRU(hidden, hidden // 2, 2, batch_first=True, bidirectional=True)
        elif kind == "transformer":
            layer = nn.TransformerEncoderLayer(
                hidden,
                nhead=4 if hidden % 4 == 0 else 1,
                dim_feedforward=2 * hidden,
                dropout=0.0,
                batch_first=True,
            )
            self.net = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
        else:
            self.net = nn.ModuleList(nn.Conv1d(hidden, hidden, 9, padding=4) for _ in range(2))

    def forward(self, z: torch.Tensor, pad_mask: torch.Tensor) -> torch.Tensor:
        keep = (~pad_mask).unsqueeze(-1).to(z.dtype)
        if self.kind == "gru":
            lengths = (~pad_mask).sum(1).cpu()
            packed = nn.utils.rnn.pack_padded_sequence(
                z, lengths, batch_first=True, enforce_sorted=False
            )
            out, _ = self.net(packed)
            out, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True, total_length=z.size(1))
            return out
        if self.kind == "transformer":
            L, D = z.size(1), z.size(2)
            pos = torch.arange(L, device=z.device, dtype=z.dtype).unsqueeze(1)
            freq = torch.exp(
                torch.arange(0, D, 2, device=z.device, dtype=z.dtype) * (-math.log(1e4) / D)
            )
            pe = torch.zeros(L, D, device=z.device, dtype=z.dtype)
            pe[:, 0::2] = torch.sin(pos * freq)
            pe[:, 1::2] = torch.cos(pos * freq)[:, : D // 2]
            return self.net(z + pe, src_key_padding_mask=pad_mask) * keep
        h = z * keep
        for conv in self.net:
            h = (h + torch.relu(conv(h.transpose(1, 2)).transpose(1, 2))) * keep
        return h


class _TraversalNet(nn.Module):
    """Shared body of RSNN and RWNN: embedding, sequence model, pooling, head."""

    owner = "RSNN"

    def __init__(
        self,
        in_dim: int,
        edge_dim: int,
        hidden: int,
        out_dim: int,
        seq_model: str,
        num_sequences: int,
        level: str,
        max_anon: int,
    ):
        super().__init__()
        owner = self.owner
        if isinstance(in_dim, bool) or not isinstance(in_dim, int) or in_dim < 0:
            raise param_error("in_dim", owner, "a non-negative integer", in_dim)
        if isinstance(edge_dim, bool) or not isinstance(edge_dim, int) or edge_dim < 0:
            raise param_error("edge_dim", owner, "a non-negative integer", edge_dim)
        check_positive(hidden, "hidden", owner)
        check_positive(out_dim, "out_dim", owner)
        check_positive(max_anon, "max_anon", owner)
        check_choice("seq_model", owner, seq_model, SEQ_MODELS)
        check_choice("level", owner, level, LEVELS)
        self.in_dim, self.edge_dim, self.level, self.max_anon = in_dim, edge_dim, level, max_anon
        self.token_proj = nn.Linear(in_dim + edge_dim + 3, hidden)
        self.anon_emb = nn.Embedding(max_anon + 1, hidden)
        self.anon_prev_emb = nn.Embedding(max_anon + 1, hidden)
        self.encoder = SequenceEncoder(seq_model, hidden)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))
        self.num_sequences = num_sequences
        self.last_num_tokens = 0  # tokens read by the last forward pass (budget accounting)

    def _sample(self, csr, m: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def _check(self, batch: Data) -> tuple[np.ndarray, np.ndarray]:
        owner = self.owner
        if not isinstance(batch, Data):
            raise param_error(
                "batch",
                owner,
                "a torch_geometric Data or Batch",
                Described(type(batch).__name__),
                cls=TypeError,
            )
        n = int(batch.num_nodes)
        ei = check_edge_index(batch.edge_index, n, owner)
        x = batch.x
        got = 0 if x is None else (x.size(1) if x.dim() == 2 else -1)
        if got != self.in_dim:
            raise param_error(
                "batch",
                owner,
                f"node features x of shape (N, {self.in_dim})",
                Described("no x" if x is None else f"x of shape {tuple(x.shape)}"),
            )
        ea = getattr(batch, "edge_attr", None)
        if self.edge_dim and (ea is None or ea.reshape(ea.size(0), -1).size(1) != self.edge_dim):
            raise param_error(
                "batch",
                owner,
                f"edge_attr of shape (num_edges, {self.edge_dim})",
                Described(
                    "no edge_attr" if ea is None else f"edge_attr of shape {tuple(ea.shape)}"
                ),
            )
        ptr = batch.ptr.cpu().numpy() if isinstance(batch, Batch) else np.array([0, n])
        return ei, ptr

    def sequences(self, batch: Data, num_sequences: int | None = None) -> SeqBatch:
        """The serialised sequences of one forward pass: m per graph, graph-major order."""
        m = self.num_sequences if num_sequences is None else num_sequences
        m = check_positive(m, "num_sequences", self.owner)
        ei, ptr = self._check(batch)
        csr = to_csr(ei, int(batch.num_nodes), ptr)
        nodes, prev, flags, anon_prev = self._sample(csr, m)
        ea = getattr(batch, "edge_attr", None) if self.edge_dim else None
        x = batch.x if self.in_dim else None
        seq = encode(nodes, prev, flags, anon_prev, x, batch.edge_index.cpu(), ea)
        if int(seq.anon.max()) > self.max_anon:
            raise param_error(
                "max_anon",
                self.owner,
                "at least the number of distinct nodes in a sequence",
                self.max_anon,
            )
        return seq

    def forward(self, batch: Data, num_sequences: int | None = None) -> torch.Tensor:
        seq = self.sequences(batch, num_sequences)
        self.last_num_tokens = int((~seq.pad_mask).sum())
        device = self.token_proj.weight.device
        z = (
            self.token_proj(seq.tokens.to(device))
            + self.anon_emb(seq.anon.to(device))
            + self.anon_prev_emb(seq.anon_prev.to(device))
        )
        pad = seq.pad_mask.to(device)
        h = self.encoder(z, pad)
        n = int(batch.num_nodes)
        node_ids = seq.node_ids.to(device)
        r = pool_nodes(h, node_ids, n)
        if self.level == "node":
            return self.head(r)
        seen = torch.zeros(n, dtype=torch.bool, device=device)
        seen[node_ids[node_ids >= 0]] = True
        graph_of = (
            batch.batch.to(device)
            if isinstance(batch, Batch)
            else torch.zeros(n, dtype=torch.long, device=device)
        )
        num_graphs = int(batch.num_graphs) if isinstance(batch, Batch) else 1
        g = scatter(r[seen], graph_of[seen], dim=0, dim_size=num_graphs, reduce="mean")
        return self.head(g)


def _gather_segments(values: np.ndarray, starts: np.ndarray, lengths: np.ndarray) -> torch.Tensor:
    """(m, total) columns split into G segments → (G·m, max length), graph-major, -1 padded."""
    t = np.arange(lengths.max())
    valid = t[None, :] < lengths[:, None]
    cols = np.where(valid, starts[:, None] + t[None, :], 0)
    out = values[:, cols]  # (m, G, Lmax)
    out = np.where(valid[None], out, -1).transpose(1, 0, 2).reshape(-1, len(t))
    return torch.from_numpy(np.ascontiguousarray(out))


class RSNN(_TraversalNet):
    """Random search neural network: m randomised DFS per graph, serialised, read by a sequence
    model, scatter-mean pooled (see the module docstring).

    Args:
        in_dim: node feature size F (0 when the graphs have no ``x``).
        edge_dim: edge feature size F_e (0: edge features are not used).
        hidden: width D of the embeddings and the sequence model.
        out_dim: output size.
        seq_model: ``"gru"`` (default), ``"transformer"`` or ``"cnn"``.
        num_searches: m, searches per graph per forward pass (default 4).
        serialization: ``"euler"`` (default) or ``"preorder"``.
        level: ``"graph"`` → (B, out_dim), ``"node"`` → (N, out_dim).
        max_anon: size of the anonymised-id tables; sequences with more distinct nodes raise.
    """

    owner = "RSNN"

    def __init__(
        self,
        in_dim: int,
        edge_dim: int = 0,
        hidden: int = 128,
        out_dim: int = 1,
        seq_model: str = "gru",
        num_searches: int = 4,
        serialization: str = "euler",
        level: str = "graph",
        max_anon: int = 512,
    ):
        check_positive(num_searches, "num_searches", self.owner)
        check_choice("serialization", self.owner, serialization, ("euler", "preorder"))
        super().__init__(
            in_dim, edge_dim, hidden, out_dim, seq_model, num_searches, level, max_anon
        )
        self.serialization = serialization

    @property
    def num_searches(self) -> int:
        return self.num_sequences

    def _sample(self, csr, m):
        order, parent, euler, flag, euler_ptr = sample_searches(csr, m)
        if self.serialization == "euler":
            nodes = _gather_segments(euler, euler_ptr[:-1], np.diff(euler_ptr))
            flags = _gather_segments(flag.astype(np.int64), euler_ptr[:-1], np.diff(euler_ptr))
            flags = flags.clamp(min=0)
            anon = anonymize(nodes)
            return nodes, shifted(nodes, flags), flags, shifted(anon, flags).clamp(min=0)
        sizes = np.diff(csr.node_ptr)
        nodes = _gather_segments(order, csr.node_ptr[:-1], sizes)
        rank = np.empty_like(order)
        local = np.arange(order.shape[1]) - np.repeat(csr.node_ptr[:-1], sizes)
        np.put_along_axis(rank, order, local[None, :] + 1, axis=1)
        par = np.take_along_axis(parent, order, axis=1)
        par_rank = np.where(par >= 0, np.take_along_axis(rank, np.maximum(par, 0), axis=1), 0)
        prev = _gather_segments(par, csr.node_ptr[:-1], sizes)
        anon_prev = _gather_segments(par_rank, csr.node_ptr[:-1], sizes).clamp(min=0)
        flags = torch.where(prev < 0, 2, 0)
        return nodes, prev, flags, anon_prev

    def forward(self, batch: Data, num_searches: int | None = None) -> torch.Tensor:
        """Predictions (B, out_dim) for graph level, (N, out_dim) for node level, from
        ``num_searches`` (default: the constructor's) fresh searches per graph."""
        return super().forward(batch, num_searches)


class RWNN(_TraversalNet):
    """Random walk neural network baseline: as :class:`RSNN` with m uniform random walks of
    ``walk_length`` steps per graph (default: |V| of each graph) instead of searches, and the same
    token format (anonymised ids, edge features, first-visit/revisit/start flags).

    ``non_backtracking=True`` uses non-backtracking walks.
    """

    owner = "RWNN"

    def __init__(
        self,
        in_dim: int,
        edge_dim: int = 0,
        hidden: int = 128,
        out_dim: int = 1,
        seq_model: str = "gru",
        num_walks: int = 4,
        walk_length: int | None = None,
        level: str = "graph",
        max_anon: int = 512,
        non_backtracking: bool = False,
    ):
        check_positive(num_walks, "num_walks", self.owner)
        if walk_length is not None:
            check_positive(walk_length, "walk_length", self.owner)
        super().__init__(in_dim, edge_dim, hidden, out_dim, seq_model, num_walks, level, max_anon)
        self.walk_length = walk_length
        self.non_backtracking = bool(non_backtracking)

    @property
    def num_walks(self) -> int:
        return self.num_sequences

    def _sample(self, csr, m):
        sizes = np.diff(csr.node_ptr)
        lengths = np.full_like(sizes, self.walk_length) if self.walk_length else sizes
        u = torch.rand(len(sizes), m, dtype=torch.float64).numpy()
        starts = (csr.node_ptr[:-1, None] + np.floor(u * sizes[:, None])).astype(np.int64)
        walks = walk_kernel(csr, starts.reshape(-1), int(lengths.max()), self.non_backtracking)
        t = np.arange(walks.shape[1])
        valid = t[None, :] <= np.repeat(lengths, m)[:, None]
        nodes = torch.from_numpy(np.where(valid, walks, -1))
        anon = anonymize(nodes)
        flags = walk_flags(nodes, anon)
        return nodes, shifted(nodes, flags), flags, shifted(anon, flags).clamp(min=0)

    def forward(self, batch: Data, num_walks: int | None = None) -> torch.Tensor:
        """Predictions as :meth:`RSNN.forward`, from ``num_walks`` fresh walks per graph."""
        return super().forward(batch, num_walks)
