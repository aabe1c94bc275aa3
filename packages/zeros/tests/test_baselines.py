import torch

from paperkit.testing import assert_close, assert_param_error, check_dtype_device
from zeros import LinearAttention, SoftmaxAttention


def test_softmax_matches_explicit_attention():
    torch.manual_seed(0)
    layer = SoftmaxAttention(16, 2, rope=False).double()
    x = torch.randn(1, 7, 16, dtype=torch.float64)
    q, k, v = layer.in_proj(x).view(1, 7, 3, 2, 8).unbind(2)
    scores = torch.einsum("bthd,bihd->bhti", q, k) / 8**0.5
    scores = scores.masked_fill(~torch.ones(7, 7, dtype=torch.bool).tril(), float("-inf"))
    o = torch.einsum("bhti,bihd->bthd", scores.softmax(-1), v).reshape(1, 7, 16)
    assert_close(layer(x), layer.out_proj(o), rtol=0, atol=1e-12)


def test_linear_attention_is_convex_and_matches_the_prefix_sum_form():
    torch.manual_seed(0)
    for feature_map in ("elu1", "relu"):
        layer = LinearAttention(16, 2, feature_map=feature_map).double()
        x = torch.randn(1, 9, 16, dtype=torch.float64)
        q, k, v = layer.in_proj(x).view(1, 9, 3, 2, 8).unbind(2)
        fq, fk = layer.phi(q), layer.phi(k)
        num = torch.einsum("bthd,bthe->bthde", fk, v).cumsum(1)
        den = fk.cumsum(1)
        o = torch.einsum("bthd,bthde->bthe", fq, num) / (
            torch.einsum("bthd,bthd->bth", fq, den)[..., None] + layer.eps
        )
        assert_close(layer(x), layer.out_proj(o.reshape(1, 9, 16)), rtol=0, atol=1e-10)


def test_dtype_device_and_errors():
    check_dtype_device(SoftmaxAttention(16, 2), torch.randn(2, 5, 16))
    check_dtype_device(LinearAttention(16, 2, causal=False), torch.randn(2, 5, 16))
    assert_param_error(LinearAttention, 16, 2, feature_map="exp", param="feature_map")
    assert_param_error(SoftmaxAttention, 16, 3, param="num_heads")
    assert_param_error(SoftmaxAttention(16, 2), torch.randn(5, 16), param="x")
