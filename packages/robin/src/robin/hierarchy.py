r"""The algebraic multigrid hierarchy of a mesh (ROBIN, Sec. 3.1 "AMPN").

Level 0 is the mesh. Its operator :math:`A_0` is either the weighted graph Laplacian with
:math:`w_{ij} = 1/\lVert X_i - X_j\rVert` or the scalar P1 Laplace stiffness matrix of the
triangles (one row per node). Classical Ruge-Stüben coarsening (pyamg's ``ruge_stuben_solver``,
classical strength with :math:`\theta = 0.25`) splits each level into C- and F-points; the
C-points are the next level's nodes (a subset, so they keep their rest positions), the classical
interpolation :math:`P_\ell \in \mathbb{R}^{n_\ell \times n_{\ell+1}}` links the two levels and the
Galerkin product :math:`A_{\ell+1} = P_\ell^\top A_\ell P_\ell` is the coarse operator.
Level-0 edges are the mesh edges (both directions); intra-level edges at :math:`\ell + 1` are
the off-diagonal non-zeros of :math:`A_{\ell+1}`; inter-level edges are
the non-zeros of :math:`P_\ell` (fine :math:`i` - coarse :math:`j`), with features
:math:`[X_j - X_i, \lVert X_j - X_i\rVert, P_{ij}]`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp
import torch

from paperkit import check_array, check_choice, check_int, check_real, param_error
from paperkit.checks import describe

__all__ = ["Hierarchy", "build_amg_hierarchy", "mesh_operator", "undirected_edges"]

OWNER = "build_amg_hierarchy"
#: pyamg stops coarsening below this many nodes.
MAX_COARSE = 16


def undirected_edges(pos: np.ndarray, edges: np.ndarray, owner: str = OWNER) -> np.ndarray:
    """Check ``pos`` (N, D) float and ``edges`` (2, E) int; return the unique pairs ``i < j``.

    Refuses integer positions (TypeError), self-loops, indices outside ``[0, N)``, nodes that are
    in no edge, and a mesh that is not connected (ValueError naming the argument).
    """
    pos = check_array("pos", owner, pos, ndim=2, kind="float")
    if pos.shape[0] < 2 or not 1 <= pos.shape[1] <= 3:
        raise param_error("pos", owner, "of shape (N, D) with N >= 2 and D in 1..3", describe(pos))
    edges = check_array("edges", owner, edges, shape=(2, None), kind="int")
    n = pos.shape[0]
    if edges.min() < 0 or edges.max() >= n:
        raise param_error(
            "edges", owner, f"node indices in [0, {n}) matching the rows of 'pos'", describe(edges)
        )
    if np.any(edges[0] == edges[1]):
        raise param_error("edges", owner, "free of self-loops", describe(edges))
    pairs = np.unique(np.sort(edges.T.astype(np.int64), axis=1), axis=0)
    if np.unique(pairs).size != n:
        raise param_error(
            "pos",
            owner,
            f"one row per node of 'edges' (every node in an edge); 'edges' touch "
            f"{np.unique(pairs).size} nodes",
            describe(pos),
        )
    graph = sp.coo_matrix((np.ones(len(pairs)), (pairs[:, 0], pairs[:, 1])), shape=(n, n))
    count, _ = sp.csgraph.connected_components(graph, directed=False)
    if count != 1:
        raise param_error(
            "edges", owner, "a connected mesh", describe(f"a mesh of {count} components")
        )
    return pairs


def mesh_operator(
    pos: np.ndarray, pairs: np.ndarray, operator: str = "laplacian", cells: np.ndarray | None = None
) -> sp.csr_matrix:
    r"""The level-0 operator :math:`A_0` (N x N, symmetric, zero row sums).

    ``"laplacian"``: :math:`A_{ij} = -1/\lVert X_i - X_j\rVert` on edges, :math:`A_{ii} = -\sum_j
    A_{ij}`. ``"stiffness"``: the P1 Laplace stiffness :math:`\int \nabla\phi_i\cdot\nabla\phi_j`
    assembled over the triangles ``cells`` (2-D).
    """
    n = pos.shape[0]
    if operator == "laplacian":
        w = 1.0 / np.linalg.norm(pos[pairs[:, 1]] - pos[pairs[:, 0]], axis=1)
        rows = np.concatenate([pairs[:, 0], pairs[:, 1]])
        cols = np.concatenate([pairs[:, 1], pairs[:, 0]])
        off = sp.coo_matrix((-np.concatenate([w, w]), (rows, cols)), shape=(n, n)).tocsr()
    else:
        p = pos[cells]  # (C, 3, 2)
        e = np.stack([p[:, 2] - p[:, 1], p[:, 0] - p[:, 2], p[:, 1] - p[:, 0]], axis=1)
        area = 0.5 * np.abs(e[:, 1, 0] * e[:, 2, 1] - e[:, 1, 1] * e[:, 2, 0])
        local = np.einsum("cad,cbd->cab", e, e) / (4 * area[:, None, None])
        rows = np.repeat(cells, 3, axis=1).ravel()
        cols = np.tile(cells, (1, 3)).ravel()
        full = sp.coo_matrix((local.ravel(), (rows, cols)), shape=(n, n)).tocsr()
        off = full - sp.diags(full.diagonal())
    off.eliminate_zeros()
    return (off - sp.diags(np.asarray(off.sum(axis=1)).ravel())).tocsr()


def _directed(a: sp.spmatrix) -> np.ndarray:
    coo = sp.coo_matrix(a)
    keep = (coo.row != coo.col) & (coo.data != 0)
    return np.stack([coo.row[keep], coo.col[keep]]).astype(np.int64)


def _long(x: np.ndarray) -> torch.Tensor:
    return torch.as_tensor(np.ascontiguousarray(x), dtype=torch.long)


def _rel(pos: torch.Tensor, src: torch.Tensor, dst: torch.Tensor) -> torch.Tensor:
    d = pos[src] - pos[dst]
    return torch.cat([d, d.norm(dim=-1, keepdim=True)], dim=-1)


@dataclass
class Hierarchy:
    r"""The AMG levels of a mesh, as tensors for message passing (all indices level-local).

    Attributes:
        pos: (N, D) rest positions of the level-0 nodes.
        level_nodes: per level, the level-0 indices of its nodes (level 0: ``arange(N)``).
        cpoints: per transition :math:`\ell \to \ell+1`, the level-:math:`\ell` indices of the
            C-points (the nodes of level :math:`\ell+1`, in order).
        edge_index: per level, the directed intra-level edges (2, E_l) ``[source, target]``.
        edge_attr: per level, :math:`[X_s - X_t, \lVert X_s - X_t\rVert]` of the intra edges.
        P: per transition, the interpolation :math:`P_\ell` (scipy CSR, n_l x n_{l+1}).
        A: per level, the operator :math:`A_\ell` (scipy CSR).
        inter_edge_index: per transition, ``[fine i, coarse j]`` for every non-zero of P.
        inter_weight: per transition, the values :math:`P_{ij}`.
        inter_attr: per transition, :math:`[X_j - X_i, \lVert X_j - X_i\rVert, P_{ij}]`.
    """

    pos: torch.Tensor
    level_nodes: list[torch.Tensor]
    cpoints: list[torch.Tensor]
    edge_index: list[torch.Tensor]
    edge_attr: list[torch.Tensor]
    P: list[sp.csr_matrix]
    A: list[sp.csr_matrix]
    inter_edge_index: list[torch.Tensor]
    inter_weight: list[torch.Tensor]
    inter_attr: list[torch.Tensor]
    copies: int = 1
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def num_levels(self) -> int:
        return len(self.level_nodes)

    @property
    def sizes(self) -> list[int]:
        """Nodes per level."""
        return [int(n.numel()) for n in self.level_nodes]

    def repeat(self, copies: int) -> Hierarchy:
        """The hierarchy of ``copies`` disjoint copies of the mesh (a block-diagonal batch, as
        PyG's ``Batch`` stacks graphs); cached per ``copies``."""
        copies = check_int("copies", "Hierarchy.repeat", copies, low=1)
        if copies == 1:
            return self
        if copies not in self._cache:
            sizes = self.sizes
            n0 = sizes[0]

            def stack(t: torch.Tensor, shift) -> torch.Tensor:
                return torch.cat([t + shift * b for b in range(copies)], dim=-1)

            inter = [
                torch.cat(
                    [e + torch.tensor([[sizes[i] * b], [sizes[i + 1] * b]]) for b in range(copies)],
                    dim=1,
                )
                for i, e in enumerate(self.inter_edge_index)
            ]
            eye = sp.identity(copies, format="csr")
            self._cache[copies] = Hierarchy(
                pos=self.pos.repeat(copies, 1),
                level_nodes=[stack(v, n0) for v in self.level_nodes],
                cpoints=[stack(c, sizes[i]) for i, c in enumerate(self.cpoints)],
                edge_index=[stack(e, sizes[i]) for i, e in enumerate(self.edge_index)],
                edge_attr=[a.repeat(copies, 1) for a in self.edge_attr],
                P=[sp.kron(eye, p, format="csr") for p in self.P],
                A=[sp.kron(eye, a, format="csr") for a in self.A],
                inter_edge_index=inter,
                inter_weight=[w.repeat(copies) for w in self.inter_weight],
                inter_attr=[a.repeat(copies, 1) for a in self.inter_attr],
                copies=self.copies * copies,
            )
        return self._cache[copies]

    def to(self, device: torch.device | str) -> Hierarchy:
        """The same hierarchy with its tensors on ``device`` (scipy matrices stay on the host);
        cached per device."""
        device = torch.device(device)
        if device == self.pos.device:
            return self
        key = ("to", str(device))
        if key in self._cache:
            return self._cache[key]

        def move(x):
            return [t.to(device) for t in x]

        self._cache[key] = Hierarchy(
            self.pos.to(device),
            move(self.level_nodes),
            move(self.cpoints),
            move(self.edge_index),
            move(self.edge_attr),
            self.P,
            self.A,
            move(self.inter_edge_index),
            move(self.inter_weight),
            move(self.inter_attr),
            self.copies,
        )
        return self._cache[key]


def build_amg_hierarchy(
    pos: np.ndarray,
    edges: np.ndarray,
    levels: int = 3,
    theta: float = 0.25,
    operator: str = "laplacian",
    cells: np.ndarray | None = None,
) -> Hierarchy:
    r"""Ruge-Stüben AMG hierarchy of a mesh (ROBIN Sec. 3.1; module docstring for the algebra).

    Args:
        pos: (N, D) floating rest positions.
        edges: (2, E) integer mesh edges (either or both directions); the mesh must be connected.
        levels: number of levels L >= 1 (level 0 is the mesh); coarsening stops earlier when a
            level has fewer than 16 nodes, so the result may have fewer levels.
        theta: classical strength threshold (0.25 in the paper).
        operator: ``"laplacian"`` (inverse-length weights) or ``"stiffness"`` (P1 Laplace
            stiffness of ``cells``).
        cells: (C, 3) triangles, needed for ``operator="stiffness"`` only.
    """
    import pyamg

    pairs = undirected_edges(pos, edges)
    pos = np.asarray(pos, dtype=np.float64)
    levels = check_int("levels", OWNER, levels, low=1, high=20)
    theta = check_real("theta", OWNER, theta, low=0, high=1, low_open=True, high_open=True)
    operator = check_choice("operator", OWNER, operator, ("laplacian", "stiffness"))
    if operator == "stiffness":
        if cells is None or pos.shape[1] != 2:
            raise param_error(
                "cells", OWNER, "(C, 3) triangles of a 2-D mesh for operator='stiffness'", cells
            )
        cells = check_array("cells", OWNER, cells, shape=(None, 3), kind="int")
        if cells.min() < 0 or cells.max() >= pos.shape[0]:
            raise param_error("cells", OWNER, "node indices of 'pos'", describe(cells))
    a0 = mesh_operator(pos, pairs, operator, cells)
    ml = pyamg.ruge_stuben_solver(
        a0,
        strength=("classical", {"theta": theta}),
        max_levels=levels,
        max_coarse=MAX_COARSE,
        keep=True,
    )
    pos_t = torch.as_tensor(pos, dtype=torch.float32)
    n = pos.shape[0]
    level_nodes = [torch.arange(n)]
    cpoints, edge_index, edge_attr, P, A = [], [], [], [], []
    inter_ei, inter_w, inter_attr = [], [], []
    for i, lvl in enumerate(ml.levels):
        A.append(sp.csr_matrix(lvl.A))
        e = _long(np.concatenate([pairs.T, pairs.T[::-1]], axis=1) if i == 0 else _directed(lvl.A))
        here = pos_t[level_nodes[i]]
        edge_index.append(e)
        edge_attr.append(_rel(here, e[0], e[1]))
        if i == len(ml.levels) - 1:
            break
        c = _long(np.flatnonzero(lvl.splitting))
        cpoints.append(c)
        level_nodes.append(level_nodes[i][c])
        p = sp.csr_matrix(lvl.P)
        P.append(p)
        coo = p.tocoo()
        ie = _long(np.stack([coo.row, coo.col]))
        inter_ei.append(ie)
        w = torch.as_tensor(coo.data, dtype=torch.float32)
        inter_w.append(w)
        coarse = pos_t[level_nodes[i + 1]]
        d = coarse[ie[1]] - here[ie[0]]
        inter_attr.append(torch.cat([d, d.norm(dim=-1, keepdim=True), w[:, None]], dim=-1))
    return Hierarchy(
        pos_t, level_nodes, cpoints, edge_index, edge_attr, P, A, inter_ei, inter_w, inter_attr
    )
