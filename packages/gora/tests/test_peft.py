import copy

import torch
from torch import nn

from gora import (
    GoRALinear,
    apply_gora,
    apply_plan,
    load_factors_into_peft,
    peft_lora_layers,
    plan_gora,
    to_peft_config,
)
from paperkit.testing import assert_close, assert_param_error


class Tiny(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(
            nn.ModuleDict({"q": nn.Linear(12, 12), "up": nn.Linear(12, 24)}) for _ in range(2)
        )
        self.down = nn.Linear(24, 12)
        self.head = nn.Linear(12, 3)

    def forward(self, x):
        for block in self.blocks:
            x = x + self.down(torch.tanh(block["up"](torch.tanh(block["q"](x)))))
        return self.head(x)


def _loss(model, batch):
    return nn.functional.cross_entropy(model(batch[0]), batch[1])


def _data():
    gen = torch.Generator().manual_seed(0)
    return [(torch.randn(16, 12, generator=gen), torch.randint(0, 3, (16,), generator=gen))] * 4


def _plan(model, **kw):
    return plan_gora(
        model,
        _data(),
        _loss,
        ["q", "up", "down"],
        base_rank=4,
        lora_alpha=8,
        r_min=1,
        r_max=16,
        gamma=0.05,
        generator=torch.Generator().manual_seed(1),
        **kw,
    )


def test_peft_model_matches_the_native_model():
    torch.manual_seed(0)
    model = Tiny()
    plan = _plan(model)
    assert len(set(plan.ranks.values())) > 1  # a real per-layer allocation
    native = apply_plan(copy.deepcopy(model), plan, "native")
    peft_model = apply_plan(copy.deepcopy(model), plan, "peft")
    x = torch.randn(8, 12)
    assert_close(peft_model(x), native(x), rtol=0, atol=1e-6)
    # The GoRA init moved the output off the base model's (it is not B = 0).
    assert not torch.allclose(model(x), native(x), atol=1e-4)
    layers = peft_lora_layers(peft_model)
    for name, rank in plan.ranks.items():
        (layer,) = [m for n, m in layers.items() if n.endswith(name)]
        assert layer.r["default"] == rank
        assert layer.scaling["default"] == native.get_submodule(name).scaling
    merged = peft_model.merge_and_unload()
    assert_close(merged(x), native(x), rtol=0, atol=1e-5)


def test_config_carries_the_rank_pattern():
    config = to_peft_config({"a.q": 3, "a.k": 5, "b.q": 3, "b.k": 0}, lora_alpha=16)
    assert config.rank_pattern == {"a.q": 3, "a.k": 5, "b.q": 3}
    assert sorted(config.target_modules) == ["a.k", "a.q", "b.q"]
    assert config.r == 3 and config.use_rslora and config.lora_alpha == 16


def test_base_weights_are_bit_identical_after_apply_gora():
    for backend in ("peft", "native"):
        torch.manual_seed(0)
        model = Tiny()
        before = {k: v.clone() for k, v in model.state_dict().items()}
        adapted = apply_gora(model, _data(), _loss, ["q", "up"], base_rank=2, backend=backend)
        after = {
            k.replace("base_model.model.", "").replace(".base_layer", "").replace(".base.", "."): v
            for k, v in adapted.state_dict().items()
            if "lora_" not in k and not k.endswith((".A", ".B"))
        }
        assert set(after) == set(before)
        assert all(torch.equal(before[k], after[k]) for k in before)
        trainable = [n for n, p in adapted.named_parameters() if p.requires_grad]
        assert trainable and all(("lora_" in n) or n.endswith((".A", ".B")) for n in trainable)


def test_native_backend_replaces_targets_and_keeps_modules_to_save_trainable():
    torch.manual_seed(0)
    model = apply_gora(
        Tiny(), _data(), _loss, ["q"], base_rank=2, backend="native", modules_to_save=["head"]
    )
    assert all(isinstance(b["q"], GoRALinear) for b in model.blocks)
    assert model.head.weight.requires_grad and not model.down.weight.requires_grad


def test_gora_ablation_options():
    torch.manual_seed(0)
    model = Tiny()
    uniform = _plan(model, allocate=False)
    assert set(uniform.ranks.values()) == {4} and uniform.trainable == uniform.budget
    zero = _plan(model, init="lora")
    assert all(torch.count_nonzero(B) == 0 for _, B in zero.factors.values())


def test_interop_errors():
    torch.manual_seed(0)
    model = Tiny()
    plan = _plan(model)
    peft_model = apply_plan(copy.deepcopy(model), plan, "peft")
    name, (A, B) = next(iter(plan.factors.items()))
    assert_param_error(load_factors_into_peft, peft_model, {name: (A[:-1], B)}, param="factors")
    assert_param_error(load_factors_into_peft, peft_model, {"nope": (A, B)}, param="factors")
    assert_param_error(load_factors_into_peft, model, {name: (A, B)}, param="peft_model")
    assert_param_error(to_peft_config, {"q": 0}, param="ranks")
    assert_param_error(apply_plan, model, plan, "jax", param="backend")
    assert_param_error(
        apply_gora, model, _data(), _loss, ["head", "nothere"], param="target_modules"
    )


def test_plan_errors():
    model = Tiny()
    assert_param_error(
        plan_gora, model, _data(), _loss, ["q"], param="lora_alpha", lora_alpha=1e400
    )
    assert_param_error(plan_gora, model, _data(), _loss, ["q"], param="base_rank", base_rank=0)
    assert_param_error(plan_gora, model, _data(), _loss, ["q"], param="init", init="pissa")
    assert_param_error(plan_gora, model, _data(), _loss, ["q"], param="gamma", gamma=-1.0)
    assert_param_error(plan_gora, model, _data(), _loss, ["q"], param="r_min", r_min=9, r_max=8)


def test_errors_name_the_argument_of_the_function_called():
    def nan_loss(model, batch):
        return _loss(model, batch) * float("nan")

    for fn in (plan_gora, apply_gora):
        err = assert_param_error(fn, Tiny(), _data(), nan_loss, ["q"], param="loss_fn")
        assert f"of {fn.__name__} " in str(err)
        nan_data = [(torch.full((16, 12), float("nan")), y) for _, y in _data()]
        err = assert_param_error(fn, Tiny(), nan_data, _loss, ["q"], param="batches")
        assert f"of {fn.__name__} " in str(err)
    err = assert_param_error(apply_gora, Tiny(), _data(), _loss, ["q"], param="gamma", gamma=-1.0)
    assert "of apply_gora " in str(err)
