import torch
from torch_geometric.data import Data
from torch_geometric.utils import k_hop_subgraph, to_undirected

from graphtop import build_target_subgraphs, make_csbm, num_candidates
from paperkit.testing import assert_param_error


def hand_graph() -> Data:
    # 0-1, 0-2, 1-3, 2-3, 3-4, 4-5: the 2-hop ball of 0 is {0, 1, 2, 3}; 4 and 5 are outside.
    edges = torch.tensor([[0, 0, 1, 2, 3, 4], [1, 2, 3, 3, 4, 5]])
    return Data(x=torch.randn(6, 3), edge_index=to_undirected(edges), y=torch.arange(6) % 2)


def edge_set(edge_index):
    return sorted(map(tuple, edge_index.T.tolist()))


def test_hand_graph_candidates_weights_and_fixed_edges():
    (sub,) = build_target_subgraphs(hand_graph(), torch.tensor([0]), num_hops=2)
    assert sub.node_idx.tolist() == [0, 1, 2, 3] and sub.target.tolist() == [0]
    cand = sub.edge_index[:, sub.cand_mask]
    # every other node of the ball is a candidate, both directions, interleaved (v,u), (u,v)
    assert cand.T.tolist() == [[0, 1], [1, 0], [0, 2], [2, 0], [0, 3], [3, 0]]
    # initial weights = original adjacency of the target: 0-1 and 0-2 exist, 0-3 does not
    assert sub.edge_weight[sub.cand_mask].tolist() == [1, 1, 1, 1, 0, 0]
    # fixed edges: exactly the non-target edges of the ball (1-3, 2-3 both ways), weight 1
    assert edge_set(sub.edge_index[:, ~sub.cand_mask]) == [(1, 3), (2, 3), (3, 1), (3, 2)]
    assert sub.edge_weight[~sub.cand_mask].eq(1).all()
    assert num_candidates(sub) == sub.num_nodes - 1 == 3
    assert sub.y.tolist() == [0] and sub.center.tolist() == [0]


def test_middle_target_and_one_hop():
    (sub,) = build_target_subgraphs(hand_graph(), [3], num_hops=1)
    assert sub.node_idx.tolist() == [1, 2, 3, 4] and sub.target.tolist() == [2]
    assert sub.edge_weight[sub.cand_mask].tolist() == [1] * 6  # 1, 2, 4 all adjacent to 3
    assert sub.edge_index[:, ~sub.cand_mask].numel() == 0  # 1, 2, 4 share no edge


def test_matches_k_hop_subgraph_on_a_random_graph():
    data = make_csbm(300, 3, 8, 6.0, 0.5, 1.0, seed=3)
    nodes = torch.tensor([0, 17, 299, 17, 150])  # repeats allowed
    subs = build_target_subgraphs(data, nodes, num_hops=2)
    for v, sub in zip(nodes.tolist(), subs, strict=True):
        subset, ei, mapping, _ = k_hop_subgraph(v, 2, data.edge_index, relabel_nodes=True)
        t = int(mapping)
        assert torch.equal(sub.node_idx, subset) and int(sub.target) == t
        assert torch.equal(sub.x, data.x[subset])
        fixed = ei[:, (ei[0] != t) & (ei[1] != t)]
        assert edge_set(sub.edge_index[:, ~sub.cand_mask]) == edge_set(fixed)
        cand = sub.edge_index[:, sub.cand_mask]
        assert torch.equal(cand[0, 0::2], torch.full((subset.numel() - 1,), t))
        assert torch.equal(cand[:, 0::2], cand[:, 1::2].flip(0))  # both directions
        others = [u for u in range(subset.numel()) if u != t]
        assert cand[1, 0::2].tolist() == others
        neighbours = set(ei[1, ei[0] == t].tolist())
        expected = [float(u in neighbours) for u in others]
        assert sub.edge_weight[sub.cand_mask][0::2].tolist() == expected


def test_isolated_target_has_no_candidates():
    data = Data(x=torch.randn(3, 2), edge_index=torch.tensor([[0, 1], [1, 0]]))
    (sub,) = build_target_subgraphs(data, [2])
    assert sub.num_nodes == 1 and sub.edge_index.shape == (2, 0) and num_candidates(sub) == 0


def test_bad_inputs():
    data = hand_graph()
    assert_param_error(build_target_subgraphs, data, [0], num_hops=0, param="num_hops")
    assert_param_error(build_target_subgraphs, data, [], param="nodes")
    assert_param_error(build_target_subgraphs, data, [6], param="nodes")
    bad = Data(x=data.x, edge_index=torch.tensor([[0], [9]]))
    assert_param_error(build_target_subgraphs, bad, [0], param="data")
    assert_param_error(build_target_subgraphs, "graph", [0], param="data", exc=TypeError)


def test_subgraphs_that_would_not_fit_are_refused_before_they_are_built(monkeypatch):
    data = make_csbm(300, 3, 8, 6.0, 0.5, 1.0, seed=3)
    monkeypatch.setenv("PAPERKIT_MAX_BYTES", "100000")  # 100 kB: one ball fits, 300 do not
    assert len(build_target_subgraphs(data, [0])) == 1
    err = assert_param_error(build_target_subgraphs, data, torch.arange(300), param="nodes")
    assert "fit in memory" in str(err)
