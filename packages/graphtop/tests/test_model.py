import copy

import pytest
import torch
from torch_geometric.data import Batch, Data

from graphtop import GCNEncoder, GraphTOP, build_target_subgraphs, few_shot_split, make_csbm
from graphtop.base import target_positions
from graphtop.relaxation import relax_edges
from paperkit.testing import assert_param_error, gradcheck64

HIDDEN = 16


def small_graph(seed=0):
    return make_csbm(120, 3, 8, 5.0, 0.2, 2.0, seed=seed)


def encoder(seed=0):
    torch.manual_seed(seed)
    return GCNEncoder(8, HIDDEN, HIDDEN)


def split(data):
    return few_shot_split(data.y, shots=5, num_test=40, seed=0)


def fitted(epochs=5, seed=0, **kw):
    data = small_graph()
    train, test = split(data)
    model = GraphTOP(encoder(), 3, hidden=HIDDEN, **kw).fit(data, train, epochs=epochs, seed=seed)
    return model, data, test


def test_prompt_gets_gradients_and_the_encoder_none():
    data = small_graph()
    train, _ = split(data)
    model = GraphTOP(encoder(), 3, hidden=HIDDEN)
    batch = Batch.from_data_list(build_target_subgraphs(data, train))
    logits, aux = model._forward(
        batch, model._context(data, "test"), epoch=1, epochs=10, generator=torch.Generator()
    )
    ce = torch.nn.functional.cross_entropy(logits, batch.y)
    loss, _ = model._regularised(ce, aux, batch)
    loss.backward()
    for p in model.prompt.parameters():
        assert p.grad is not None and torch.isfinite(p.grad).all() and p.grad.abs().sum() > 0
    assert all(p.grad is None for p in model.encoder.parameters())


def test_backbone_is_bit_identical_after_fit():
    data = small_graph()
    train, _ = split(data)
    enc = encoder()
    before = copy.deepcopy(enc.state_dict())
    model = GraphTOP(enc, 3, hidden=HIDDEN).fit(data, train, epochs=3)
    after = model.encoder.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not model.encoder.training and not any(p.requires_grad for p in enc.parameters())
    assert len(model.history_) == 3 and {"ce", "entropy", "sparsity"} <= set(model.history_[0])


def test_training_reduces_the_loss_and_the_entropy_term_sharpens_p():
    data = small_graph()
    train, _ = split(data)
    runs = {
        lam: GraphTOP(encoder(), 3, hidden=HIDDEN, lambda_ent=lam).fit(
            data, train, epochs=60, lr=5e-3
        )
        for lam in (0.0, 2.0)
    }
    tight = runs[2.0].history_
    assert tight[-1]["loss"] < tight[0]["loss"] and tight[-1]["ce"] < tight[0]["ce"]
    # the tight-relaxation penalty pushes p towards {0, 1}: lower entropy than without it
    assert tight[-1]["entropy"] < runs[0.0].history_[-1]["entropy"] - 0.02


def test_same_seed_same_predictions_other_seed_other_masks():
    a, data, test = fitted(seed=0)
    b, _, _ = fitted(seed=0)
    c, _, _ = fitted(seed=1)
    for mode in ("sample", "threshold", "expect"):
        assert torch.equal(
            a.predict_proba(data, test, mode=mode), b.predict_proba(data, test, mode=mode)
        )
    assert torch.equal(a.predict_proba(data, test), a.predict_proba(data, test))  # repeatable
    sub = a.rewired_subgraph(data, int(test[0]), mode="sample")
    other = c.rewired_subgraph(data, int(test[0]), mode="sample")
    assert not torch.equal(sub.cand_prob, other.cand_prob)  # different seeds, different models
    p = torch.full((200,), 0.5)
    assert not torch.equal(
        relax_edges(p, 0.5, torch.Generator().manual_seed(0)),
        relax_edges(p, 0.5, torch.Generator().manual_seed(1)),
    )


def test_relabelling_nodes_leaves_threshold_predictions_unchanged():
    model, data, test = fitted(epochs=20)
    perm = torch.randperm(data.num_nodes, generator=torch.Generator().manual_seed(5))
    inverse = torch.empty_like(perm)
    inverse[perm] = torch.arange(data.num_nodes)  # old id i -> new id inverse[i]
    permuted = Data(x=data.x[perm], edge_index=inverse[data.edge_index], y=data.y[perm])
    original = model.predict(data, test, mode="threshold")
    relabelled = model.predict(permuted, inverse[test], mode="threshold")
    assert torch.equal(original, relabelled)
    probs = model.predict_proba(data, test, mode="threshold")
    assert torch.allclose(
        probs, model.predict_proba(permuted, inverse[test], mode="threshold"), atol=1e-5
    )


