import networkx as nx
import pytest
import torch
from torch_geometric.data import Data

from rsnn import SearchBatch, anonymize, random_dfs, random_walks, serialize
from rsnn.data import graph_data


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def featured_graph(n=9, seed=0):
    g = nx.random_regular_graph(4, n + 1, seed=seed)
    g.remove_node(n)  # ids 0..n-1, irregular degrees
    d = graph_data(g)
    torch.manual_seed(seed)
    d.x = torch.randn(n, 3)
    # symmetric edge features: e(u, v) = e(v, u) = f(min, max)
    u, v = d.edge_index
    d.edge_attr = torch.stack([torch.minimum(u, v).float(), torch.maximum(u, v).float()], 1) * 0.1
    return d


def relabel(d: Data, perm: torch.Tensor) -> Data:
    """The image of d under node v -> perm[v] (edge columns kept in the same order)."""
    x = torch.empty_like(d.x)
    x[perm] = d.x
    return Data(x=x, edge_index=perm[d.edge_index], edge_attr=d.edge_attr, num_nodes=d.num_nodes)


def relabel_searches(s: SearchBatch, perm: torch.Tensor) -> SearchBatch:
    parent = torch.full_like(s.parent, -1)
    mapped = torch.where(s.parent >= 0, perm[s.parent.clamp(min=0)], -1)
    parent[:, perm] = mapped
    return SearchBatch(
        order=perm[s.order],
        parent=parent,
        tree_edges=[perm[t] for t in s.tree_edges],
        euler=perm[s.euler],
        euler_flag=s.euler_flag,
    )


def test_anonymize_by_first_visit():
    nodes = torch.tensor([[7, 3, 7, 5, 3, -1], [2, 2, 9, 1, 9, 2]])
    expected = torch.tensor([[1, 2, 1, 3, 2, 0], [1, 1, 2, 3, 2, 1]])
    assert torch.equal(anonymize(nodes), expected)


def test_euler_tokens_by_hand():
    # path 0 - 1 - 2 with edge features, a search from 1 that goes to 2 first
    d = Data(
        x=torch.tensor([[10.0], [11.0], [12.0]]),
        edge_index=torch.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]),
        edge_attr=torch.tensor([[1.0], [2.0], [3.0], [4.0]]),
        num_nodes=3,
    )
    s = SearchBatch(
        order=torch.tensor([[1, 2, 0]]),
        parent=torch.tensor([[1, -1, 1]]),
        tree_edges=[torch.tensor([[1, 1], [2, 0]])],
        euler=torch.tensor([[1, 2, 1, 0, 1]]),
        euler_flag=torch.tensor([[2, 0, 1, 0, 1]], dtype=torch.int8),
    )
    seq = serialize(d, s, "euler")
    x, e, f = seq.tokens[0, :, 0], seq.tokens[0, :, 1], seq.tokens[0, :, 2:].argmax(-1)
    assert x.tolist() == [11, 12, 11, 10, 11]
    assert e.tolist() == [0, 3, 4, 2, 1]  # the feature of the edge column w_{t-1} -> w_t
    assert f.tolist() == [2, 0, 1, 0, 1]
    assert seq.anon[0].tolist() == [1, 2, 1, 3, 1]
    assert seq.anon_prev[0].tolist() == [0, 1, 2, 1, 3]
    pre = serialize(d, s, "preorder")
    assert pre.node_ids[0].tolist() == [1, 2, 0]
    assert pre.tokens[0, :, 1].tolist() == [0, 3, 2]  # e(parent, v)
    assert pre.anon[0].tolist() == [1, 2, 3] and pre.anon_prev[0].tolist() == [0, 1, 1]
    assert not pre.pad_mask.any()


def test_tokens_depend_on_ids_only_through_anon():
    # tokens depend on ids only through anon: relabel the graph and map the searches through
    # the same permutation
    d = featured_graph()
    s = random_dfs(d.edge_index, 9, 6, gen(1))
    perm = torch.randperm(9, generator=gen(2))
    d2, s2 = relabel(d, perm), relabel_searches(s, perm)
    for mode in ("euler", "preorder"):
        a, b = serialize(d, s, mode), serialize(d2, s2, mode)
        assert torch.equal(a.tokens, b.tokens)
        assert torch.equal(a.anon, b.anon) and torch.equal(a.anon_prev, b.anon_prev)
        assert torch.equal(perm[a.node_ids], b.node_ids)
    w = random_walks(d.edge_index, 9, 4, 12, generator=gen(3))
    a, b = serialize(d, w, "walk"), serialize(d2, perm[w], "walk")
    assert torch.equal(a.tokens, b.tokens) and torch.equal(a.anon, b.anon)


def test_raw_ids_would_break_the_relabelling_check():
    # the check above can fail: node ids as features differ after relabelling
    d = featured_graph()
    d.x = torch.arange(9.0).unsqueeze(1)
    s = random_dfs(d.edge_index, 9, 2, gen(1))
    perm = torch.randperm(9, generator=gen(2))
    d2 = Data(x=d.x, edge_index=perm[d.edge_index], edge_attr=d.edge_attr, num_nodes=9)
    a, b = serialize(d, s, "euler"), serialize(d2, relabel_searches(s, perm), "euler")
    assert not torch.equal(a.tokens, b.tokens)


def test_walk_flags_mark_revisits():
    d = graph_data(nx.cycle_graph(4))
    w = torch.tensor([[0, 1, 0, 3, 2, 1]])
    seq = serialize(d, w, "walk")
    assert seq.tokens[0, :, -3:].argmax(-1).tolist() == [2, 0, 1, 0, 0, 1]
    assert seq.anon[0].tolist() == [1, 2, 1, 3, 4, 2]


def test_shapes_without_features():
    d = graph_data(nx.petersen_graph())
    d.x = None
    s = random_dfs(d.edge_index, 10, 3, gen(4))
    seq = serialize(d, s, "euler")
    assert seq.tokens.shape == (3, 19, 3) and seq.node_ids.shape == (3, 19)


def test_window_features_show_non_tree_edges_of_a_search():
    """On a 4-cycle every Euler tour leaves the closing edge out of the tree; the adjacency
    feature of the window marks it (CRaWl's structural features, Tönshoff et al., 2023)."""
    from rsnn.tokens import window_features

    square = torch.tensor([[0, 1, 1, 2, 2, 3, 3, 0], [1, 0, 2, 1, 3, 2, 0, 3]])
    tour = torch.tensor([[0, 1, 2, 3, 2, 1, 0, -1]])  # DFS 0-1-2-3, back to the root, padding
    f = window_features(tour, square, 3)
    same, adj = f[0, :, :3], f[0, :, 3:]
    assert adj[3, 2] == 1  # token 3 (node 3) is adjacent to token 0 (node 0): the non-tree edge
    assert same[4, 1] == 1 and same[6, 2] == 0  # node 2 again two steps later; 0 vs 2: no
    assert f[0, 0].sum() == 0 and f[0, -1].sum() == 0  # nothing before the start, nothing at pad
    with pytest.raises(ValueError, match="window"):
        window_features(tour, square, -1)


def test_window_changes_the_token_width_only():
    """window = s adds 2s inputs to the token projection; the forward pass still runs."""
    from rsnn import RSNN, make_csl

    g = make_csl(num_per_class=1)[0]
    plain, wide = (
        RSNN(g.x.size(1), hidden=8, out_dim=3, seq_model="cnn", window=w) for w in (0, 4)
    )
    assert wide.token_proj.in_features == plain.token_proj.in_features + 8
    assert wide(g, 2).shape == (1, 3)
