import math

import numpy as np
import pytest
import torch
from torch import nn

from alphadecay import (
    assign_weight_decay,
    module_alphas,
    pl_alpha_hill,
    tiny_llama,
    tracked_modules,
)
from paperkit.testing import assert_param_error

ALPHAS = {"a": 2.0, "b": 3.5, "c": 5.0, "d": 2.75}


def test_linear_endpoints_and_monotone():
    lam, s1, s2 = 0.1, 2 / 3, 3.0
    wd = assign_weight_decay(ALPHAS, lam, s1, s2)
    assert wd["a"] == pytest.approx(s1 * lam, rel=1e-12)  # alpha_min
    assert wd["c"] == pytest.approx(s2 * lam, rel=1e-12)  # alpha_max
    # closed form of the interpolation for an interior point
    assert wd["b"] == pytest.approx(s1 * lam + (3.5 - 2) / 3 * (s2 - s1) * lam, rel=1e-12)
    order = sorted(ALPHAS, key=ALPHAS.get)
    assert [wd[n] for n in order] == sorted(wd.values())
    assert len(set(wd.values())) == 4


def test_equal_alphas_keep_base_decay():
    assert assign_weight_decay(dict.fromkeys("xyz", 3.0), 0.05) == dict.fromkeys("xyz", 0.05)


@pytest.mark.parametrize(("fn", "f"), [("sqrt", math.sqrt), ("log2", math.log2)])
def test_sqrt_and_log2_maps(fn, f):
    wd = assign_weight_decay(ALPHAS, 0.1, fn=fn)
    total = sum(f(a) for a in ALPHAS.values())
    for name, a in ALPHAS.items():
        assert wd[name] == pytest.approx(f(a) / total * 4 * 0.1, rel=1e-12)
    assert sum(wd.values()) == pytest.approx(0.4)


def test_tracked_modules_on_tinyllama():
    model = tiny_llama(30, d=32, n_layers=2, n_heads=2, ctx=16)
    names = list(tracked_modules(model, min_eigs=8))
    expected = [
        f"model.layers.{i}.{kind}"
        for i in range(2)
        for kind in [
            "self_attn.q_proj",
            "self_attn.k_proj",
            "self_attn.v_proj",
            "self_attn.o_proj",
            "mlp.gate_proj",
            "mlp.up_proj",
            "mlp.down_proj",
        ]
    ]
    assert names == expected[1:]  # the first Linear (layer 0's q_proj) and lm_head are dropped
    assert list(tracked_modules(model, min_eigs=8, drop_first_last=False)) == [
        *expected,
        "lm_head",
    ]
    # min(m, n) = 32 for every block matrix, 30 for lm_head (vocab)
    assert list(tracked_modules(model, min_eigs=31, drop_first_last=False)) == expected
    only_mlp = tracked_modules(model, min_eigs=8, include=lambda n, m: ".mlp." in n)
    assert list(only_mlp) == [n for n in expected if ".mlp." in n]


def test_module_alphas_values():
    torch.manual_seed(0)
    model = tiny_llama(30, d=32, n_layers=1, n_heads=2, ctx=16)
    alphas = module_alphas(model, min_eigs=8)
    assert set(alphas) == set(tracked_modules(model, min_eigs=8))
    for name, module in tracked_modules(model, min_eigs=8).items():
        assert alphas[name] == pl_alpha_hill(module.weight)
    assert all(np.isfinite(list(alphas.values())))


def test_errors():
    assert_param_error(assign_weight_decay, ALPHAS, 0.1, s1=3.0, s2=1.0, param="s2")
    assert_param_error(assign_weight_decay, ALPHAS, -0.1, param="base_wd")
    assert_param_error(assign_weight_decay, {}, 0.1, param="alphas")
    assert_param_error(assign_weight_decay, {"a": float("nan")}, 0.1, param="alphas")
    assert_param_error(assign_weight_decay, ALPHAS, 0.1, 2 / 3, 3.0, "exp", param="fn")
    assert_param_error(module_alphas, nn.Sequential(), param="model")  # empty model
    no_linear = nn.Sequential(nn.Embedding(10, 4), nn.LayerNorm(4))
    assert_param_error(module_alphas, no_linear, param="model")
    two_linears = nn.Sequential(nn.Linear(64, 64), nn.Linear(64, 64))
    assert_param_error(module_alphas, two_linears, param="model")  # both dropped
    assert_param_error(module_alphas, two_linears, min_eigs=0, param="min_eigs")
    assert_param_error(module_alphas, two_linears, method="mle", param="method")
    with pytest.raises(ValueError, match="'fn' parameter of assign_weight_decay"):
        assign_weight_decay(ALPHAS, 0.1, fn=3)  # assert_param_error keeps `fn` for itself
    broken = nn.Sequential(*(nn.Linear(64, 64) for _ in range(3)))
    with torch.no_grad():
        broken[1].weight[0, 0] = float("inf")
    err = assert_param_error(module_alphas, broken, param="model")
    assert "1.weight" in str(err)