def test_gradcheck_of_the_relaxed_forward_on_a_six_node_subgraph():
    torch.manual_seed(0)
    edges = torch.tensor([[0, 0, 1, 2, 3, 4], [1, 2, 3, 3, 4, 5]])
    data = Data(x=torch.randn(8, 4), edge_index=torch.cat([edges, edges.flip(0)], 1))
    (sub,) = build_target_subgraphs(data, [3], num_hops=2)
    assert sub.num_nodes == 6  # 3's neighbours 1, 2, 4 and their neighbours 0, 5
    enc = GCNEncoder(4, 5, 5).double().requires_grad_(False)
    model = GraphTOP(enc, 2, hidden=5).double()
    batch = Batch.from_data_list([sub])
    h = enc(data.x.double(), data.edge_index)

    def forward(fc1_weight, x):
        scorer = model.prompt
        cand = batch.edge_index[:, batch.cand_mask]
        hv, hu = h[batch.node_idx[cand[0, 0::2]]], h[batch.node_idx[cand[1, 0::2]]]
        score = torch.nn.functional.linear(
            torch.relu((hv + hu) @ fc1_weight.T + scorer.fc1.bias),
            scorer.fc2.weight,
            scorer.fc2.bias,
        )
        p = torch.sigmoid(score.squeeze(-1) / scorer.temperature)
        m = relax_edges(p, 0.7, torch.Generator().manual_seed(0))
        w = batch.edge_weight.double().masked_scatter(batch.cand_mask, m.repeat_interleave(2))
        return model.classifier(enc(x, batch.edge_index, w)[target_positions(batch)])

    assert gradcheck64(forward, model.prompt.fc1.weight.detach(), batch.x.double())


def test_prediction_modes_and_rewired_subgraph():
    model, data, test = fitted(epochs=20)
    for mode in ("sample", "threshold", "expect"):
        probs = model.predict_proba(data, test, mode=mode, n_samples=3)
        assert probs.shape == (len(test), 3)
        assert torch.allclose(probs.sum(-1), torch.ones(len(test)))
    sub = model.rewired_subgraph(data, int(test[0]))
    assert torch.equal(sub.cand_kept, sub.cand_prob > 0.5)
    kept_edges = {tuple(e) for e in sub.edge_index.T.tolist()}
    t = int(sub.target)
    for u, kept in zip(sub.cand_node.tolist(), sub.cand_kept.tolist(), strict=True):
        assert ((t, u) in kept_edges) == kept and ((u, t) in kept_edges) == kept
    assert int(sub.cand_mask.sum()) == 2 * int(sub.cand_kept.sum())
    assert sub.edge_weight.shape == (sub.edge_index.shape[1],)
    stats = model.rewiring_stats(data, test)
    assert 0 <= stats["density"] <= 1 and 0 <= stats["kept_original"] <= 1


def test_bad_inputs():
    data = small_graph()
    train, test = split(data)
    model = GraphTOP(encoder(), 3, hidden=HIDDEN)
    assert_param_error(model.fit, data, torch.tensor([], dtype=torch.long), param="train_nodes")
    assert_param_error(GraphTOP, encoder(), 3, hidden=HIDDEN, num_hops=0, param="num_hops")
    assert_param_error(GraphTOP, encoder(), 3, hidden=32, param="hidden")
    few = GraphTOP(encoder(), 2, hidden=HIDDEN)
    assert_param_error(few.fit, data, train, param="data")  # label 2 >= num_classes 2
    floats = Data(x=data.x, edge_index=data.edge_index, y=data.y.float())
    assert_param_error(model.fit, floats, train, param="data", exc=TypeError)
    assert_param_error(model.fit, "graph", train, param="data", exc=TypeError)
    bad_edges = Data(x=data.x, edge_index=torch.tensor([[0], [500]]), y=data.y)
    assert_param_error(model.fit, bad_edges, train, param="data")
    assert_param_error(model.predict_proba, data, test, mode="soft", param="mode")
    # NaN features once failed inside torch.bernoulli; they are refused at the entry point.
    nan_x = data.x.clone()
    nan_x[3, 0] = float("nan")
    nan_graph = Data(x=nan_x, edge_index=data.edge_index, y=data.y)
    for call in (model.fit, model.predict_proba, model.rewiring_stats):
        err = assert_param_error(call, nan_graph, train, param="data")
        assert "finite" in str(err)
    assert_param_error(model.rewired_subgraph, nan_graph, 0, param="data")
    for edges in (data.edge_index.float(), data.edge_index[:1], data.edge_index - 1):
        bad = Data(x=data.x, edge_index=edges, y=data.y)
        exc = TypeError if edges.is_floating_point() else ValueError
        assert_param_error(model.predict_proba, bad, test, param="data", exc=exc)
    wide = Data(x=data.x.double(), edge_index=data.edge_index, y=data.y)
    assert_param_error(model.predict_proba, wide, test, param="data", exc=TypeError)
    model.encoder.requires_grad_(True)  # unfrozen after construction
    assert_param_error(model.fit, data, train, param="encoder")


def test_encoder_with_a_different_width_is_caught_at_fit():
    class Plain(torch.nn.Module):  # no out_dim attribute to check at construction
        def __init__(self):
            super().__init__()
            self.inner = GCNEncoder(8, 16, 12)

        def forward(self, x, edge_index, edge_weight=None):
            return self.inner(x, edge_index, edge_weight)

    data = small_graph()
    train, _ = split(data)
    model = GraphTOP(Plain(), 3, hidden=HIDDEN)
    with pytest.raises(ValueError, match="output width"):
        model.fit(data, train, epochs=1)
