import copy

import pytest
import torch

from graphtop import GCNEncoder, info_nce, make_csbm, pretrain
from paperkit.testing import assert_param_error


def graph():
    return make_csbm(120, 3, 8, 5.0, 0.8, 1.0, seed=0)


def edge_auc(enc, data):
    """Fraction of (edge, random pair) comparisons the dot-product score orders right."""
    with torch.no_grad():
        z = enc(data.x, data.edge_index)
    g = torch.Generator().manual_seed(9)
    neg = torch.randint(0, data.num_nodes, data.edge_index.shape, generator=g)
    pos_s = (z[data.edge_index[0]] * z[data.edge_index[1]]).sum(-1)
    neg_s = (z[neg[0]] * z[neg[1]]).sum(-1)
    return (pos_s[:, None] > neg_s[None, :]).float().mean().item()


def test_link_prediction_learns_to_score_edges():
    data = graph()
    torch.manual_seed(0)
    enc = GCNEncoder(8, 16, 16)
    before = edge_auc(enc, data)
    pretrain(enc, data, "link_pred", 60, seed=0, lr=1e-2)
    assert edge_auc(enc, data) > before + 0.1


@pytest.mark.parametrize("method", ["link_pred", "graphcl", "simgrace"])
def test_pretraining_changes_the_weights_deterministically(method):
    data = graph()
    torch.manual_seed(0)
    enc = GCNEncoder(8, 16, 16)
    start = copy.deepcopy(enc)
    state = torch.random.get_rng_state()
    a = pretrain(copy.deepcopy(start), data, method, 3, seed=1, batch_size=16)
    assert torch.equal(state, torch.random.get_rng_state())  # the caller's RNG is untouched
    b = pretrain(copy.deepcopy(start), data, method, 3, seed=1, batch_size=16)
    c = pretrain(copy.deepcopy(start), data, method, 3, seed=2, batch_size=16)
    pa, pb, pc, p0 = (dict(m.named_parameters()) for m in (a, b, c, start))
    assert all(torch.equal(pa[k], pb[k]) for k in pa)
    assert any(not torch.equal(pa[k], p0[k]) for k in pa)
    assert any(not torch.equal(pa[k], pc[k]) for k in pa)


def test_info_nce():
    a = torch.eye(4)
    assert info_nce(a, a, 0.5) < info_nce(a, a.roll(1, 0), 0.5)
    # closed form for orthogonal unit vectors: -log(e^{1/T} / (e^{1/T} + 3))
    expected = -torch.log(torch.exp(torch.tensor(2.0)) / (torch.exp(torch.tensor(2.0)) + 3))
    assert torch.allclose(info_nce(a, a, 0.5), expected)


def test_bad_inputs():
    data = graph()
    enc = GCNEncoder(8, 16, 16)
    assert_param_error(pretrain, enc, data, "dgi", 1, 0, param="method")
    assert_param_error(pretrain, enc, data, "graphcl", 0, 0, param="epochs")
    assert_param_error(pretrain, enc, data, "graphcl", 1, 0, drop=1.0, param="drop")
