"""The fused Triton kernel against the reference: under TRITON_INTERPRET=1 on the CPU (marked
interpret), and at full size on a GPU (marked gpu)."""

import pytest
import torch

from flashbias import flash_bias_attention
from paperkit.testing import assert_close, requires_triton

pytestmark = requires_triton


@pytest.mark.interpret
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("with_mask", [False, True])
def test_triton_matches_reference_in_the_interpreter(causal, with_mask, nan_empty, qkv):
    q, k, v, q_b, k_b = qkv(B=1, N=64, H=2, d=16, R=4, dtype=torch.float32)
    mask = torch.randn(1, 2, 64, 64) if with_mask else None
    ref = flash_bias_attention(
        q, k, v, q_b, k_b, attn_mask=mask, causal=causal, backend="reference"
    )
    out = flash_bias_attention(q, k, v, q_b, k_b, attn_mask=mask, causal=causal, backend="triton")
    sdpa = flash_bias_attention(q, k, v, q_b, k_b, attn_mask=mask, causal=causal, backend="sdpa")
    assert_close(out, ref, rtol=0, atol=1e-5)
    assert_close(sdpa, ref, rtol=0, atol=1e-5)


@pytest.mark.interpret
def test_triton_ragged_lengths_and_gradients(qkv):
    inputs = qkv(B=2, N=40, M=50, H=2, d=12, R=3, dtype=torch.float32)
    grads = []
    for backend in ("triton", "reference"):
        xs = [x.clone().requires_grad_() for x in inputs]
        out = flash_bias_attention(*xs, causal=True, backend=backend)
        (out**2).sum().backward()
        grads.append([out.detach()] + [x.grad for x in xs])
    for a, b in zip(*grads, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_triton_on_gpu_matches_reference(dtype, qkv):
    inputs = [x.cuda() for x in qkv(B=2, N=1000, H=8, d=64, R=16, dtype=torch.float32)]
    ref = flash_bias_attention(*inputs, causal=True, backend="reference")
    out = flash_bias_attention(*[x.to(dtype) for x in inputs], causal=True, backend="triton")
    tol = 2e-3 if dtype == torch.float32 else 5e-2
    assert_close(out.float(), ref, rtol=0, atol=tol)
