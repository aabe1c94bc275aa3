import pytest
import torch

from symgfm import csbm_graph, csbm_pool, karate_graph, tabular_knn_graph


def test_csbm_homophily_and_degree_match_request():
    for h in (0.1, 0.5, 0.9):
        g = csbm_graph(2000, 8, 4, h, avg_degree=10, seed=1)
        src, dst = g.edge_index
        measured = float((g.y[src] == g.y[dst]).float().mean())
        assert abs(measured - h) < 0.03  # 10 000 edges: binomial sd < 0.005
        assert g.edge_index.shape[1] == 2000 * 5


def test_csbm_features_carry_the_class():
    # class means are about `signal` noise units apart: the nearest true mean classifies well
    g = csbm_graph(600, 32, 3, 0.5, signal=4.0, seed=2)
    means = torch.stack([g.x[g.y == c].mean(0) for c in range(3)])
    pred = torch.cdist(g.x, means).argmin(1)
    assert (pred == g.y).float().mean() > 0.8


def test_csbm_pool_varies_shapes_and_is_seeded():
    pool = csbm_pool(6, seed=3)
    shapes = {(g.x.shape[1], int(g.y.max()) + 1) for g in pool}
    assert len(shapes) > 1
    assert all(8 <= g.x.shape[1] <= 64 and 300 <= g.x.shape[0] <= 800 for g in pool)
    again = csbm_pool(6, seed=3)
    assert all(
        torch.equal(a.x, b.x) and torch.equal(a.edge_index, b.edge_index)
        for a, b in zip(pool, again, strict=True)
    )


def test_split_counts():
    g = csbm_graph(300, 4, 3, 0.5, seed=4, train_per_class=20)
    assert [int((g.train_mask & (g.y == c)).sum()) for c in range(3)] == [20, 20, 20]
    assert not (g.train_mask & g.test_mask).any() and not (g.val_mask & g.test_mask).any()
    assert int((g.train_mask | g.val_mask | g.test_mask).sum()) == 300


def test_loader_arguments_are_checked():
    with pytest.raises(ValueError, match="'name' parameter of tabular_knn_graph"):
        tabular_knn_graph("mnist")
    with pytest.raises(ValueError, match="'k' parameter"):
        tabular_knn_graph("iris", k=0)
    with pytest.raises(TypeError, match="'train_per_class' parameter"):
        tabular_knn_graph("iris", train_per_class=1.5)
    with pytest.raises(ValueError, match="'seed' parameter of karate_graph"):
        karate_graph(-1)


@pytest.mark.slow  # imports sklearn.neighbors (seconds)
@pytest.mark.parametrize(
    "name, f, c", [("digits", 64, 10), ("wine", 13, 3), ("breast_cancer", 30, 2), ("iris", 4, 3)]
)
def test_tabular_knn_graphs(name, f, c):
    g = tabular_knn_graph(name, k=10)
    assert g.x.shape[1] == f and int(g.y.max()) + 1 == c
    assert torch.equal(torch.bincount(g.edge_index[1]), torch.full((len(g.y),), 10))  # k in-edges
    assert int(g.train_mask.sum()) == 20 * c


def test_karate():
    g = karate_graph(0)
    assert g.x.shape == (34, 34) and int(g.y.max()) + 1 == 4 and int(g.train_mask.sum()) == 8
