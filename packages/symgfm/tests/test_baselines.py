import torch

from paperkit.testing import assert_close
from symgfm import EndToEndMeanGNN, LabelPropagation, LinearGNN, csbm_graph, ridge_ls
from symgfm.conversions import propagate_features
from symgfm.graph import clean_edges, normalize_features


def test_linear_gnn_is_ridge_on_the_chosen_hop():
    g = csbm_graph(200, 10, 3, 0.9, seed=1)
    lin = LinearGNN()
    scores = lin.fit_predict(g)
    x = normalize_features(g.x)
    feats = propagate_features(x, clean_edges(g.edge_index, 200), 2)
    y1 = torch.nn.functional.one_hot(g.y, 3).float()
    m = g.train_mask
    W, b = ridge_ls(feats[str(lin.chosen_hop_)][m], y1[m])
    assert_close(scores, feats[str(lin.chosen_hop_)] @ W + b, rtol=1e-5, atol=1e-6)
    assert lin.chosen_hop_ > 0  # a homophilic graph: aggregation helps (LOO sees it)


def test_label_propagation_uses_graph_on_homophilic_graph():
    g = csbm_graph(300, 4, 3, 0.95, signal=0.0, seed=2)  # features carry nothing
    acc = (LabelPropagation().fit_predict(g).argmax(1) == g.y)[g.test_mask].float().mean()
    assert acc > 0.8


def test_end_to_end_fits_its_train_nodes_and_is_seeded():
    g = csbm_graph(150, 8, 3, 0.8, seed=3)
    a = EndToEndMeanGNN(hidden=16, epochs=60, seed=0).fit_predict(g)
    b = EndToEndMeanGNN(hidden=16, epochs=60, seed=0).fit_predict(g)
    assert torch.equal(a, b)
    assert (a.argmax(1) == g.y)[g.train_mask].float().mean() > 0.9
