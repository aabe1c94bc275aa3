import torch
from torch import nn

from gora import GoRALinear, lora_scaling
from paperkit.testing import (
    assert_close,
    assert_param_error,
    check_dtype_device,
    check_finite,
    check_seeded_determinism,
    check_state_dict_roundtrip,
    gradcheck64,
)


def _layer(rank=3, **kw):
    return GoRALinear(nn.Linear(7, 5), rank, alpha=8, **kw)


def test_zero_b_equals_the_base_layer_exactly():
    layer = _layer()
    x = torch.randn(4, 2, 7)
    assert torch.equal(layer(x), layer.base(x))


def test_forward_is_base_plus_scaled_low_rank_update():
    A, B = torch.randn(3, 7), torch.randn(5, 3)
    for rslora in (True, False):
        layer = _layer(A=A, B=B, rslora=rslora)
        assert layer.scaling == lora_scaling(8, 3, rslora)
        x = torch.randn(6, 7)
        ref = x @ (layer.base.weight + layer.scaling * B @ A).T + layer.base.bias
        assert_close(layer(x), ref, rtol=1e-5, atol=1e-6)


def test_gradcheck_float64():
    layer = _layer(A=torch.randn(3, 7), B=torch.randn(5, 3)).double()

    def fn(x, A, B):
        return torch.func.functional_call(layer, {"A": A, "B": B}, (x,))

    assert gradcheck64(fn, torch.randn(4, 7), layer.A, layer.B)


def test_only_the_factors_train_and_merge_matches():
    layer = _layer(A=torch.randn(3, 7), B=torch.randn(5, 3))
    assert [n for n, p in layer.named_parameters() if p.requires_grad] == ["A", "B"]
    merged = layer.merge()
    assert type(merged) is nn.Linear
    x = torch.randn(9, 7)
    assert_close(merged(x), layer(x), rtol=1e-5, atol=1e-6)


def test_contracts():
    x = torch.randn(3, 7)
    check_seeded_determinism(lambda: _layer(B=torch.randn(5, 3))(x))
    check_finite(check_dtype_device(_layer().double(), x.double()))
    check_state_dict_roundtrip(lambda: _layer(B=torch.randn(5, 3)), x)


def test_layer_errors():
    assert_param_error(GoRALinear, nn.Conv1d(2, 2, 1), 2, param="base", exc=TypeError)
    assert_param_error(GoRALinear, nn.Linear(7, 5), 0, param="rank")
    assert_param_error(GoRALinear, nn.Linear(7, 5), 2, param="A", A=torch.zeros(3, 7))
    assert_param_error(GoRALinear, nn.Linear(7, 5), 2, param="B", B=torch.zeros(2, 5))
    assert_param_error(_layer(), torch.randn(2, 6), param="x")
    assert_param_error(GoRALinear, nn.Linear(7, 5), 2, float("inf"), param="alpha")
    # float64 into a float32 layer is refused like nn.Linear refuses it, not cast silently.
    assert_param_error(_layer(), torch.randn(2, 7, dtype=torch.float64), param="x", exc=TypeError)


def test_nan_propagates_through_the_layer_as_through_nn_linear():
    layer = _layer(B=torch.randn(5, 3))
    x = torch.randn(2, 7)
    x[0, 0] = float("nan")
    out = layer(x)
    assert out[0].isnan().all() and out[1].isfinite().all()
