"""Stage 2: the spatio-temporal adapter ``g`` attached to the frozen temporal backbone.

On the backbone's patch tokens ``Z`` ``(B, N, T_p, d)`` of every node's window:

1. metadata fusion: node meta (coordinates -> random Fourier features ``[sin 2pi cW, cos 2pi cW]``,
   a learnable node embedding) and time meta (time-of-day and day-of-week embeddings of the last
   input step) -> MLP -> FiLM ``Z <- Z * (1 + gamma) + beta``, broadcast over tokens;
2. interaction pruning: per token position, attention across nodes with scores
   ``S = Q K^T / sqrt(d)`` kept only at each row's top-k and at the prior graph's edges (the rest
   ``-inf``), softmax, aggregate ``V``, residual + LayerNorm;
3. a zero-initialised linear residual head ``(T_p d -> H)`` added to the backbone's forecast.

Domain alignment (:func:`factost.coral_loss`) and replay act in :func:`factost.adapt`; the
``use_align`` flag only tells it whether to add the alignment term.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from factost.graph import prior_mask
from paperkit import check_bool, check_int, check_tensor, describe, param_error

__all__ = ["STAdapter", "sparse_attention"]

#: Width of each time embedding and of the random-Fourier coordinate features.
TIME_DIM, RFF_DIM, NODE_DIM = 8, 8, 16


def sparse_attention(
    q: Tensor, k: Tensor, v: Tensor, topk: int | None, prior: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    r"""Top-k pruned attention across nodes.

    .. math:: S = QK^\top/\sqrt d,\quad S_{ij} \leftarrow -\infty \text{ unless } j \in
              \mathrm{top}_k(S_{i\cdot}) \cup \mathcal N(i),\quad
              \mathrm{out} = \mathrm{softmax}(S) V

    Args:
        q, k: ``(..., N, d)``; v: ``(..., N, e)`` (NaN refused).
        topk: entries kept per row (``None`` or ``>= N``: dense attention).
        prior: optional ``(N, N)`` boolean mask of extra entries kept (row ``i``: nodes ``i``
            may read, see :func:`factost.graph.prior_mask`).

    Returns ``(out (..., N, e), attn (..., N, N))``.

    >>> q = torch.randn(2, 6, 4)
    >>> out, attn = sparse_attention(q, q, q, topk=2)
    >>> out.shape, int((attn > 0).sum(-1).max())
    (torch.Size([2, 6, 4]), 2)
    """
    owner = "sparse_attention"
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, owner, t, ndim=range(2, 9))
    if k.dtype != q.dtype or v.dtype != q.dtype:
        raise param_error(
            "k", owner, f"of the dtype of 'q' ({q.dtype}), as v", describe(k), cls=TypeError
        )
    if k.shape != q.shape:
        raise param_error("k", owner, f"of the shape of 'q' {tuple(q.shape)}", describe(k))
    if v.shape[:-1] != q.shape[:-1]:
        raise param_error("v", owner, f"of shape {tuple(q.shape[:-1])} + (e,) as 'q'", describe(v))
    n = q.shape[-2]
    if topk is not None:
        topk = check_int("topk", owner, topk, low=1)
    if prior is not None:
        check_tensor("prior", owner, prior, shape=(n, n), dtype="bool")
    return _attend(q, k, v, topk, prior)


def _attend(
    q: Tensor, k: Tensor, v: Tensor, topk: int | None, prior: Tensor | None
) -> tuple[Tensor, Tensor]:
    """:func:`sparse_attention` without the argument checks."""
    n = q.shape[-2]
    scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
    if (topk is not None and topk < n) or prior is not None:
        keep = torch.zeros_like(scores, dtype=torch.bool)
        if topk is not None and topk < n:
            keep.scatter_(-1, scores.topk(topk, dim=-1).indices, True)
        else:
            keep.fill_(True)
        if prior is not None:
            keep = keep | prior
        scores = scores.masked_fill(~keep, float("-inf"))
    attn = torch.softmax(scores, dim=-1)
    return attn @ v, attn


class _SpatialLayer(nn.Module):
    """One pruned spatial attention layer with residual and LayerNorm."""

    def __init__(self, d: int) -> None:
        super().__init__()
        self.qkv = nn.Linear(d, 3 * d)
        self.out = nn.Linear(d, d)
        self.norm = nn.LayerNorm(d)

    def forward(self, z: Tensor, topk: int | None, prior: Tensor | None) -> Tensor:
        q, k, v = self.qkv(z).chunk(3, dim=-1)
        agg, _ = _attend(q, k, v, topk, prior)
        return self.norm(z + self.out(agg))


class STAdapter(nn.Module):
    r"""The spatio-temporal adapter of FactoST (Stage 2).

    Args:
        d_model: token width ``d`` (the backbone's).
        n_nodes: nodes of the target domain, for the learnable node embedding (None: no
            embedding).
        coord_dim: dimension ``c`` of node coordinates.
        topk: nodes kept per row of the spatial attention.
        layers: spatial attention layers (1 or 2 in FactoST).
        use_meta: metadata FiLM on (ablation ``-meta`` when False).
        use_prune: top-k pruning on (False: dense attention over all nodes, ablation ``-prune``).
        use_align: whether :func:`factost.adapt` adds the CORAL alignment term (``-align``).
        n_tokens, horizon: ``T_p`` and ``H`` of the backbone, for the residual head; when None,
            :class:`factost.FactoST` sets them from its backbone (:meth:`bind`).
        seed: seed of the fixed random Fourier matrix.

    ``forward(z (B, N, T_p, d), coords (N, c) | None, time_feat (B, 2) | None, edge_index
    (2, E) | None)`` returns adapted tokens of the same shape. ``time_feat[:, 0]`` is the time of
    day in ``[0, 1)``, ``time_feat[:, 1]`` the day of week in ``[0, 7)``. NaN is refused; ``z``
    is cast to the adapter's dtype.

    >>> g = STAdapter(8, n_nodes=5, topk=2, n_tokens=3, horizon=4)
    >>> z = torch.randn(2, 5, 3, 8)
    >>> g(z, torch.rand(5, 2), torch.tensor([[0.5, 2.0], [0.1, 6.0]])).shape
    torch.Size([2, 5, 3, 8])
    """

    def __init__(
        self,
        d_model: int,
        n_nodes: int | None = None,
        coord_dim: int = 2,
        topk: int = 8,
        layers: int = 1,
        use_meta: bool = True,
        use_prune: bool = True,
        use_align: bool = True,
        n_tokens: int | None = None,
        horizon: int | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__()
        owner = "STAdapter"
        self.d_model = check_int("d_model", owner, d_model, low=1, high=8192)
        if n_nodes is not None:
            check_int("n_nodes", owner, n_nodes, low=1, high=1_000_000)
        self.n_nodes = n_nodes
        self.coord_dim = check_int("coord_dim", owner, coord_dim, low=1, high=64)
        self.topk = check_int("topk", owner, topk, low=1, high=1_000_000)
        check_int("layers", owner, layers, low=1, high=16)
        self.use_meta = check_bool("use_meta", owner, use_meta)
        self.use_prune = check_bool("use_prune", owner, use_prune)
        self.use_align = check_bool("use_align", owner, use_align)
        check_int("seed", owner, seed, low=0)
        gen = torch.Generator().manual_seed(seed)
        self.register_buffer("rff", torch.randn(coord_dim, RFF_DIM // 2, generator=gen))
        self.node_emb = nn.Embedding(n_nodes, NODE_DIM) if n_nodes and use_meta else None
        if use_meta:
            self.tod = nn.Embedding(24, TIME_DIM)
            self.dow = nn.Embedding(7, TIME_DIM)
            self.meta = nn.Sequential(
                nn.Linear(RFF_DIM + NODE_DIM + 2 * TIME_DIM, d_model),
                nn.GELU(),
                nn.Linear(d_model, 2 * d_model),
            )
            nn.init.zeros_(self.meta[-1].weight)
            nn.init.zeros_(self.meta[-1].bias)
        self.spatial = nn.ModuleList(_SpatialLayer(d_model) for _ in range(layers))
        self.residual_head: nn.Linear | None = None
        if (n_tokens is None) != (horizon is None):
            raise param_error("horizon", owner, "given together with n_tokens", horizon)
        if n_tokens is not None:
            self.bind(n_tokens, horizon)

    def bind(self, n_tokens: int, horizon: int) -> STAdapter:
        """Create the zero-initialised residual head ``Linear(T_p d, H)`` (once)."""
        check_int("n_tokens", "STAdapter.bind", n_tokens, low=1, high=100_000)
        check_int("horizon", "STAdapter.bind", horizon, low=1, high=100_000)
        head = self.residual_head
        if head is not None:
            if head.in_features != n_tokens * self.d_model or head.out_features != horizon:
                raise param_error("n_tokens", "STAdapter.bind", "those it was built with", n_tokens)
            return self
        self.n_tokens, self.horizon = n_tokens, horizon
        self.residual_head = nn.Linear(n_tokens * self.d_model, horizon)
        nn.init.zeros_(self.residual_head.weight)
        nn.init.zeros_(self.residual_head.bias)
        return self

    def check_inputs(
        self,
        owner: str,
        n: int,
        coords: Tensor | None,
        time_feat: Tensor | None,
        edge_index: Tensor | None,
        batch: int,
    ) -> None:
        """Refuse coordinates, time features or edges that do not fit ``n`` nodes."""
        if coords is not None:
            check_tensor("coords", owner, coords, shape=(None, self.coord_dim))
            if coords.shape[0] != n:
                raise param_error("coords", owner, f"one row per node (N={n})", describe(coords))
        if time_feat is not None:
            check_tensor("time_feat", owner, time_feat, shape=(batch, 2))
            tod, dow = time_feat[:, 0], time_feat[:, 1]
            if bool(((tod < 0) | (tod >= 1) | (dow < 0) | (dow >= 7)).any()):
                raise param_error(
                    "time_feat",
                    owner,
                    "time of day in [0, 1) and day of week in [0, 7)",
                    describe(time_feat),
                )
        if edge_index is not None:
            prior_mask(edge_index, n)  # checks ids

    def film(
        self, z: Tensor, coords: Tensor | None, time_feat: Tensor | None, nodes: bool = True
    ) -> Tensor:
        """Metadata FiLM ``z (1 + gamma) + beta``; missing meta enter as zeros."""
        B, N = z.shape[:2]
        parts = []
        if coords is not None:
            proj = 2 * math.pi * coords.to(z.dtype) @ self.rff.to(z.dtype)
            rff = torch.cat([proj.sin(), proj.cos()], -1).expand(B, N, RFF_DIM)
        else:
            rff = z.new_zeros(B, N, RFF_DIM)
        parts.append(rff)
        if nodes and self.node_emb is not None and self.n_nodes == N:
            parts.append(self.node_emb.weight.to(z.dtype).expand(B, N, NODE_DIM))
        else:
            parts.append(z.new_zeros(B, N, NODE_DIM))
        if time_feat is not None:
            tod = (time_feat[:, 0] * 24).long().clamp(0, 23)
            dow = time_feat[:, 1].long().clamp(0, 6)
            t = torch.cat([self.tod(tod), self.dow(dow)], -1).to(z.dtype)
            parts.append(t[:, None].expand(B, N, 2 * TIME_DIM))
        else:
            parts.append(z.new_zeros(B, N, 2 * TIME_DIM))
        gamma, beta = self.meta(torch.cat(parts, -1)).chunk(2, dim=-1)
        return z * (1 + gamma[:, :, None]) + beta[:, :, None]

    def adapt_tokens(
        self,
        z: Tensor,
        coords: Tensor | None = None,
        time_feat: Tensor | None = None,
        edge_index: Tensor | None = None,
        nodes: bool = True,
    ) -> Tensor:
        """FiLM then pruned spatial attention, without argument checks (the forward's body)."""
        N = z.shape[1]
        if self.use_meta:
            z = self.film(z, coords, time_feat, nodes)
        prior = prior_mask(edge_index, N).to(z.device) if edge_index is not None else None
        topk = self.topk if self.use_prune else None
        h = z.transpose(1, 2)  # (B, T_p, N, d): attention across nodes per token position
        for layer in self.spatial:
            h = layer(h, topk, prior)
        return h.transpose(1, 2)

    def residual(self, z: Tensor) -> Tensor:
        """The zero-initialised residual forecast ``(B, N, H)`` of adapted tokens."""
        if self.residual_head is None:
            raise param_error("n_tokens", "STAdapter.residual", "set (call bind first)", None)
        return self.residual_head(z.flatten(-2))

    def forward(
        self,
        z: Tensor,
        coords: Tensor | None = None,
        time_feat: Tensor | None = None,
        edge_index: Tensor | None = None,
    ) -> Tensor:
        owner = "STAdapter"
        check_tensor("z", owner, z, shape=(None, None, None, self.d_model))
        self.check_inputs(owner, z.shape[1], coords, time_feat, edge_index, z.shape[0])
        z = z.to(self.rff.dtype)  # documented cast to the adapter's dtype
        return self.adapt_tokens(z, coords, time_feat, edge_index)
