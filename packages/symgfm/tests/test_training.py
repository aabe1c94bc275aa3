import pytest
import torch

from paperkit.testing import assert_close
from symgfm import (
    TSGNN,
    context_maps,
    csbm_graph,
    fit_foundation,
    lp_split,
    prepare_graph,
    zero_shot_predict,
)


def test_lp_split_is_per_class_disjoint_and_covering():
    g = csbm_graph(200, 4, 4, 0.5, seed=3, train_per_class=10)
    y, train = g.y.clone(), g.train_mask.clone()
    drop = torch.nonzero(train & (y == 2)).flatten()[:7]  # class 2 keeps only 3 train nodes
    train[drop] = False
    lp, target = lp_split(y, train, 0.4, torch.Generator().manual_seed(0))
    assert not (lp & target).any() and torch.equal(lp | target, train)
    k = int(train.sum()) * 0.4 // 4  # floor(|train| r / C) = floor(33 * 0.4 / 4) = 3
    for c in range(4):
        n_c = int((train & (y == c)).sum())
        assert int((lp & (y == c)).sum()) == min(k, n_c)


def test_context_maps_do_not_see_target_labels():
    g = csbm_graph(120, 6, 3, 0.6, seed=4, train_per_class=10)
    p = prepare_graph(g, g.train_mask)
    lp, target = lp_split(p.y, p.train_mask, 0.4, torch.Generator().manual_seed(0))
    q = prepare_graph(g, g.train_mask)
    q.y = p.y.clone()
    q.y[target] = (q.y[target] + 1) % 3  # other labels on the targets only
    q_all = prepare_graph(type(g)(x=g.x, y=q.y, edge_index=g.edge_index), g.train_mask)
    ctx_p, ctx_q = context_maps(p, lp, "context"), context_maps(q, lp, "context")
    all_p, all_q = context_maps(p, lp, "all_train"), context_maps(q_all, lp, "all_train")
    for key in ctx_p:
        assert torch.equal(ctx_p[key][0], ctx_q[key][0]) and torch.equal(
            ctx_p[key][1], ctx_q[key][1]
        )
    assert any(not torch.allclose(all_p[k][0], all_q[k][0]) for k in all_p)  # leakage


def test_zero_shot_changes_no_parameter_and_is_deterministic():
    g = csbm_graph(80, 7, 3, 0.8, seed=5)
    torch.manual_seed(0)
    model = TSGNN(hidden=4)
    before = {k: v.clone() for k, v in model.state_dict().items()}
    a, b = zero_shot_predict(model, g), zero_shot_predict(model, g)
    assert torch.equal(a, b) and not a.requires_grad
    after = model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)


def test_training_learns_and_transfers():
    # a homophilic training graph; a held-out graph with other F and C: zero-shot beats chance
    train = csbm_graph(300, 12, 3, 0.85, signal=2.5, seed=6)
    test = csbm_graph(300, 20, 4, 0.85, signal=2.5, seed=7)
    torch.manual_seed(0)
    model = fit_foundation(TSGNN(hidden=8), [train], epochs=40, seed=0)
    first, last = model.train_losses_[:5], model.train_losses_[-5:]
    assert sum(last) < sum(first)
    acc = (zero_shot_predict(model, test).argmax(1) == test.y)[test.test_mask].float().mean()
    assert acc > 0.6  # chance is 0.25


def test_fit_is_seeded():
    g = csbm_graph(100, 5, 2, 0.7, seed=8)
    outs = []
    for _ in range(2):
        torch.manual_seed(0)
        model = fit_foundation(TSGNN(hidden=4), [g], epochs=3, seed=1)
        outs.append(zero_shot_predict(model, g))
    assert torch.equal(outs[0], outs[1])


@pytest.mark.parametrize(
    "mutate, match",
    [
        (lambda g: setattr(g, "train_mask", g.train_mask & (g.y != 1)), "class 1"),
        (lambda g: setattr(g, "y", g.y - 1), "labels y are 0..C-1"),
        (lambda g: setattr(g, "y", torch.zeros_like(g.y)), "at least 2 classes"),
    ],
)
def test_invalid_graphs_raise_value_error(mutate, match):
    g = csbm_graph(40, 3, 3, 0.5, seed=9, train_per_class=3)
    mutate(g)
    with pytest.raises(ValueError, match=match):
        prepare_graph(g, g.train_mask)


def test_integer_features_raise_type_error():
    g = csbm_graph(40, 3, 3, 0.5, seed=9, train_per_class=3)
    g.x = g.x.long()
    with pytest.raises(TypeError, match="'data'.*floating-point.*data.x"):
        zero_shot_predict(TSGNN(hidden=2), g)


def test_maps_are_refitted_per_step_on_context_only():
    g = csbm_graph(150, 6, 3, 0.6, seed=10)
    p = prepare_graph(g, g.train_mask)
    lp, _ = lp_split(p.y, p.train_mask, 0.4, torch.Generator().manual_seed(0))
    ctx = context_maps(p, lp, "context")
    sub = prepare_graph(g, lp)  # maps of a graph whose only train nodes are the context
    for key in ctx:
        assert_close(ctx[key][0], sub.conversions[key][0], rtol=1e-6, atol=1e-7)
