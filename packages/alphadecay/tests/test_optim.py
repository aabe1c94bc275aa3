import copy

import pytest
import torch
from torch import nn

from alphadecay import (
    AlphaDecayAdam,
    AlphaDecayAdamW,
    AlphaDecayScheduler,
    assign_weight_decay,
    module_alphas,
    module_param_groups,
    tiny_llama,
)
from paperkit.testing import assert_close, assert_param_error, check_seeded_determinism


def _model(seed=0, dtype=torch.float32):
    torch.manual_seed(seed)
    return tiny_llama(30, d=32, n_layers=2, n_heads=2, ctx=16).to(dtype)


def _loss(model, seed):
    x = torch.randint(0, 30, (4, 17), generator=torch.Generator().manual_seed(seed))
    logits = model(x[:, :-1]).logits
    return nn.functional.cross_entropy(logits.flatten(0, 1), x[:, 1:].flatten())


def _train(model, opt, steps, after=None):
    for step in range(steps):
        opt.zero_grad()
        _loss(model, step).backward()
        opt.step()
        if after is not None:
            after()


def test_groups_one_per_module_plus_rest():
    model = _model()
    opt = AlphaDecayAdamW(model, min_eigs=8)
    modules = [g["module"] for g in opt.param_groups]
    assert modules[:-1] == list(module_alphas(model, min_eigs=8)) and modules[-1] is None
    n_params = sum(len(g["params"]) for g in opt.param_groups)
    assert n_params == len(list(model.parameters()))
    decays = {g["module"]: g["weight_decay"] for g in opt.param_groups}
    assert decays[None] == 0.1
    expected = assign_weight_decay(module_alphas(model, min_eigs=8), 0.1)
    assert {k: v for k, v in decays.items() if k is not None} == expected
    assert min(expected.values()) == pytest.approx(0.1 * 2 / 3)
    assert max(expected.values()) == pytest.approx(0.3)


def test_s1_equal_s2_equal_one_is_adamw_bitwise():
    model = _model()
    reference = copy.deepcopy(model)
    opt = AlphaDecayAdamW(model, lr=1e-2, weight_decay=0.1, s1=1, s2=1, update_every=5, min_eigs=8)
    ref_opt = torch.optim.AdamW(reference.parameters(), lr=1e-2, weight_decay=0.1)
    _train(model, opt, 20)
    _train(reference, ref_opt, 20)
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        assert torch.equal(p, q)


def test_refresh_only_at_multiples_of_update_every(monkeypatch):
    model = _model()
    opt = AlphaDecayAdamW(model, lr=1e-2, update_every=4, min_eigs=8)
    calls = []
    original = opt.refresh_weight_decay
    step = {"n": 0}

    def spy():
        calls.append(step["n"])
        return original()

    monkeypatch.setattr(opt, "refresh_weight_decay", spy)
    history = []
    for n in range(10):
        step["n"] = n
        opt.zero_grad()
        _loss(model, n).backward()
        opt.step()
        history.append([g["weight_decay"] for g in opt.param_groups])
    assert calls == [0, 4, 8]
    changed = [n for n in range(1, 10) if history[n] != history[n - 1]]
    assert set(changed) <= {4, 8} and changed  # decays move only when refreshed
    assert all(h[-1] == 0.1 for h in history)  # the untracked group keeps the base decay


def test_adam_applies_l2_through_the_gradient():
    # one Adam step by hand, float64: g' = g + wd_l * w; m = (1-b1) g'; v = (1-b2) g'^2;
    # w <- w - lr * m_hat / (sqrt(v_hat) + eps) with bias corrections.
    model = _model(dtype=torch.float64)
    before = copy.deepcopy(model)
    lr, eps = 1e-2, 1e-8
    opt = AlphaDecayAdam(model, lr=lr, eps=eps, weight_decay=1e-2, s2=5.0, min_eigs=8)
    opt.zero_grad()
    _loss(model, 0).backward()
    grads = {n: p.grad.clone() for n, p in model.named_parameters()}
    decays = {
        n: opt.last_decays.get(n.rsplit(".", 1)[0], 1e-2) for n, _ in model.named_parameters()
    }
    assert len(set(decays.values())) > 2
    opt.step()
    for (name, p), p0 in zip(model.named_parameters(), before.parameters(), strict=True):
        g = grads[name] + decays[name] * p0
        m_hat = g  # (1 - b1) g / (1 - b1)
        v_hat = g * g
        expected = p0 - lr * m_hat / (v_hat.sqrt() + eps)
        assert_close(p, expected, rtol=1e-12, atol=1e-15, msg=name)


def test_adamw_decay_is_decoupled_per_module():
    # AdamW's first step: w <- w (1 - lr wd_l) - lr * sign-like term; the decoupled part alone
    # is visible with a zero gradient (the Adam term is then exactly 0).
    model = _model(dtype=torch.float64)
    before = copy.deepcopy(model)
    opt = AlphaDecayAdamW(model, lr=1e-2, weight_decay=0.1, min_eigs=8)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)
    opt.step()
    for (name, p), p0 in zip(model.named_parameters(), before.parameters(), strict=True):
        wd = opt.last_decays.get(name.rsplit(".", 1)[0], 0.1)
        assert_close(p, p0 * (1 - 1e-2 * wd), rtol=1e-14, atol=0, msg=name)


