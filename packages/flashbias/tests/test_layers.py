import pytest
import torch

from flashbias import BiasedAttention, dense_bias_attention
from flashbias.data import swin_cpb_bias
from flashbias.decompose import alibi_bias
from paperkit.testing import assert_close, assert_param_error


def _dense_forward(layer, x, bias, causal):
    q, k, v = layer.qkv(x).unflatten(-1, (3, layer.heads, -1)).unbind(2)
    out = dense_bias_attention(q, k, v, bias.to(x), causal=causal)
    return layer.proj(out.flatten(2))


def test_alibi_layer_matches_dense_alibi():
    torch.manual_seed(0)
    layer = BiasedAttention(16, 4, bias_kind="alibi").double()
    x = torch.randn(2, 21, 16, dtype=torch.float64)
    assert_close(layer(x), _dense_forward(layer, x, alibi_bias(21, 4), True), rtol=0, atol=1e-10)


def test_distance_layer_matches_dense_distance_bias():
    torch.manual_seed(0)
    layer = BiasedAttention(16, 2, bias_kind="distance").double()
    x = torch.randn(1, 15, 16, dtype=torch.float64)
    pos = torch.rand(1, 15, 3, dtype=torch.float64)
    w = torch.nn.functional.softplus(layer.log_weight)
    bias = -w[None, :, None, None] * torch.cdist(pos, pos)[:, None].pow(2)
    assert_close(layer(x, coords=pos), _dense_forward(layer, x, bias, False), rtol=0, atol=1e-10)


def test_svd_layer_with_full_rank_is_exact():
    torch.manual_seed(0)
    layer = BiasedAttention(8, 2, bias_kind="svd", rank=16).double()
    bias = swin_cpb_bias(4, 2, seed=0)
    assert layer.set_static_bias(bias) == 16
    x = torch.randn(1, 16, 8, dtype=torch.float64)
    assert_close(layer(x), _dense_forward(layer, x, bias[None], False), rtol=0, atol=1e-10)


@pytest.mark.parametrize("kind", ["neural", None])
def test_other_kinds_run_and_backpropagate(kind):
    layer = BiasedAttention(8, 2, bias_kind=kind, rank=4)
    x = torch.randn(2, 10, 8, requires_grad=True)
    y = layer(x)
    y.sum().backward()
    assert y.shape == (2, 10, 8) and torch.isfinite(x.grad).all()


def test_bad_arguments():
    assert_param_error(BiasedAttention, 10, 3, param="dim")
    assert_param_error(BiasedAttention, 8, 2, bias_kind="rope", param="bias_kind")
    layer = BiasedAttention(8, 2, bias_kind="distance")
    assert_param_error(layer, torch.randn(1, 5, 8), param="coords")
    assert_param_error(layer, torch.randn(1, 5, 7), param="x")
