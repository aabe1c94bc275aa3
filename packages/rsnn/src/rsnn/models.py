"""RSNN (random search neural network) and the RWNN baseline on the same sequence model.

For a graph G, m sequences are sampled (random searches for RSNN, random walks for RWNN) and
serialised (:mod:`rsnn.tokens`). A token is embedded as

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
from typing import Any

import numpy as np
import torch
from torch import nn
from torch_geometric.data import Batch, Data
from torch_geometric.utils import scatter

from paperkit import (
    Described,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_tensor,
    param_error,
)
from rsnn.graph import check_graph_data, check_node_ids, to_csr
from rsnn.sampling import sample_searches, walk_kernel
from rsnn.tokens import SeqBatch, _anonymize, encode, shifted, walk_flags, window_features

__all__ = ["RSNN", "RWNN", "SequenceEncoder", "pool_nodes"]

SEQ_MODELS = ("gru", "transformer", "cnn")
LEVELS = ("graph", "node")


def pool_nodes(h: torch.Tensor, node_ids: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Scatter-mean of token states onto nodes: r_v = mean of h[s, t] over tokens with node v.

    Shapes:
        h: (S, L, D) floating token states.
        node_ids: (S, L) integer node ids in [0, num_nodes), -1 at padding.
        returns: (num_nodes, D); nodes without a token get 0.

    NaN or inf in ``h`` is refused (it would spread to its node's mean).

    >>> pool_nodes(torch.ones(1, 3, 2), torch.tensor([[0, 0, -1]]), 2).tolist()
    [[1.0, 1.0], [0.0, 0.0]]
    """
    owner = "pool_nodes"
    dims: dict = {}
    check_tensor("h", owner, h, shape=("S", "L", "D"), dims=dims)
    check_tensor("node_ids", owner, node_ids, shape=("S", "L"), dims=dims, dtype="int")
    num_nodes = check_int("num_nodes", owner, num_nodes, low=1)
    check_memory("num_nodes", owner, num_nodes, 2 * num_nodes * h.size(-1) * h.element_size())
    check_node_ids("node_ids", owner, node_ids, num_nodes, padding=True)
    return _pool(h, node_ids.long(), num_nodes)


