import numpy as np
import pytest
import scipy.sparse as sp
import torch

from paperkit.testing import assert_close, assert_param_error
from robin import build_amg_hierarchy
from robin.data import beam_mesh


def grid(nx, ny, jitter=0.0, seed=0):
    rng = np.random.default_rng(seed)
    x, y = np.meshgrid(np.linspace(0, 10, nx), np.linspace(0, 1, ny), indexing="ij")
    pos = np.stack([x.ravel(), y.ravel()], 1)
    pos += rng.uniform(-jitter, jitter, pos.shape)
    idx = np.arange(nx * ny).reshape(nx, ny)
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    cells = np.concatenate(
        [np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)]
    )
    edges = np.concatenate([cells[:, [0, 1]], cells[:, [1, 2]], cells[:, [2, 0]]]).T
    return pos, edges, cells


@pytest.mark.parametrize("operator", ["laplacian", "stiffness"])
def test_levels_nest_and_connect(operator):
    pos, edges, cells = grid(30, 5, jitter=0.05)
    h = build_amg_hierarchy(pos, edges, levels=3, operator=operator, cells=cells)
    assert h.num_levels == 3
    assert all(a > b for a, b in zip(h.sizes, h.sizes[1:], strict=False))  # strictly decreasing
    for lvl in range(h.num_levels - 1):
        fine, coarse = h.level_nodes[lvl], h.level_nodes[lvl + 1]
        assert set(coarse.tolist()) <= set(fine.tolist())  # C-points are a subset (RS)
        assert (fine[h.cpoints[lvl]] == coarse).all()
        ie = h.inter_edge_index[lvl]
        assert set(ie[0].tolist()) == set(range(h.sizes[lvl]))  # every fine node has a P-edge
        rows = np.abs(h.P[lvl]).sum(axis=1)
        assert (np.asarray(rows).ravel() > 0).all()  # P has no all-zero rows
        assert h.inter_attr[lvl].shape == (ie.shape[1], 4)
        assert_close(h.inter_attr[lvl][:, 3], h.inter_weight[lvl], rtol=0, atol=0)


@pytest.mark.parametrize("nx,ny", [(30, 5), (20, 4)])
def test_galerkin_operators(nx, ny):
    mesh = beam_mesh(nx, ny, seed=0)
    h = mesh.hierarchy
    for lvl in range(h.num_levels - 1):
        galerkin = h.P[lvl].T @ h.A[lvl] @ h.P[lvl]
        assert abs(galerkin - h.A[lvl + 1]).max() < 1e-12 * abs(h.A[lvl]).max()
        assert abs(h.A[lvl + 1] - h.A[lvl + 1].T).max() < 1e-12  # symmetric
    # classical interpolation of the zero-row-sum M-matrix A_0 reproduces constants
    ones = np.ones(h.P[0].shape[1])
    assert np.abs(h.P[0] @ ones - 1).max() < 1e-12
    assert np.abs(h.A[1] @ ones).max() < 1e-10


def test_level0_edges_are_the_mesh_and_coarse_edges_the_operator():
    pos, edges, _ = grid(12, 4)
    h = build_amg_hierarchy(pos, edges, levels=2)
    pairs = {tuple(sorted(e)) for e in edges.T.tolist()}
    got = {tuple(sorted(e)) for e in h.edge_index[0].T.tolist()}
    assert got == pairs and h.edge_index[0].shape[1] == 2 * len(pairs)
    a1 = sp.coo_matrix(h.A[1])
    off = {(i, j) for i, j, v in zip(a1.row, a1.col, a1.data, strict=True) if i != j and v != 0}
    assert {tuple(e) for e in h.edge_index[1].T.tolist()} == off


def test_repeat_is_block_diagonal():
    pos, edges, _ = grid(12, 4)
    h = build_amg_hierarchy(pos, edges, levels=3)
    h3 = h.repeat(3)
    assert h3.sizes == [3 * s for s in h.sizes]
    n1, n0 = h.sizes[1], h.sizes[0]
    assert (h3.inter_edge_index[0][:, -h.inter_edge_index[0].shape[1] :] ==
            h.inter_edge_index[0] + torch.tensor([[2 * n0], [2 * n1]])).all()  # fmt: skip
    assert (h3.level_nodes[1][n1 : 2 * n1] == h.level_nodes[1] + n0).all()


def test_disconnected_mesh_and_mismatches_raise():
    pos, edges, _ = grid(6, 3)
    two = np.concatenate([pos, pos + 20])
    both = np.concatenate([edges, edges + len(pos)], axis=1)
    assert_param_error(build_amg_hierarchy, two, both, param="edges")
    assert_param_error(build_amg_hierarchy, pos[:-1], edges, param="edges")  # index out of range
    assert_param_error(build_amg_hierarchy, np.concatenate([pos, pos[:1]]), edges, param="pos")
    assert_param_error(build_amg_hierarchy, pos, edges, levels=0, param="levels")
    assert_param_error(build_amg_hierarchy, pos.astype(int), edges, param="pos", exc=TypeError)
    assert_param_error(build_amg_hierarchy, pos, edges, operator="stiffness", param="cells")
