import itertools
import math

import networkx as nx
import numpy as np
import pytest
import torch
from scipy import stats

from rsnn import coverage, random_dfs, random_walks
from rsnn.data import graph_data
from rsnn.graph import to_csr
from rsnn.sampling import _dfs_kernel, sample_searches


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


def two_components():
    g = nx.disjoint_union(nx.random_regular_graph(3, 12, seed=1), nx.cycle_graph(5))
    g.add_node(17)  # an isolated node: a third component
    return g, graph_data(g)


GRAPHS = {
    "regular3": nx.random_regular_graph(3, 30, seed=0),
    "er": nx.convert_node_labels_to_integers(
        max(
            (
                nx.gnp_random_graph(40, 0.1, seed=2).subgraph(c)
                for c in nx.connected_components(nx.gnp_random_graph(40, 0.1, seed=2))
            ),
            key=len,
        )
    ),
    "petersen": nx.petersen_graph(),
    "forest": two_components()[0],
}


@pytest.mark.parametrize("name", GRAPHS)
def test_search_is_a_spanning_forest(name):
    g = GRAPHS[name]
    d = graph_data(g)
    n, c = g.number_of_nodes(), nx.number_connected_components(g)
    s = random_dfs(d.edge_index, n, 20, gen())
    for j in range(20):
        assert sorted(s.order[j].tolist()) == list(range(n))  # a permutation of all nodes
        par = s.parent[j]
        assert int((par < 0).sum()) == c  # one root per component
        for v in range(n):
            if par[v] >= 0:
                assert g.has_edge(v, int(par[v]))
        te = s.tree_edges[j]
        assert te.shape == (2, n - c)
        forest = nx.Graph(te.t().tolist())
        forest.add_nodes_from(range(n))
        assert nx.is_forest(forest) and nx.number_connected_components(forest) == c
        # roots precede their trees in the preorder, parents precede children
        pos = torch.empty(n, dtype=torch.long)
        pos[s.order[j]] = torch.arange(n)
        assert bool((pos[te[0]] < pos[te[1]]).all())


@pytest.mark.parametrize("name", GRAPHS)
def test_euler_walk(name):
    g = GRAPHS[name]
    d = graph_data(g)
    n, c = g.number_of_nodes(), nx.number_connected_components(g)
    s = random_dfs(d.edge_index, n, 10, gen(1))
    assert s.euler.shape == (10, 2 * (n - c) + c)
    for j in range(10):
        w, f = s.euler[j].tolist(), s.euler_flag[j].tolist()
        assert f[0] == 2 and f.count(2) == c
        for t in range(1, len(w)):
            assert f[t] == 2 or g.has_edge(w[t - 1], w[t])
        down = {(w[t - 1], w[t]) for t in range(1, len(w)) if f[t] == 0}
        up = [(w[t], w[t - 1]) for t in range(1, len(w)) if f[t] == 1]
        tree = {tuple(e) for e in s.tree_edges[j].t().tolist()}
        assert down == tree and sorted(up) == sorted(tree)  # each tree edge down once, up once
        # the descents in order are the preorder
        assert [w[t] for t in range(len(w)) if f[t] in (0, 2)] == s.order[j].tolist()


def test_dfs_has_no_cross_edges():
    # undirected DFS: every non-tree edge joins an ancestor and a descendant (not BFS, not a
    # random spanning tree)
    g = GRAPHS["regular3"]
    d = graph_data(g)
    s = random_dfs(d.edge_index, 30, 50, gen(2))
    for j in range(50):
        tree = nx.DiGraph(s.tree_edges[j].t().tolist())
        anc = {v: nx.ancestors(tree, v) for v in g}
        for u, v in g.edges():
            assert u in anc[v] or v in anc[u]


def test_bfs_tree_would_fail_the_ancestor_check():
    # the check above can fail: a BFS tree of the Petersen graph has cross edges
    g = nx.petersen_graph()
    tree = nx.bfs_tree(g, 0)
    anc = {v: nx.ancestors(tree, v) for v in g}
    assert any(u not in anc[v] and v not in anc[u] for u, v in g.edges())


