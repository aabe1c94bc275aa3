"""The LION layer: the backends on one set of weights, snake orders, reversal equivariance,
contracts."""

import pytest
import torch

from lion import LionAttention, snake_orders
from paperkit.testing import (
    assert_close,
    assert_param_error,
    check_dtype_device,
    check_finite,
    check_seeded_determinism,
    check_state_dict_roundtrip,
)


def _layer(decay, order="raster", **kwargs):
    torch.manual_seed(0)
    layer = LionAttention(16, 2, decay=decay, order=order, **kwargs).double()
    if decay == "d":  # spread the decays so that the mask matters
        with torch.no_grad():
            layer.decay_logit.copy_(torch.tensor([[-1.0, 2.0]] * layer.decay_logit.shape[0]))
    return layer


@pytest.mark.parametrize("order", ["raster", "snake"])
@pytest.mark.parametrize("decay", ["lit", "d", "s"])
def test_set_backend_gives_the_same_outputs(decay, order):
    """set_backend switches between equal forms on the same weights (float64), also in snake
    order (25 tokens = a 5 x 5 grid, 26 = the grid after a class token)."""
    layer = _layer(decay, order, chunk_size=4)
    for n in (25, 26):
        x = torch.randn(2, n, 16, dtype=torch.float64)
        ref = layer.set_backend("reference")(x)
        for backend in ("rnn", "chunk", "auto"):
            assert_close(layer.set_backend(backend)(x), ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("decay", ["lit", "d", "s"])
def test_reversal_equivariance(decay):
    """layer(x.flip(1)) == layer(x).flip(1) in raster order, from the mask definition
    (key-inclusive, query-exclusive products); false for a causal layer."""
    layer = _layer(decay)
    x = torch.randn(2, 13, 16, dtype=torch.float64)
    assert_close(layer(x.flip(1)), layer(x).flip(1), rtol=0, atol=1e-12)


def test_snake_orders_are_serpentines():
    rows, cols = snake_orders(3, 4)
    assert rows.tolist() == [0, 1, 2, 3, 7, 6, 5, 4, 8, 9, 10, 11]
    assert cols.tolist() == [0, 4, 8, 9, 5, 1, 2, 6, 10, 11, 7, 3]
    rows, _ = snake_orders(2, 2, prefix=1)  # a class token keeps its place
    assert rows.tolist() == [0, 1, 2, 4, 3]


def test_snake_mask_is_the_average_of_the_two_orders():
    """In snake order with LIT decays the mask is all ones in both orders: the layer equals the
    raster layer with the same weights."""
    torch.manual_seed(0)
    snake = LionAttention(16, 2, decay="lit", order="snake").double()
    raster = LionAttention(16, 2, decay="lit").double()
    raster.load_state_dict(snake.state_dict())
    x = torch.randn(2, 16, 16, dtype=torch.float64)
    assert_close(snake(x), raster(x), rtol=0, atol=1e-12)


def test_snake_uses_two_sets_of_decays():
    layer = LionAttention(16, 2, decay="s", order="snake")
    assert len(layer.decay_proj) == 2
    assert LionAttention(16, 2, decay="d", order="snake").decay_logit.shape == (2, 2)


def test_contracts():
    def make():
        return LionAttention(16, 4, decay="s")

    x = torch.randn(2, 9, 16)
    check_seeded_determinism(lambda: make()(x))
    check_state_dict_roundtrip(make, x)
    check_finite(check_dtype_device(make(), x))
    check_dtype_device(make().double(), x.double())


def test_bad_arguments():
    """What tests/test_bad_inputs.py does not derive: choices, divisibility, the grid, NaN from
    every backend, another dtype."""
    assert_param_error(LionAttention, 16, 4, decay="x", param="decay")
    assert_param_error(LionAttention, 16, 4, backend="attention", param="backend")
    assert_param_error(LionAttention, 16, 4, order="hilbert", param="order")
    assert_param_error(LionAttention, 16, 4, backend="cuda", param="backend")
    assert_param_error(LionAttention, 16, 4, backend="triton", param="backend")  # head size 4
    assert_param_error(LionAttention, 16, 4, chunk_size=0, param="chunk_size")
    assert_param_error(LionAttention, 18, 4, param="dim")
    assert_param_error(LionAttention(16, 4).set_backend, "parallel", param="backend")
    layer = LionAttention(16, 4)
    assert_param_error(layer, torch.randn(2, 5, 8), param="x")
    assert_param_error(layer, torch.randn(2, 5, 16, dtype=torch.float64), param="x", exc=TypeError)
    assert_param_error(LionAttention(16, 4, order="snake"), torch.randn(1, 7, 16), param="x")
    assert_param_error(
        LionAttention(16, 4, order="snake", grid=(2, 3)), torch.randn(1, 9, 16), param="x"
    )
    x = torch.randn(1, 6, 16)
    x[0, 2, 3] = float("nan")
    for backend in ("reference", "chunk", "rnn", "auto"):
        assert_param_error(LionAttention(16, 4, backend=backend), x, param="x")
