import networkx as nx
import pytest
import torch
from torch_geometric.utils import to_networkx

from rsnn import make_csl, make_cycle_count_dataset, sparse_graph
from rsnn.data import CSL_SKIPS


def test_csl_graphs():
    ds = make_csl()
    assert len(ds) == 150
    for d in ds[::7]:
        g = to_networkx(d, to_undirected=True)
        assert d.num_nodes == 41 and all(deg == 4 for _, deg in g.degree())
    # same class: isomorphic copies; different skips: not isomorphic (for 2 vs 3)
    g0, g1 = (to_networkx(ds[i], to_undirected=True) for i in (0, 1))
    assert nx.is_isomorphic(g0, g1) and not torch.equal(ds[0].edge_index, ds[1].edge_index)
    assert not nx.is_isomorphic(g0, to_networkx(ds[15], to_undirected=True))
    assert sorted({int(d.y) for d in ds}) == list(range(len(CSL_SKIPS)))


def test_cycle_rank_targets():
    ds = make_cycle_count_dataset(30, (15, 40), seed=1)
    for d in ds:
        g = to_networkx(d, to_undirected=True)
        assert nx.is_connected(g) and max(dict(g.degree()).values()) <= 4
        assert float(d.y) == len(nx.cycle_basis(g)) == g.number_of_edges() - d.num_nodes + 1
    assert len({float(d.y) for d in ds}) > 2


@pytest.mark.parametrize("family", ["regular3", "er3", "molecule"])
def test_sparse_families_are_connected_and_sparse(family):
    d = sparse_graph(family, 100, seed=2)
    g = to_networkx(d, to_undirected=True)
    assert nx.is_connected(g) and g.number_of_edges() <= 2 * g.number_of_nodes()


def test_nci_molecules_ring_counts_match_rdkit():
    pytest.importorskip("rdkit", reason="load_nci_molecules needs the molecules extra (RDKit)")
    from rsnn.data import ELEMENTS, load_nci_molecules

    ds = load_nci_molecules(30, max_atoms=30, seed=3)
    assert len(ds) == 30
    for d in ds:
        g = to_networkx(d, to_undirected=True)
        assert 5 <= d.num_nodes <= 30 and d.x.shape == (d.num_nodes, len(ELEMENTS) + 1)
        assert torch.equal(d.x.sum(1), torch.ones(d.num_nodes))  # one element per atom
        # the target is the cycle rank of the bond graph: the size of a cycle basis
        assert float(d.y) == len(nx.cycle_basis(g))
    assert any(float(d.y) > 0 for d in ds) and d.x[:, 0].sum() > 0  # rings and carbon occur
