r"""Message passing layers: MeshGraphNet blocks, the flat processor and AMPN (ROBIN Sec. 3.1).

A MeshGraphNet block updates edges, then nodes, with residuals (Pfaff et al. 2021):

.. math::
    e'_{ij} = e_{ij} + \mathrm{MLP}_e([h_i, h_j, e_{ij}]), \qquad
    h'_i = h_i + \mathrm{MLP}_v\big([h_i, \textstyle\sum_j e'_{ij}]\big),

with MLPs of two hidden layers, SiLU and a LayerNorm on the output; sums go through
``torch_geometric.utils.scatter``. AMPN (Algebraic-hierarchical Message Passing Network) runs these
blocks on every AMG level in a U-pass: level-0 stack, down along the interpolation edges (fine to
coarse), the next level's stack, ..., the coarsest stack, then up (coarse to fine) on top of the
latent saved on the way down (the skip), followed by the level's stack on the way up, back to level
0, and a decoder. The diffusion-step embedding is added to every node latent on every level.
"""

from __future__ import annotations

import torch
from torch import nn
from torch_geometric.utils import scatter

from paperkit import check_bool, check_int, check_tensor, param_error
from robin.hierarchy import Hierarchy

__all__ = ["AMPN", "MGNBlock", "MGNProcessor", "mlp"]


def mlp(d_in: int, d_out: int, hidden: int, norm: bool = True) -> nn.Sequential:
    """Two hidden layers of width ``hidden`` with SiLU; a LayerNorm on the output when ``norm``."""
    layers: list[nn.Module] = [
        nn.Linear(d_in, hidden),
        nn.SiLU(),
        nn.Linear(hidden, hidden),
        nn.SiLU(),
        nn.Linear(hidden, d_out),
    ]
    if norm:
        layers.append(nn.LayerNorm(d_out))
    return nn.Sequential(*layers)