def test_determinism():
    def run():
        model = _model(seed=3)
        opt = AlphaDecayAdamW(model, lr=1e-2, update_every=3, min_eigs=8)
        _train(model, opt, 7)
        return torch.tensor(list(opt.last_alphas.values())), torch.tensor(
            list(opt.last_decays.values())
        )

    check_seeded_determinism(run)


def test_state_dict_round_trips_step_counter():
    model = _model()
    opt = AlphaDecayAdamW(model, lr=1e-2, update_every=3, min_eigs=8)
    _train(model, opt, 5)
    state = opt.state_dict()
    fresh = AlphaDecayAdamW(copy.deepcopy(model), lr=1e-2, update_every=3, min_eigs=8, s2=9.0)
    fresh.load_state_dict(state)
    assert fresh.alpha_step == 5 and fresh.last_alphas == opt.last_alphas
    assert [g["weight_decay"] for g in fresh.param_groups] == [
        g["weight_decay"] for g in opt.param_groups
    ]


def test_scheduler_with_sgd():
    model = _model()
    opt = torch.optim.SGD(module_param_groups(model, 0.01, min_eigs=8), lr=0.1, weight_decay=0.01)
    sched = AlphaDecayScheduler(model, opt, update_every=2, min_eigs=8)
    first = dict(sched.last_decays)
    assert {g["module"]: g["weight_decay"] for g in opt.param_groups if g["module"]} == first
    _train(model, opt, 4, after=sched.step)
    assert sched.step_count == 4 and sched.last_decays != first
    current = {g["module"]: g["weight_decay"] for g in opt.param_groups if g["module"]}
    assert current == sched.last_decays
    restored = AlphaDecayScheduler(model, opt, update_every=2, min_eigs=8)
    restored.load_state_dict(sched.state_dict())
    assert restored.step_count == 4


def test_errors():
    model = _model()
    assert_param_error(AlphaDecayAdamW, model, s1=3.0, s2=1.0, min_eigs=8, param="s2")
    assert_param_error(AlphaDecayAdamW, model, weight_decay=-1.0, min_eigs=8, param="weight_decay")
    assert_param_error(AlphaDecayAdamW, model, update_every=0, min_eigs=8, param="update_every")
    assert_param_error(AlphaDecayAdam, model, fit="powerlaw", min_eigs=8, param="fit")
    with pytest.raises(ValueError, match="'fn' parameter of AlphaDecayAdamW"):
        AlphaDecayAdamW(model, fn="exp", min_eigs=8)  # assert_param_error keeps `fn` for itself
    assert_param_error(AlphaDecayAdamW, model, lr=float("nan"), min_eigs=8, param="lr")
    assert_param_error(AlphaDecayAdamW, model, betas=(0.9, 1.0), min_eigs=8, param="betas")
    assert_param_error(AlphaDecayAdamW, nn.Sequential(nn.LayerNorm(4)), param="model")
    assert_param_error(AlphaDecayAdamW, model.parameters(), param="model", exc=TypeError)
    other = torch.optim.SGD(nn.Linear(3, 3).parameters(), lr=0.1)
    assert_param_error(AlphaDecayScheduler, model, other, min_eigs=8, param="optimizer")
    with torch.no_grad():
        model.model.layers[1].mlp.up_proj.weight[0, 0] = float("nan")
    opt_err = assert_param_error(AlphaDecayAdamW, model, min_eigs=8, param="model")
    assert "layers.1.mlp.up_proj" in str(opt_err)


def test_scheduler_splits_plain_groups():
    # a plain SGD over model.parameters(): the scheduler moves each tracked module into its own
    # group; with s1 = s2 = 1 the run equals plain SGD with one decay, bitwise.
    model, reference = _model(), _model()
    opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    sched = AlphaDecayScheduler(model, opt, s1=1.0, s2=1.0, update_every=2, min_eigs=8)
    names = [g["module"] for g in opt.param_groups]
    assert names[0] is None and names[1:] == list(module_alphas(model, min_eigs=8))
    assert all(g["momentum"] == 0.9 for g in opt.param_groups)
    assert sum(len(g["params"]) for g in opt.param_groups) == len(list(model.parameters()))
    ref_opt = torch.optim.SGD(reference.parameters(), lr=0.1, momentum=0.9, weight_decay=0.01)
    _train(model, opt, 5, after=sched.step)
    _train(reference, ref_opt, 5)
    for p, q in zip(model.parameters(), reference.parameters(), strict=True):
        assert torch.equal(p, q)
    spread = AlphaDecayScheduler(model, opt, base_wd=0.01, update_every=2, min_eigs=8)
    assert len(set(spread.last_decays.values())) > 2
