import copy

import pytest
import torch
from torch import nn

from paperkit.testing import assert_close, assert_param_error, check_seeded_determinism
from subtrack import (
    SubTrackAdamW,
    make_param_groups,
    optimizer_state_bytes,
    synthetic_corpus,
    tiny_llama,
)

D64 = torch.float64


def _grads(shape, steps, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(*shape, generator=g, dtype=D64) for _ in range(steps)]


def _run(shape, grads, lr=1e-2, **group):
    w = nn.Parameter(torch.randn(*shape, generator=torch.Generator().manual_seed(99), dtype=D64))
    opt = SubTrackAdamW([{"params": [w], **group}], lr=lr)
    for g in grads:
        w.grad = g.clone()
        opt.step()
    return w, opt


@pytest.mark.parametrize("shape", [(6, 10), (10, 6)])
def test_full_rank_recovery_adds_nothing(shape):
    grads = _grads(shape, 5, 0)
    a, _ = _run(shape, grads, rank=6, method="subtrack", update_interval=2)
    b, _ = _run(shape, grads, rank=6, method="subtrack", update_interval=2, recovery_scaling=False)
    assert_close(a.detach().numpy(), b.detach().numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("shape", [(6, 10), (10, 6)])
def test_galore_fixed_basis_equals_naive_adam(shape):
    grads, lr, scale = _grads(shape, 6, 1), 1e-2, 0.25
    w, opt = _run(shape, grads, lr=lr, rank=3, method="galore", update_interval=1000, scale=scale)
    P = opt.state[w]["P"]
    right = shape[0] >= shape[1]
    ref = torch.randn(*shape, generator=torch.Generator().manual_seed(99), dtype=D64)
    m = v = 0
    for t, g in enumerate(grads, 1):
        R = g @ P if right else P.T @ g
        m = 0.9 * m + 0.1 * R
        v = 0.999 * v + 0.001 * R * R
        N = (m / (1 - 0.9**t)) / ((v / (1 - 0.999**t)).sqrt() + 1e-6)
        ref = ref - lr * scale * (N @ P.T if right else P @ N)
    assert_close(w.detach().numpy(), ref.numpy(), rtol=0, atol=1e-12)


def test_subtrack_grad_differs_from_galore_only_in_basis_motion():
    shape, grads = (8, 12), _grads((8, 12), 4, 2)
    kw = dict(rank=3, update_interval=1000, projection_aware=False, recovery_scaling=False)
    a, _ = _run(shape, grads, method="subtrack", **kw)
    b, _ = _run(shape, grads, method="galore", **kw)
    assert torch.equal(a, b)
    kw["update_interval"] = 2
    a, _ = _run(shape, grads, method="subtrack", **kw)
    b, _ = _run(shape, grads, method="galore", **kw)
    assert not torch.allclose(a, b)


def _s_norms(limit):
    w = nn.Parameter(torch.zeros(8, 20, dtype=D64))
    group = {"params": [w], "rank": 2, "update_interval": 3, "norm_growth_limit": limit}
    opt = SubTrackAdamW([group], lr=1e-3)
    norms = []
    for g in _grads((8, 20), 12, 3):
        w.grad = g
        opt.step()
        norms.append(opt.state[w]["s_norm"])
    return [b / a for a, b in zip(norms, norms[1:], strict=False)]


def test_norm_growth_limiter_every_step():
    assert max(_s_norms(1e6)) > 1.01  # unlimited, the residual term does grow faster
    assert max(_s_norms(1.01)) <= 1.01 * (1 + 1e-12)


def test_plain_groups_match_torch_adamw():
    torch.manual_seed(0)
    a = nn.Linear(5, 4).double()
    b = copy.deepcopy(a)
    ours = SubTrackAdamW(a.parameters(), lr=1e-2, weight_decay=0.1)
    ref = torch.optim.AdamW(b.parameters(), lr=1e-2, weight_decay=0.1, eps=1e-6)
    x = torch.randn(7, 5, dtype=D64)
    for _ in range(10):
        for model, opt in ((a, ours), (b, ref)):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            opt.step()
    for p, q in zip(a.parameters(), b.parameters(), strict=True):
        assert_close(p.detach().numpy(), q.detach().numpy(), rtol=0, atol=1e-12)


def _train(model, opt, steps, data, start=0):
    for s in range(start, start + steps):
        x = data[s * 9 : s * 9 + 4 * 9].view(4, 9)
        loss = nn.functional.cross_entropy(
            model(x[:, :-1]).logits.flatten(0, 1), x[:, 1:].flatten()
        )
        opt.zero_grad()
        loss.backward()
        opt.step()
    return loss


def _tiny():
    model = tiny_llama(29, dim=16, layers=1, heads=2)
    opt = SubTrackAdamW(make_param_groups(model, rank=4, update_interval=3), lr=1e-2)
    return model, opt


def test_seeded_determinism():
    data = synthetic_corpus(2000, 0)

    def run():
        model, opt = _tiny()
        _train(model, opt, 5, data)
        return model.lm_head.weight.detach().clone()

    check_seeded_determinism(run)


def test_state_dict_roundtrip_continues_identically():
    data = synthetic_corpus(3000, 1)
    torch.manual_seed(0)
    model, opt = _tiny()
    _train(model, opt, 4, data)
    model2, opt2 = _tiny()
    model2.load_state_dict(model.state_dict())
    opt2.load_state_dict(copy.deepcopy(opt.state_dict()))
    p = next(iter(opt.param_groups[1]["params"]))
    assert set(opt.state[p]) == {"P", "exp_avg", "exp_avg_sq", "step", "s_norm"}
    _train(model, opt, 4, data, start=4)
    _train(model2, opt2, 4, data, start=4)
    for a, b in zip(model.parameters(), model2.parameters(), strict=True):
        assert torch.equal(a, b)


def test_param_groups_and_state_memory_equal_to_galore():
    model = tiny_llama(29, dim=32, layers=1, heads=2)
    groups = make_param_groups(model, rank=8)
    assert len(groups[1]["params"]) == 7 and groups[1]["rank"] == 8
    sizes = {}
    data = synthetic_corpus(2000, 0)
    for method in ("subtrack", "galore"):
        torch.manual_seed(0)
        model = tiny_llama(29, dim=32, layers=1, heads=2)
        opt = SubTrackAdamW(make_param_groups(model, rank=8, method=method), lr=1e-3)
        _train(model, opt, 1, data)
        sizes[method] = optimizer_state_bytes(opt)
    assert sizes["subtrack"] == sizes["galore"] > 0


def test_bad_inputs():
    w = nn.Parameter(torch.zeros(4, 6))
    b = nn.Parameter(torch.zeros(4))
    assert_param_error(SubTrackAdamW, [{"params": [w], "rank": 0}], param="rank")
    assert_param_error(SubTrackAdamW, [{"params": [w], "rank": 5}], param="rank")
    assert_param_error(SubTrackAdamW, [{"params": [b], "rank": 2}], param="params")
    assert_param_error(SubTrackAdamW, [w], lr=-1.0, param="lr")
    assert_param_error(
        SubTrackAdamW, [{"params": [w], "rank": 2, "update_interval": 0}], param="update_interval"
    )
    assert_param_error(SubTrackAdamW, [w], betas=(0.9, 1.0), param="betas")
    assert_param_error(SubTrackAdamW, [w], betas=(-0.1, 0.9), param="betas")
    assert_param_error(SubTrackAdamW, [{"params": [w], "rank": 2, "method": "svd"}], param="method")
    emb = nn.Embedding(10, 4, sparse=True)
    opt = SubTrackAdamW(emb.parameters())
    emb(torch.tensor([1, 2])).sum().backward()
    assert_param_error(opt.step, param="param_groups[0].params[0].grad", exc=TypeError)


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("scale", float("nan")),
        ("scale", -0.1),
        ("subspace_lr", float("inf")),
        ("norm_growth_limit", 0.5),
        ("norm_growth_limit", float("nan")),
        ("max_angle", float("nan")),
        ("v_reset_scale", -1.0),
        ("update_interval", 2.5),
        ("projection_aware", 1),
        ("lr", float("nan")),
        ("betas", (0.9, float("nan"))),
    ],
)
def test_group_hyperparameters_are_checked_when_built(key, value):
    w = nn.Parameter(torch.zeros(4, 6))
    exc = TypeError if key in ("update_interval", "projection_aware") else ValueError
    with pytest.raises(exc, match=rf"'{key}' parameter of SubTrackAdamW.param_groups\[0\]"):
        SubTrackAdamW([{"params": [w], "rank": 2, key: value}])


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
@pytest.mark.parametrize("rank", [None, 2])
def test_non_finite_gradient_is_refused_before_any_update(bad, rank):
    a, b = nn.Parameter(torch.ones(4, 6)), nn.Parameter(torch.ones(4, 6))
    groups = [{"params": [a]}, {"params": [b]} if rank is None else {"params": [b], "rank": rank}]
    opt = SubTrackAdamW(groups, lr=0.1)
    a.grad, b.grad = torch.ones(4, 6), torch.ones(4, 6)
    b.grad[1, 2] = bad
    assert_param_error(opt.step, param="param_groups[1].params[0].grad")
    assert torch.equal(a, torch.ones(4, 6)) and torch.equal(b, torch.ones(4, 6))
    assert not opt.state  # nothing was initialised either
