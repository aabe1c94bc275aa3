import copy

import numpy as np
import pyamg
import pytest
import torch

from paperkit.testing import assert_close, gradcheck64
from robin import AMPN, MGNProcessor, edge_dim, node_dim
from robin.hierarchy import Hierarchy
from robin.layers import MGNBlock


def _inputs(hier, seed=0, latent=16):
    g = torch.Generator().manual_seed(seed)
    n, e = hier.sizes[0], hier.edge_index[0].shape[1]
    return (
        torch.randn(n, node_dim(2), generator=g),
        torch.randn(e, edge_dim(2), generator=g),
        torch.randn(n, latent, generator=g),
    )


def _permute(h: Hierarchy, perm: torch.Tensor) -> Hierarchy:
    """Relabel level-0 node i as position inv[i] (new node p is old node perm[p]); the coarse
    levels keep their numbering."""
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(len(perm))
    ie0 = h.inter_edge_index[0].clone()
    ie0[0] = inv[ie0[0]]
    return Hierarchy(
        pos=h.pos[perm],
        level_nodes=[torch.arange(len(perm))] + [inv[v] for v in h.level_nodes[1:]],
        cpoints=[inv[h.cpoints[0]], *h.cpoints[1:]],
        edge_index=[inv[h.edge_index[0]], *h.edge_index[1:]],
        edge_attr=h.edge_attr,
        P=h.P,
        A=h.A,
        inter_edge_index=[ie0, *h.inter_edge_index[1:]],
        inter_weight=h.inter_weight,
        inter_attr=h.inter_attr,
    )


@pytest.mark.parametrize("share", [True, False])
def test_ampn_is_permutation_equivariant(beam, share):
    hier = beam[0].mesh.hierarchy
    torch.manual_seed(0)
    net = AMPN(node_dim(2), edge_dim(2), 2, latent=16, blocks_per_level=1, levels=3,
               share_levels=share).double()  # fmt: skip
    x, e, k = (t.double() for t in _inputs(hier))
    perm = torch.randperm(hier.sizes[0], generator=torch.Generator().manual_seed(1))
    inv = torch.empty_like(perm)
    inv[perm] = torch.arange(len(perm))
    hp = _permute(hier, perm)
    # the same directed edges, listed in the same order, carry the same features
    out = net(x, e, hier, k)
    out_p = net(x[perm], e, hp, k[perm])
    assert_close(out_p, out[perm], rtol=1e-10, atol=1e-12)
    assert not torch.allclose(out[perm], out)  # the check would catch a non-equivariant net


def test_shared_levels_keep_the_parameter_count():
    def count(levels, share):
        net = AMPN(9, 6, 2, latent=16, blocks_per_level=2, levels=levels, share_levels=share)
        return sum(p.numel() for p in net.parameters())

    assert count(2, True) == count(5, True)
    unshared = [count(lv, False) for lv in (2, 3, 4, 5)]
    steps = np.diff(unshared)
    assert (steps > 0).all() and len(set(steps.tolist())) == 1  # linear growth in levels


def test_levels_are_used(beam):
    """Coarse levels change the output: the U-pass reaches them (no silent flat network)."""
    hier = beam[0].mesh.hierarchy
    torch.manual_seed(0)
    net3 = AMPN(node_dim(2), edge_dim(2), 2, latent=16, blocks_per_level=1, levels=3)
    net1 = copy.deepcopy(net3)
    net1.levels = 1
    x, e, k = _inputs(hier)
    assert (net3(x, e, hier, k) - net1(x, e, hier, k)).abs().max() > 1e-4


def _chain_hierarchy():
    """A 10-node path and its two-level RS split (pyamg directly, coarsest 2 nodes allowed)."""
    n = 10
    A = pyamg.gallery.poisson((n,), format="csr")
    ml = pyamg.ruge_stuben_solver(A, max_levels=2, max_coarse=2, keep=True)
    P = ml.levels[0].P.tocoo()
    return n, ml.levels[1].A.shape[0], torch.tensor(np.stack([P.row, P.col]), dtype=torch.long)


def test_gradcheck_mgn_block():
    torch.manual_seed(0)
    block = MGNBlock(4).double()
    src = torch.arange(9)
    ei = torch.cat([torch.stack([src, src + 1]), torch.stack([src + 1, src])], dim=1)
    h, e = torch.randn(10, 4), torch.randn(ei.shape[1], 4)
    assert gradcheck64(lambda h, e: block(h, h, e, ei), h, e)


def test_gradcheck_inter_level_down_up():
    n, nc, ie = _chain_hierarchy()
    assert 1 < nc < n
    torch.manual_seed(0)
    down, up = MGNBlock(4).double(), MGNBlock(4).double()

    def pass_(h, a):
        coarse = down(h, h[:nc], a, ie)[0]  # fine -> coarse along the P-edges
        return up(coarse, h, a, ie.flip(0))[0]  # coarse -> fine, residual on the skip h

    assert gradcheck64(pass_, torch.randn(n, 4), torch.randn(ie.shape[1], 4))


def test_flat_processor_and_autocast(beam):
    hier = beam[0].mesh.hierarchy
    x, e, k = _inputs(hier, latent=8)
    for net in (MGNProcessor(node_dim(2), edge_dim(2), 2, latent=8, blocks=2),
                AMPN(node_dim(2), edge_dim(2), 2, latent=8, blocks_per_level=1)):  # fmt: skip
        ref = net(x, e, hier, k)
        with torch.autocast("cpu", dtype=torch.bfloat16):
            low = net(x, e, hier, k)
        assert low.shape == ref.shape and torch.isfinite(low).all()
        assert_close(low.float(), ref, rtol=0.1, atol=0.1)  # bf16 has 8 mantissa bits