def test_neighbour_order_is_uniform_on_a_star():
    g = nx.star_graph(3)  # centre 0, leaves 1, 2, 3
    d = graph_data(g)
    s = random_dfs(d.edge_index, 4, 8000, gen(3))
    from_centre = s.order[s.order[:, 0] == 0][:, 1:]
    counts = dict.fromkeys(itertools.permutations((1, 2, 3)), 0)
    for row in from_centre.tolist():
        counts[tuple(row)] += 1
    assert sum(counts.values()) == len(from_centre) > 1500  # start uniform: about 8000 / 4
    assert stats.chisquare(list(counts.values())).pvalue > 1e-3
    starts = torch.bincount(s.order[:, 0], minlength=4)
    assert stats.chisquare(starts.tolist()).pvalue > 1e-3  # the start node is uniform


def test_a_biased_order_fails_the_star_check():
    # a leaf order favoured 1.5 : 1 over the others, at the sample size of the test above
    counts = np.array([1.5, 1, 1, 1, 1, 1]) / 6.5 * 2000
    assert stats.chisquare(counts).pvalue < 1e-3


def test_one_search_covers_a_tree():
    for seed in range(5):
        tree = nx.random_labeled_tree(50, seed=seed)
        d = graph_data(tree)
        cov = coverage(d.edge_index, 50, random_dfs(d.edge_index, 50, 1, gen(seed)))
        assert cov["edge_frac"] == 1.0 and cov["node_frac"] == 1.0
        assert cov["uncovered_edges"].shape == (2, 0)


def test_path_from_an_end_is_deterministic():
    d = graph_data(nx.path_graph(7))
    s = random_dfs(d.edge_index, 7, 200, gen(4))
    from_0 = s.order[s.order[:, 0] == 0]
    from_6 = s.order[s.order[:, 0] == 6]
    assert len(from_0) > 10 and len(from_6) > 10
    assert (from_0 == torch.arange(7)).all() and (from_6 == torch.arange(6, -1, -1)).all()


def test_complete_graph_edge_probability():
    # a DFS of K_n is a uniformly random Hamiltonian path: each edge is on it with prob 2/n
    n, m = 8, 20_000
    d = graph_data(nx.complete_graph(n))
    s = random_dfs(d.edge_index, n, m, gen(5))
    te = torch.stack(s.tree_edges)  # (m, 2, n-1)
    lo, hi = te.min(dim=1).values, te.max(dim=1).values
    counts = torch.bincount((lo * n + hi).reshape(-1), minlength=n * n).reshape(n, n)
    p = counts[torch.triu_indices(n, n, 1).unbind()].double() / m
    assert float((p - 2 / n).abs().max()) < 0.01
    assert s.tree_edges[0].shape == (2, n - 1) and (s.parent >= 0).sum(1).eq(n - 1).all()


def test_uncovered_edges_listed_u_lt_v():
    d = graph_data(nx.cycle_graph(6))
    s = random_dfs(d.edge_index, 6, 1, gen(6))
    cov = coverage(d.edge_index, 6, s)
    assert cov["edge_frac"] == pytest.approx(5 / 6)
    ((u, v),) = cov["uncovered_edges"].t().tolist()
    assert u < v and (u, v) not in {tuple(sorted(e)) for e in s.tree_edges[0].t().tolist()}


def test_kernel_matches_its_python_reference():
    g, d = two_components()
    csr = to_csr(d.edge_index.numpy(), 18)
    rng = np.random.default_rng(0)
    ek, roots = rng.random((3, len(csr.indices))), np.argsort(rng.random((3, 18)), axis=1)
    ptr = np.array([0, 2 * (18 - 3) + 3])
    compiled = _dfs_kernel(csr.indptr, csr.indices, csr.node_ptr, ptr, ek, roots)
    reference = _dfs_kernel.py_func(csr.indptr, csr.indices, csr.node_ptr, ptr, ek, roots)
    for a, b in zip(compiled, reference, strict=True):
        np.testing.assert_array_equal(a, b)


def test_batched_searches_stay_in_their_graph():
    graphs = [nx.cycle_graph(5), nx.petersen_graph(), nx.path_graph(3)]
    union = nx.disjoint_union_all(graphs)
    d = graph_data(union)
    ptr = np.array([0, 5, 15, 18])
    csr = to_csr(d.edge_index.numpy(), 18, ptr)
    order, parent, euler, flag, eptr = sample_searches(csr, 4, gen(7))
    assert eptr.tolist() == [0, 9, 28, 33]
    for g in range(3):
        seg = order[:, ptr[g] : ptr[g + 1]]
        assert ((seg >= ptr[g]) & (seg < ptr[g + 1])).all()
        assert (flag[:, eptr[g]] == 2).all() and (flag[:, eptr[g] + 1 : eptr[g + 1]] != 2).all()


