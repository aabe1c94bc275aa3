"""The symmetries the paper proves for TS-GNNs (Sec. 4), on the whole model with its LS maps."""

import pytest
import torch
from torch_geometric.data import Data

from paperkit.testing import assert_close
from symgfm import TSGNN, prepare_graph


def _logits(model, g):
    p = prepare_graph(g, g.train_mask, model.ls_num_layers)
    with torch.no_grad():
        return model(p, p.y0)


def _model(seed=0, **kw):
    torch.manual_seed(seed)
    return TSGNN(hidden=8, **kw).double()


CONFIGS = [{}, {"core": "gat"}, {"use_ls_maps": False}, {"ls_num_layers": 2}]


@pytest.mark.parametrize("kw", CONFIGS)
def test_feature_permutation_invariance(graph, kw):
    g = graph(n=30, f=6, c=3)
    model = _model(**kw)
    perm = torch.randperm(6, generator=torch.Generator().manual_seed(1))
    h = Data(x=g.x[:, perm], y=g.y, edge_index=g.edge_index, train_mask=g.train_mask)
    assert_close(_logits(model, h), _logits(model, g), rtol=0, atol=1e-8)


@pytest.mark.parametrize("kw", CONFIGS)
def test_label_permutation_equivariance(graph, kw):
    g = graph(n=30, f=6, c=3)
    model = _model(**kw)
    sigma = torch.tensor([2, 0, 1])  # class c becomes sigma[c]
    h = Data(x=g.x, y=sigma[g.y], edge_index=g.edge_index, train_mask=g.train_mask)
    out_g, out_h = _logits(model, g), _logits(model, h)
    # logits of class c on g appear in column sigma[c] on h
    assert_close(out_h[:, sigma], out_g, rtol=0, atol=1e-8)


@pytest.mark.parametrize("kw", CONFIGS)
def test_node_permutation_equivariance(graph, kw):
    g = graph(n=30, f=6, c=3)
    model = _model(**kw)
    perm = torch.randperm(
        30, generator=torch.Generator().manual_seed(2)
    )  # new node i = old perm[i]
    inv = torch.argsort(perm)
    h = Data(x=g.x[perm], y=g.y[perm], edge_index=inv[g.edge_index], train_mask=g.train_mask[perm])
    assert_close(_logits(model, h), _logits(model, g)[perm], rtol=0, atol=1e-8)


def test_one_model_any_shape(graph):
    model = _model()
    for f, c in ((5, 2), (64, 7), (300, 3)):
        g = graph(n=60, f=f, c=c)
        out = _logits(model, g)
        assert out.shape == (60, c) and torch.isfinite(out).all()


def test_forward_refuses_unprepared_graph(graph):
    g = graph()
    with pytest.raises(ValueError, match="'data'.*prepare_graph"):
        _model()(g, torch.zeros(len(g.y), 3, dtype=torch.float64))


def test_runs_under_autocast(graph):
    g = graph(n=30, f=6, c=3)
    p = prepare_graph(g, g.train_mask)
    model = TSGNN(hidden=4)
    with torch.autocast("cpu", dtype=torch.bfloat16), torch.no_grad():
        out = model(p, p.y0)
    ref = model(p, p.y0).detach()
    assert out.shape == ref.shape and torch.isfinite(out).all()
    assert_close(out.float(), ref, rtol=0.1, atol=0.1)  # bf16 has 8 mantissa bits
