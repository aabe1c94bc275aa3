import pytest
import torch

from flashbias import dense_bias_attention, flash_bias_attention
from flashbias.decompose import factors_to_dense
from paperkit.testing import assert_close, assert_param_error, gradcheck64


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_mask", [False, True])
def test_sdpa_matches_reference(causal, with_mask, qkv):
    q, k, v, q_b, k_b = qkv(N=13, M=13)
    mask = torch.randn(1, 3, 13, 13, dtype=torch.float64) if with_mask else None
    ref = flash_bias_attention(
        q, k, v, q_b, k_b, attn_mask=mask, causal=causal, backend="reference"
    )
    out = flash_bias_attention(q, k, v, q_b, k_b, attn_mask=mask, causal=causal, backend="sdpa")
    assert_close(out, ref, rtol=0, atol=1e-12)


def test_reference_equals_dense_bias_attention(qkv):
    q, k, v, q_b, k_b = qkv(N=10, M=7)
    ref = dense_bias_attention(q, k, v, factors_to_dense(q_b, k_b), softmax_scale=0.3)
    out = flash_bias_attention(q, k, v, q_b, k_b, softmax_scale=0.3, backend="reference")
    assert_close(out, ref, rtol=0, atol=1e-12)


def test_no_bias_is_plain_attention(qkv):
    q, k, v, _, _ = qkv(N=9)
    zeros = torch.zeros(1, 3, 9, 9, dtype=torch.float64)
    assert_close(
        flash_bias_attention(q, k, v), dense_bias_attention(q, k, v, zeros), rtol=0, atol=1e-12
    )


def test_gradients_through_sdpa_match_the_dense_reference(qkv):
    inputs = qkv(N=12, M=10)
    grads = []
    for path in ("sdpa", "dense"):
        xs = [x.clone().requires_grad_() for x in inputs]
        q, k, v, q_b, k_b = xs
        if path == "dense":
            out = dense_bias_attention(q, k, v, factors_to_dense(q_b, k_b), causal=True)
        else:
            out = flash_bias_attention(q, k, v, q_b, k_b, causal=True, backend="sdpa")
        (out**2).sum().backward()
        grads.append([x.grad for x in xs])
    for a, b in zip(*grads, strict=True):
        assert_close(a, b, rtol=0, atol=1e-10)


def test_gradcheck_reference_path(qkv):
    q, k, v, q_b, k_b = qkv(B=1, N=5, M=4, H=2, d=3, R=2)

    def fn(*xs):
        return flash_bias_attention(*xs, causal=False, backend="reference")

    assert gradcheck64(fn, q, k, v, q_b, k_b)


def test_bad_inputs(qkv):
    q, k, v, q_b, k_b = qkv()
    f = flash_bias_attention
    assert_param_error(f, q, k, v, q_b, None, param="k_bias")
    assert_param_error(f, q, k, v, None, k_b, param="q_bias")
    assert_param_error(f, q, k, v, q_b, k_b[..., :2], param="k_bias")
    assert_param_error(f, q, k, v, q_b[:, :5], k_b, param="q_bias")
    assert_param_error(f, q.long(), k, v, param="q", exc=TypeError)
    assert_param_error(f, q, k, v, q_b, k_b, backend="flash", param="backend")
    assert_param_error(f, q, k, v, q_b, k_b, attn_mask=torch.zeros(2, 5, 5), param="attn_mask")
    assert_param_error(f, q, k[:, :, :2], v[:, :, :2], param="k")
    bad = q_b.clone()
    bad[0, 0, 0, 0] = float("inf")
    assert_param_error(f, q, k, v, bad, k_b, param="q_bias")
    wide = torch.zeros(1, 13, 3, 250, dtype=q.dtype)
    assert_param_error(f, q, k, v, wide, wide, backend="triton", param="q_bias")
    assert_param_error(dense_bias_attention, q, k, v, torch.zeros(1, 3, 13, 12), param="bias")