def _pool(h: torch.Tensor, node_ids: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """:func:`pool_nodes` without the checks (inside the models' forward pass)."""
    keep = node_ids.reshape(-1) >= 0
    flat = h.reshape(-1, h.size(-1))[keep]
    return scatter(flat, node_ids.reshape(-1)[keep], dim=0, dim_size=num_nodes, reduce="mean")


def weight_bytes(kind: str, hidden: int) -> int:
    """Bytes of a :class:`SequenceEncoder`'s weights with their gradients and Adam's two moments
    (4 float32 copies): about 6 D² weights for the GRU, 12 D² for the Transformer (attention 4 D²
    and feed-forward 4 D² per layer, two layers, rounded up), 18 D² for the CNN (two width-9
    convolutions)."""
    per_d2 = {"gru": 6, "transformer": 12, "cnn": 18}[kind]
    return 16 * per_d2 * hidden * hidden


def activation_bytes(kind: str, hidden: int, num_seqs: int, length: int, features: int) -> int:
    """Bytes one forward and backward pass over ``num_seqs`` padded sequences of ``length``
    tokens needs: token features and ids, about 10 activations of width D per token kept for the
    backward, and for the Transformer its 4-head L × L attention maps (3 kept per layer, 2
    layers)."""
    tokens = num_seqs * length
    attention = 4 * 4 * 3 * 2 * num_seqs * length * length if kind == "transformer" else 0
    return tokens * (4 * features + 40 + 40 * hidden) + attention


class SequenceEncoder(nn.Module):
    """The sequence model: (S, L, D) token embeddings with a padding mask → (S, L, D) states.

    ``"gru"``: 2-layer bidirectional GRU (D/2 per direction, packed so padding is never read).
    ``"transformer"``: 2-layer Transformer encoder, 4 heads, sinusoidal positions.
    ``"cnn"``: 2 residual 1-D convolutions of width 9 with ReLU, as in CRaWl (padding zeroed).

    Args:
        kind: ``"gru"``, ``"transformer"`` or ``"cnn"``.
        hidden: the width D (even for the GRU); its weights must fit in memory.
    """

    def __init__(self, kind: str, hidden: int):
        super().__init__()
        owner = "SequenceEncoder"
        check_choice("kind", owner, kind, SEQ_MODELS)
        hidden = check_int("hidden", owner, hidden, low=1)
        if kind == "gru" and hidden % 2:
            raise param_error("hidden", owner, "even for the GRU", hidden)
        check_memory("hidden", owner, hidden, weight_bytes(kind, hidden))
        self.kind, self.hidden = kind, hidden
        if kind == "gru":
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
        """States (S, L, D) of the token embeddings.

        Shapes:
            z: (S, L, D) embeddings, of the encoder's dtype and device.
            pad_mask: (S, L) bool, True at padding; every sequence needs one token at least.

        NaN or inf in ``z`` is refused.
        """
        owner = "SequenceEncoder"
        weight = next(self.parameters())
        dims: dict = {}
        check_tensor(
            "z",
            owner,
            z,
            shape=("S", "L", self.hidden),
            dims=dims,
            dtype=weight.dtype,
            device=weight.device,
        )
        check_tensor(
            "pad_mask", owner, pad_mask, shape=("S", "L"), dims=dims, dtype="bool", device=z.device
        )
        empty = pad_mask.all(dim=1)
        if bool(empty.any()):
            raise param_error(
                "pad_mask",
                owner,
                "False at one token at least in every sequence",
                Described(f"{int(empty.sum())} all-padding sequence(s)"),
            )
        return self._encode(z, pad_mask)

    def _encode(self, z: torch.Tensor, pad_mask: torch.Tensor) -> torch.Tensor:
        """:meth:`forward` without the checks (inside the models' forward pass)."""
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
    """Shared body of RSNN and RWNN: embedding, sequence model, pooling, head.

    ``count`` is the name of the sequence count in the subclass's signature (``num_searches``,
    ``num_walks``), so that errors name the argument the user passed.
    """

    owner = "RSNN"
    count = "num_searches"

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
        window: int = 0,
    ):
        super().__init__()
        owner = self.owner
        in_dim = check_int("in_dim", owner, in_dim, low=0)
        edge_dim = check_int("edge_dim", owner, edge_dim, low=0)
        hidden = check_int("hidden", owner, hidden, low=1)
        out_dim = check_int("out_dim", owner, out_dim, low=1)
        num_sequences = check_int(self.count, owner, num_sequences, low=1)
        max_anon = check_int("max_anon", owner, max_anon, low=1)
        window = check_int("window", owner, window, low=0)
        check_choice("seq_model", owner, seq_model, SEQ_MODELS)
        check_choice("level", owner, level, LEVELS)
        if seq_model == "gru" and hidden % 2:
            raise param_error("hidden", owner, "even for the GRU", hidden)
        check_memory("hidden", owner, hidden, weight_bytes(seq_model, hidden) + 32 * hidden**2)
        for name, size in (("in_dim", in_dim), ("edge_dim", edge_dim), ("out_dim", out_dim)):
            check_memory(name, owner, size, 16 * size * hidden)
        check_memory("max_anon", owner, max_anon, 2 * 16 * (max_anon + 1) * hidden)
        check_memory("window", owner, window, 16 * 2 * window * hidden)
        one_token = activation_bytes(seq_model, hidden, 1, 1, in_dim + edge_dim + 3 + 2 * window)
        check_memory(self.count, owner, num_sequences, num_sequences * one_token)
        self.in_dim, self.edge_dim, self.level, self.max_anon = in_dim, edge_dim, level, max_anon
        self.seq_model, self.window = seq_model, window
        self.token_proj = nn.Linear(in_dim + edge_dim + 3 + 2 * window, hidden)
        self.anon_emb = nn.Embedding(max_anon + 1, hidden)
        self.anon_prev_emb = nn.Embedding(max_anon + 1, hidden)
        self.encoder = SequenceEncoder(seq_model, hidden)
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))
        self.num_sequences = num_sequences
        self.last_num_tokens = 0  # tokens read by the last forward pass (budget accounting)

    def _sample(self, csr, m: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        raise NotImplementedError

    def _length(self, sizes: np.ndarray) -> int:
        """The longest sequence a graph of the batch gives (graph sizes ``sizes``)."""
        raise NotImplementedError

    def _distinct(self, sizes: np.ndarray) -> int:
        """The most distinct nodes one sequence can visit (graph sizes ``sizes``)."""
        raise NotImplementedError

    def _check(self, batch: Any, count: Any, count_name: str) -> tuple[np.ndarray, np.ndarray, int]:
        """The batch's edge_index, its graph pointer and the sequence count (the argument
        ``count_name`` of the caller), all checked."""
        name = "batch"
        owner = self.owner
        ei = check_graph_data(name, owner, batch, in_dim=self.in_dim, edge_dim=self.edge_dim)
        n = int(batch.num_nodes)
        ptr = batch.ptr.cpu().numpy() if isinstance(batch, Batch) else np.array([0, n])
        m = self.num_sequences if count is None else check_int(count_name, owner, count, low=1)
        sizes = np.diff(ptr)
        if self._distinct(sizes) > self.max_anon:
            raise param_error(
                name,
                owner,
                f"graphs whose sequences visit at most max_anon = {self.max_anon} distinct nodes "
                "(build the model with a larger max_anon)",
                Described(f"sequences of up to {self._distinct(sizes)} distinct nodes"),
            )
        features = self.in_dim + self.edge_dim + 3 + 2 * self.window
        need = activation_bytes(
            self.seq_model, self.encoder.hidden, m * len(sizes), self._length(sizes), features
        )
        check_memory(count_name, owner, m, need)
        return ei, ptr, m

    def sequences(self, batch: Data, num_sequences: int | None = None) -> SeqBatch:
        """The serialised sequences of one forward pass: m per graph, graph-major order."""
        ei, ptr, m = self._check(batch, num_sequences, "num_sequences")
        return self._sequences(batch, ei, ptr, m)

    def _sequences(self, batch: Data, ei: np.ndarray, ptr: np.ndarray, m: int) -> SeqBatch:
        csr = to_csr(ei, int(batch.num_nodes), ptr)
        nodes, prev, flags, anon_prev = self._sample(csr, m)
        ea = getattr(batch, "edge_attr", None) if self.edge_dim else None
        x = batch.x if self.in_dim else None
        return encode(nodes, prev, flags, anon_prev, x, batch.edge_index.cpu(), ea)

    def _forward(self, batch: Data, count: int | None) -> torch.Tensor:
        ei, ptr, m = self._check(batch, count, self.count)
        seq = self._sequences(batch, ei, ptr, m)
        self.last_num_tokens = int((~seq.pad_mask).sum())
        device = self.token_proj.weight.device
        tokens = seq.tokens
        if self.window:
            structure = window_features(seq.node_ids, batch.edge_index.cpu(), self.window)
            tokens = torch.cat([tokens, structure], dim=-1)
        z = (
            self.token_proj(tokens.to(device))
            + self.anon_emb(seq.anon.to(device))
            + self.anon_prev_emb(seq.anon_prev.to(device))
        )
        pad = seq.pad_mask.to(device)
        h = self.encoder._encode(z, pad)
        n = int(batch.num_nodes)
        node_ids = seq.node_ids.to(device)
        r = _pool(h, node_ids, n)
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
        hidden: width D of the embeddings and the sequence model (even for the GRU).
        out_dim: output size.
        seq_model: ``"gru"`` (default), ``"transformer"`` or ``"cnn"``.
        num_searches: m, searches per graph per forward pass (default 4).
        serialization: ``"euler"`` (default) or ``"preorder"``.
        level: ``"graph"`` → (B, out_dim), ``"node"`` → (N, out_dim).
        max_anon: size of the anonymised-id tables; a batch with a graph of more nodes is
            refused.
        window: s ≥ 0; when positive, each token also carries CRaWl's identity and adjacency
            indicators with the s tokens before it (:func:`rsnn.tokens.window_features`), which
            show non-tree edges between nearby tokens. Default 0: the tree-only format.

    Every size must fit in memory (weights, and at each call the activations of
    ``num_searches`` sequences per graph); NaN or inf in the batch's ``x`` or ``edge_attr`` is
    refused.
    """

    owner = "RSNN"
    count = "num_searches"

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
        window: int = 0,
    ):
        check_choice("serialization", self.owner, serialization, ("euler", "preorder"))
        super().__init__(
            in_dim, edge_dim, hidden, out_dim, seq_model, num_searches, level, max_anon, window
        )
        self.serialization = serialization

    @property
    def num_searches(self) -> int:
        return self.num_sequences

    def _length(self, sizes: np.ndarray) -> int:
        return int(sizes.max()) * (2 if self.serialization == "euler" else 1)

    def _distinct(self, sizes: np.ndarray) -> int:
        return int(sizes.max())

    def _sample(self, csr, m):
        order, parent, euler, flag, euler_ptr = sample_searches(csr, m)
        if self.serialization == "euler":
            nodes = _gather_segments(euler, euler_ptr[:-1], np.diff(euler_ptr))
            flags = _gather_segments(flag.astype(np.int64), euler_ptr[:-1], np.diff(euler_ptr))
            flags = flags.clamp(min=0)
            anon = _anonymize(nodes)
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
        ``num_searches`` (default: the constructor's) fresh searches per graph of ``batch``
        (a PyG ``Data`` or ``Batch``)."""
        return self._forward(batch, num_searches)


class RWNN(_TraversalNet):
    """Random walk neural network baseline: as :class:`RSNN` with m uniform random walks of
    ``walk_length`` steps per graph (default: |V| of each graph) instead of searches, and the same
    token format (anonymised ids, edge features, first-visit/revisit/start flags).

    ``non_backtracking=True`` uses non-backtracking walks; ``window`` as :class:`RSNN`. A batch
    is refused when a walk could visit more than ``max_anon`` distinct nodes (min(|V|,
    walk_length + 1)). Memory and NaN policy as :class:`RSNN`.
    """

    owner = "RWNN"
    count = "num_walks"

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
        window: int = 0,
    ):
        if walk_length is not None:
            walk_length = check_int("walk_length", self.owner, walk_length, low=1)
            check_memory("walk_length", self.owner, walk_length, 40 * (walk_length + 1))
        self.non_backtracking = check_bool("non_backtracking", self.owner, non_backtracking)
        super().__init__(
            in_dim, edge_dim, hidden, out_dim, seq_model, num_walks, level, max_anon, window
        )
        self.walk_length = walk_length

    @property
    def num_walks(self) -> int:
        return self.num_sequences

    def _length(self, sizes: np.ndarray) -> int:
        return (self.walk_length or int(sizes.max())) + 1

    def _distinct(self, sizes: np.ndarray) -> int:
        if self.walk_length is None:
            return int(sizes.max())
        return int(min(sizes.max(), self.walk_length + 1))

    def _sample(self, csr, m):
        sizes = np.diff(csr.node_ptr)
        lengths = np.full_like(sizes, self.walk_length) if self.walk_length else sizes
        u = torch.rand(len(sizes), m, dtype=torch.float64).numpy()
        starts = (csr.node_ptr[:-1, None] + np.floor(u * sizes[:, None])).astype(np.int64)
        walks = walk_kernel(csr, starts.reshape(-1), int(lengths.max()), self.non_backtracking)
        t = np.arange(walks.shape[1])
        valid = t[None, :] <= np.repeat(lengths, m)[:, None]
        nodes = torch.from_numpy(np.where(valid, walks, -1))
        anon = _anonymize(nodes)
        flags = walk_flags(nodes, anon)
        return nodes, shifted(nodes, flags), flags, shifted(anon, flags).clamp(min=0)

    def forward(self, batch: Data, num_walks: int | None = None) -> torch.Tensor:
        """Predictions as :meth:`RSNN.forward`, from ``num_walks`` fresh walks per graph."""
        return self._forward(batch, num_walks)