class MGNBlock(nn.Module):
    r"""One MeshGraphNet block on a (possibly bipartite) graph.

    ``forward(h_src, h_dst, e, edge_index) -> (h_dst', e')``: messages run along ``edge_index =
    [source, target]``; :math:`e' = e + \mathrm{MLP}_e([h_{dst}, h_{src}, e])`,
    :math:`h'_{dst} = h_{dst} + \mathrm{MLP}_v([h_{dst}, \sum e'])`. On one level pass the same
    latents as ``h_src`` and ``h_dst``; between levels (AMPN's down/up passes) they differ.
    """

    def __init__(self, latent: int) -> None:
        super().__init__()
        self.edge_mlp = mlp(3 * latent, latent, latent)
        self.node_mlp = mlp(2 * latent, latent, latent)

    def forward(
        self, h_src: torch.Tensor, h_dst: torch.Tensor, e: torch.Tensor, edge_index: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        src, dst = edge_index[0], edge_index[1]
        e = e + self.edge_mlp(torch.cat([h_dst[dst], h_src[src], e], dim=-1))
        agg = scatter(e, dst, dim=0, dim_size=h_dst.shape[0], reduce="sum")
        return h_dst + self.node_mlp(torch.cat([h_dst, agg.to(h_dst.dtype)], dim=-1)), e


def _check_inputs(owner, node_feat, edge_feat, hier, k_emb, node_in, edge_in, latent, dtype):
    dims: dict = {}
    # under autocast the layers cast for themselves; otherwise inputs match the weights
    want = (
        None
        if torch.is_autocast_enabled(
            node_feat.device.type if isinstance(node_feat, torch.Tensor) else "cpu"
        )
        else dtype
    )
    check_tensor("node_feat", owner, node_feat, shape=("N", node_in), dims=dims)
    check_tensor("edge_feat", owner, edge_feat, shape=("E", edge_in), dims=dims)
    for name, x in (("node_feat", node_feat), ("edge_feat", edge_feat)):
        if want is not None and x.dtype != want:
            raise param_error(
                name, owner, f"of the weights' dtype {want}", str(x.dtype), cls=TypeError
            )
    if not isinstance(hier, Hierarchy):
        raise param_error("hier", owner, "a Hierarchy", type(hier).__name__, cls=TypeError)
    if hier.sizes[0] != node_feat.shape[0]:
        raise param_error(
            "node_feat",
            owner,
            f"one row per level-0 node of 'hier' ({hier.sizes[0]})",
            node_feat.shape[0],
        )
    if hier.edge_index[0].shape[1] != edge_feat.shape[0]:
        raise param_error(
            "edge_feat",
            owner,
            f"one row per level-0 directed edge of 'hier' ({hier.edge_index[0].shape[1]})",
            edge_feat.shape[0],
        )
    if k_emb is not None:
        check_tensor("k_emb", owner, k_emb, shape=("N", latent), dims=dims, dtype=want or "float")


class MGNProcessor(nn.Module):
    r"""Flat MeshGraphNet: encoder, ``blocks`` MGN blocks on the level-0 edges, decoder.

    ``forward(node_feat (N, node_in), edge_feat (E, edge_in), hier, k_emb (N, latent) | None)
    -> (N, out_dim)``; only ``hier.edge_index[0]`` is used (the mesh edges). ``k_emb`` (the
    diffusion-step embedding) is added to the node latents after the encoder.
    """

    def __init__(
        self, node_in: int, edge_in: int, out_dim: int, latent: int = 128, blocks: int = 10
    ) -> None:
        super().__init__()
        owner = "MGNProcessor"
        self.node_in = check_int("node_in", owner, node_in, low=1, high=4096)
        self.edge_in = check_int("edge_in", owner, edge_in, low=1, high=4096)
        self.out_dim = check_int("out_dim", owner, out_dim, low=1, high=4096)
        self.latent = check_int("latent", owner, latent, low=1, high=4096)
        blocks = check_int("blocks", owner, blocks, low=1, high=256)
        self.node_enc = mlp(node_in, latent, latent)
        self.edge_enc = mlp(edge_in, latent, latent)
        self.blocks = nn.ModuleList(MGNBlock(latent) for _ in range(blocks))
        self.decoder = mlp(latent, out_dim, latent, norm=False)

    def forward(
        self,
        node_feat: torch.Tensor,
        edge_feat: torch.Tensor,
        hier: Hierarchy,
        k_emb: torch.Tensor | None = None,
    ) -> torch.Tensor:
        _check_inputs(
            "MGNProcessor", node_feat, edge_feat, hier, k_emb, self.node_in, self.edge_in,
            self.latent, self.decoder[0].weight.dtype,
        )  # fmt: skip
        ei = hier.edge_index[0]
        h, e = self.node_enc(node_feat), self.edge_enc(edge_feat)
        if k_emb is not None:
            h = h + k_emb
        for block in self.blocks:
            h, e = block(h, h, e, ei)
        return self.decoder(h)


class _Stack(nn.Module):
    def __init__(self, latent: int, blocks: int) -> None:
        super().__init__()
        self.blocks = nn.ModuleList(MGNBlock(latent) for _ in range(blocks))

    def forward(self, h, e, edge_index):
        for block in self.blocks:
            h, e = block(h, h, e, edge_index)
        return h, e


class AMPN(nn.Module):
    r"""Algebraic-hierarchical Message Passing Network (ROBIN Sec. 3.1, Fig. 2).

    ``forward(node_feat (N, node_in), edge_feat (E, edge_in), hier, k_emb (N, latent) | None)
    -> (N, out_dim)``, with ``hier`` from :func:`robin.build_amg_hierarchy` (``edge_feat`` rows
    follow ``hier.edge_index[0]``). U-pass over ``L = min(levels, hier.num_levels)`` levels:

    * down: level :math:`\ell` stack (``blocks_per_level`` MGN blocks), save the skip
      :math:`s_\ell`, coarse latents initialised from their C-points, one MGN block along the
      P-edges fine :math:`\to` coarse, step embedding added;
    * coarsest stack;
    * up: one MGN block along the P-edges coarse :math:`\to` fine whose residual base is the skip
      :math:`s_\ell`, then the level's up stack; decoder at level 0.

    Coarse intra edges are encoded from :math:`[X_s - X_t, \lVert\cdot\rVert]`, P-edges from
    :math:`[X_j - X_i, \lVert\cdot\rVert, P_{ij}]` (``hier.edge_attr``, ``hier.inter_attr``).
    With ``share_levels`` one down stack, one up stack and one down/up block pair serve every
    level (paper: shared intra-level layers), so the parameter count does not grow with levels.
    ``space_dim`` is the mesh dimension D (sizes the coarse edge features).
    """

    def __init__(
        self,
        node_in: int,
        edge_in: int,
        out_dim: int,
        latent: int = 128,
        blocks_per_level: int = 2,
        levels: int = 3,
        share_levels: bool = True,
        space_dim: int = 2,
    ) -> None:
        super().__init__()
        owner = "AMPN"
        self.node_in = check_int("node_in", owner, node_in, low=1, high=4096)
        self.edge_in = check_int("edge_in", owner, edge_in, low=1, high=4096)
        self.out_dim = check_int("out_dim", owner, out_dim, low=1, high=4096)
        self.latent = check_int("latent", owner, latent, low=1, high=4096)
        m = check_int("blocks_per_level", owner, blocks_per_level, low=1, high=64)
        self.levels = check_int("levels", owner, levels, low=1, high=20)
        self.share_levels = check_bool("share_levels", owner, share_levels)
        d = check_int("space_dim", owner, space_dim, low=1, high=3)
        n_stack = 1 if share_levels else self.levels
        n_pass = min(1, self.levels - 1) if share_levels else self.levels - 1
        self.node_enc = mlp(node_in, latent, latent)
        self.edge_enc = mlp(edge_in, latent, latent)
        self.coarse_edge_enc = mlp(d + 1, latent, latent)
        self.inter_enc = mlp(d + 2, latent, latent)
        self.down_stacks = nn.ModuleList(_Stack(latent, m) for _ in range(n_stack))
        self.up_stacks = nn.ModuleList(_Stack(latent, m) for _ in range(min(n_stack, n_pass)))
        self.down = nn.ModuleList(MGNBlock(latent) for _ in range(n_pass))
        self.up = nn.ModuleList(MGNBlock(latent) for _ in range(n_pass))
        self.decoder = mlp(latent, out_dim, latent, norm=False)

    def _pick(self, mods: nn.ModuleList, level: int) -> nn.Module:
        return mods[0] if self.share_levels else mods[level]

    def forward(
        self,
        node_feat: torch.Tensor,
        edge_feat: torch.Tensor,
        hier: Hierarchy,
        k_emb: torch.Tensor | None = None,
    ) -> torch.Tensor:
        _check_inputs(
            "AMPN", node_feat, edge_feat, hier, k_emb, self.node_in, self.edge_in, self.latent,
            self.decoder[0].weight.dtype,
        )  # fmt: skip
        L = min(self.levels, hier.num_levels)
        h = self.node_enc(node_feat)
        e = self.edge_enc(edge_feat)
        hs, es, inter = [], [], []
        for lvl in range(L):
            if lvl > 0:
                ie = hier.inter_edge_index[lvl - 1]
                a = self.inter_enc(hier.inter_attr[lvl - 1].to(h.dtype))
                coarse = h[hier.cpoints[lvl - 1]]
                coarse, _ = self._pick(self.down, lvl - 1)(h, coarse, a, ie)
                inter.append(a)
                h = coarse
                e = self.coarse_edge_enc(hier.edge_attr[lvl].to(h.dtype))
            if k_emb is not None:
                h = h + k_emb[hier.level_nodes[lvl]]
            h, e = self._pick(self.down_stacks, lvl)(h, e, hier.edge_index[lvl])
            hs.append(h)
            es.append(e)
        for lvl in range(L - 2, -1, -1):
            ie = hier.inter_edge_index[lvl].flip(0)  # coarse -> fine
            h, _ = self._pick(self.up, lvl)(h, hs[lvl], inter[lvl], ie)
            h, es[lvl] = self._pick(self.up_stacks, lvl)(h, es[lvl], hier.edge_index[lvl])
        return self.decoder(h)