def test_seeded_determinism():
    d = graph_data(GRAPHS["petersen"])
    a = random_dfs(d.edge_index, 10, 5, gen(11))
    b = random_dfs(d.edge_index, 10, 5, gen(11))
    c = random_dfs(d.edge_index, 10, 5, gen(12))
    assert torch.equal(a.euler, b.euler) and torch.equal(a.parent, b.parent)
    assert not torch.equal(a.euler, c.euler)
    w1 = random_walks(d.edge_index, 10, 5, 9, generator=gen(11))
    assert torch.equal(w1, random_walks(d.edge_index, 10, 5, 9, generator=gen(11)))


def test_disconnected_graph_gives_a_covering_forest():
    g, d = two_components()
    s = random_dfs(d.edge_index, 18, 30, gen(8))
    assert coverage(d.edge_index, 18, s)["node_frac"] == 1.0
    assert ((s.parent < 0).sum(1) == 3).all() and (s.parent[:, 17] == -1).all()
    # the first root is uniform over all nodes, so the isolated node starts some searches
    assert (s.order[:, 0] == 17).any() or (s.order[:, 0] < 12).any()


def test_graph_without_edges():
    s = random_dfs(torch.empty(2, 0, dtype=torch.long), 4, 3, gen(9))
    assert (s.parent == -1).all() and (s.euler_flag == 2).all() and s.euler.shape == (3, 4)


def test_walks_step_along_edges():
    g = GRAPHS["er"]
    d = graph_data(g)
    n = g.number_of_nodes()
    for nb in (False, True):
        w = random_walks(d.edge_index, n, 50, 30, non_backtracking=nb, generator=gen(10))
        assert w.shape == (50, 31)
        for row in w.tolist():
            assert all(g.has_edge(a, b) for a, b in zip(row[:-1], row[1:], strict=False))
            if nb:
                for t in range(2, len(row)):
                    assert row[t] != row[t - 2] or g.degree(row[t - 1]) == 1


def test_uniform_walk_step_and_start():
    d = graph_data(nx.star_graph(4))
    w = random_walks(d.edge_index, 5, 20_000, 1, generator=gen(13))
    from_centre = w[w[:, 0] == 0, 1]
    assert stats.chisquare(torch.bincount(from_centre, minlength=5)[1:].tolist()).pvalue > 1e-3
    assert stats.chisquare(torch.bincount(w[:, 0], minlength=5).tolist()).pvalue > 1e-3


def test_non_backtracking_walk_on_a_cycle_keeps_its_direction():
    d = graph_data(nx.cycle_graph(9))
    w = random_walks(d.edge_index, 9, 20, 20, non_backtracking=True, generator=gen(14))
    steps = (w[:, 1:] - w[:, :-1]) % 9
    assert ((steps == steps[:, :1]).all(1)).all()


def test_one_short_walk_covers_at_most_two_nodes():
    # budget accounting of the baseline: 1 walk of length 1 sees 2 nodes at most
    d = graph_data(GRAPHS["regular3"])
    w = random_walks(d.edge_index, 30, 1, 1, generator=gen(15))
    assert coverage(d.edge_index, 30, w)["node_frac"] <= 2 / 30


def test_log_factor_shape_of_search_coverage():
    # searches to full edge coverage grow slowly: far below N on 3-regular graphs
    from rsnn import samples_to_cover, sparse_graph

    d = sparse_graph("regular3", 200, seed=0)
    counts = [samples_to_cover(d.edge_index, 200, generator=gen(s)) for s in range(5)]
    assert 1 < np.mean(counts) < 3 * math.log(200)


def test_high_degree_nodes_shuffle_uniformly():
    # above 16 neighbours the kernel sorts with argsort instead of insertion sort
    d = graph_data(nx.star_graph(20))
    s = random_dfs(d.edge_index, 21, 20_000, gen(16))
    first_leaf = s.order[s.order[:, 0] == 0][:, 1]
    assert stats.chisquare(torch.bincount(first_leaf, minlength=21)[1:].tolist()).pvalue > 1e-3
    second = s.order[s.order[:, 0] != 0][:, 2]  # leaf start -> centre -> a uniform other leaf
    assert stats.chisquare(torch.bincount(second, minlength=21)[1:].tolist()).pvalue > 1e-3
