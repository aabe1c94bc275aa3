import math
from functools import partial

import pytest
import torch

from flashbias import dense_bias_attention, flash_bias_attention
from flashbias.decompose import factors_to_dense
from paperkit import triton_available
from paperkit.testing import assert_close, assert_param_error, gradcheck64

#: Every backend that runs here: the Triton kernels under the interpreter on a CPU machine.
BACKENDS_HERE = ["reference", "sdpa"] + (["triton"] if triton_available() else [])


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
    assert_param_error(dense_bias_attention, q, k, v, torch.zeros(1, 3, 13, 12), param="bias")
    assert_param_error(f, q, k.float(), v, param="k", exc=TypeError)  # k not in q's dtype
    assert_param_error(f, q, k, v, q_b, k_b, causal=1, param="causal", exc=TypeError)


@pytest.mark.skipif(not triton_available(), reason="needs Triton (a GPU or its interpreter)")
def test_triton_refuses_what_its_kernels_do_not_take(qkv):
    q, k, v, _, _ = qkv(N=13)
    wide = torch.zeros(1, 13, 3, 250, dtype=torch.float32)
    f = partial(flash_bias_attention, backend="triton")
    assert_param_error(f, q.float(), k.float(), v.float(), wide, wide, param="q_bias")
    assert_param_error(f, q, k, v, param="q", exc=TypeError)  # float64


@pytest.mark.parametrize("backend", BACKENDS_HERE)
def test_nan_policy_is_the_same_on_every_backend(backend, qkv):
    """Non-finite inputs and scales are refused before any backend runs; the mask may hold -inf
    but not NaN or +inf; zero keys are refused."""
    q, k, v, q_b, k_b = qkv(B=1, N=16, H=2, d=8, R=2, dtype=torch.float32)
    f = partial(flash_bias_attention, backend=backend)
    for name, bad in (("q", float("nan")), ("k", float("inf")), ("v", float("nan"))):
        args = {"q": q, "k": k, "v": v}
        args[name] = args[name].clone()
        args[name][0, 3, 1, 2] = bad
        assert_param_error(f, args["q"], args["k"], args["v"], q_b, k_b, param=name)
    bad_b = k_b.clone()
    bad_b[0, 0, 0, 0] = float("-inf")
    assert_param_error(f, q, k, v, q_b, bad_b, param="k_bias")
    for scale in (float("nan"), float("inf"), 0.0, -0.5):
        assert_param_error(f, q, k, v, softmax_scale=scale, param="softmax_scale")
    for bad in (float("nan"), float("inf")):
        mask = torch.zeros(16, 16)
        mask[2, 5] = bad
        assert_param_error(f, q, k, v, attn_mask=mask, param="attn_mask")
    assert_param_error(f, q, k[:, :0], v[:, :0], param="k")


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backend", BACKENDS_HERE)
def test_a_fully_masked_row_gives_zero_output_and_gradient(backend, causal, qkv):
    """Every key of query row 3 masked (all heads) and of row 7 in head 0: those outputs and their
    q, q_bias gradients are 0 on every backend, every other value equals the reference's."""
    inputs = qkv(B=1, N=16, M=12, H=2, d=8, R=2, dtype=torch.float32)
    mask = torch.zeros(1, 2, 16, 12)
    mask[:, :, 3] = -math.inf
    mask[:, 0, 7] = -math.inf
    w = torch.linspace(-1, 1, 16 * 2 * 8).reshape(1, 16, 2, 8)
    results = {}
    for name in ("reference", backend):
        xs = [x.clone().requires_grad_() for x in inputs]
        out = flash_bias_attention(*xs, attn_mask=mask, causal=causal, backend=name)
        (out * w).sum().backward()
        results[name] = [out.detach()] + [x.grad for x in xs]
    out, dq, dk, dv, dqb, dkb = results[backend]
    for dead in (out[:, 3], out[:, 7, 0], dq[:, 3], dq[:, 7, 0], dqb[:, 3], dqb[:, 7, 0]):
        assert torch.equal(dead, torch.zeros_like(dead))
    for a, b in zip(results[backend], results["reference"], strict=True):
        assert torch.isfinite(a).all()
        assert_close(a, b, rtol=1e-4, atol=1e-5)


def test_reference_backend_refuses_scores_that_would_not_fit(qkv, monkeypatch):
    q, k, v, q_b, k_b = qkv(N=13)
    monkeypatch.setenv("PAPERKIT_MAX_BYTES", "10000")  # the scores need 3 x 2·3·13·13·8 bytes
    f = partial(flash_bias_attention, q, k, v, q_b, k_b)
    assert_param_error(f, backend="reference", param="backend")
    assert f(backend="sdpa").shape == q.shape  # no N x M array: not refused
