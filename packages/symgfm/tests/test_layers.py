import torch
from torch_geometric.nn import GraphConv

from paperkit.testing import assert_close, gradcheck64
from symgfm import GATCore, MeanGNN, TSLayer, least_squares_maps, prepare_graph
from symgfm.layers import _fused_mean, _separate


def _inputs(graph, k=1, seed=0):
    g = graph(n=6, f=3, c=2, seed=seed)
    p = prepare_graph(g, g.train_mask)
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(6, 3, k, generator=gen, dtype=torch.float64)
    y = torch.randn(6, 2, k, generator=gen, dtype=torch.float64)
    return x, y, p.conversions, p.edge_index


def test_mean_gnn_equals_pyg_graphconv_per_slice():
    # reference: a 2-D mean GNN (PyG GraphConv, aggr="mean") applied to each slice a alone
    torch.manual_seed(0)
    layer = MeanGNN(3, 4).double()
    z = torch.randn(7, 5, 3, dtype=torch.float64)
    ei = torch.tensor([[0, 1, 2, 3, 4, 5, 6, 2], [1, 2, 3, 4, 5, 6, 0, 0]])
    ref = GraphConv(3, 4, aggr="mean", bias=False).double()
    with torch.no_grad():
        ref.lin_rel.weight.copy_(layer.w_aggr.T)
        ref.lin_root.weight.copy_(layer.w_self.T)
    loop = torch.stack([ref(z[:, a], ei) for a in range(5)], dim=1)
    assert_close(layer(z, ei), loop, rtol=1e-12, atol=1e-12)


def test_gat_core_equals_per_slice_loop():
    torch.manual_seed(1)
    layer = GATCore(2, 3).double()
    z = torch.randn(5, 4, 2, dtype=torch.float64)
    ei = torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 0]])
    per_slice = torch.stack([layer(z[:, a : a + 1], ei)[:, 0] for a in range(4)], dim=1)
    assert_close(layer(z, ei), per_slice, rtol=1e-12, atol=1e-12)


def test_fused_mean_path_equals_separate_cores(graph):
    # the layer aggregates once per axis size; calling every MeanGNN on its own is the reference
    for k_in, k_out in ((1, 16), (16, 1), (4, 4)):
        torch.manual_seed(k_in)
        layer = TSLayer(k_in, k_out).double()
        x, y, maps, ei = _inputs(graph, k_in)
        for stream in ("x", "y"):
            terms = layer.terms(x, y, maps, stream)
            assert_close(_fused_mean(terms, ei), _separate(terms, ei), rtol=1e-10, atol=1e-12)


def test_wiring_identity_on_psi1_returns_y(graph):
    layer = TSLayer(2, 2).double()
    with torch.no_grad():
        for p in layer.parameters():
            p.zero_()
        layer.psi1.w_self.copy_(torch.eye(2))
    x, y, maps, ei = _inputs(graph, 2)
    xo, yo = layer(x, y, maps, ei)
    assert torch.equal(yo, y)
    assert torch.equal(xo, torch.zeros_like(x))


def test_terms_share_no_parameters():
    layer = TSLayer(3, 3, ls_num_layers=2)
    params = list(layer.parameters())
    assert len({id(p) for p in params}) == len(params)
    # per stream: phi1..3, phi4[0..2], phi5[0..1] = 8 cores with W_self and W_aggr each
    assert len(params) == 2 * 8 * 2
    assert len(layer.phi4) == 3 and len(layer.phi5) == 2


def test_ablation_drops_ls_terms(graph):
    layer = TSLayer(1, 4, use_ls_maps=False)
    assert len(layer.phi4) == len(layer.psi5) == 0
    assert layer.required_maps() == ["pool2x", "pool2y"]


def test_gradcheck_tslayer_weights(graph):
    torch.manual_seed(0)
    layer = TSLayer(2, 2).double()
    x, y, maps, ei = _inputs(graph, 2)
    names = [n for n, _ in layer.named_parameters()]
    weights = [p.detach() for p in layer.parameters()]

    def fn(*ws):
        out = torch.func.functional_call(layer, dict(zip(names, ws, strict=True)), (x, y, maps, ei))
        return torch.cat([o.flatten() for o in out])

    assert gradcheck64(fn, *weights)


def test_gradcheck_tslayer_gat_core(graph):
    torch.manual_seed(0)
    layer = TSLayer(1, 2, core="gat").double()
    x, y, maps, ei = _inputs(graph, 1)
    assert gradcheck64(
        lambda a, b: torch.cat([o.flatten() for o in layer(a, b, maps, ei)]), x, y, fast_mode=True
    )


def test_least_squares_maps_shapes(graph):
    g = graph(n=20, f=5, c=3)
    y1 = torch.nn.functional.one_hot(g.y, 3).double()
    maps = least_squares_maps(g.x, y1, g.edge_index, g.train_mask, 2)
    assert len(maps) == 2 + 2 * (2 * 2 + 1)
    assert maps["ls2y_2_het"][0].shape == (5, 3) and maps["ls2x_1"][0].shape == (3, 5)
    assert maps["pool2y"][0].shape == (1, 3) and maps["pool2x"][1].shape == (5,)
