"""The fused Triton kernel against the pure-torch scan: under TRITON_INTERPRET=1 on the CPU
(marked interpret), and at full size on a GPU (marked gpu)."""

import pytest
import torch

from paperkit.testing import assert_close, requires_triton
from zeros.ops import zeros_attention

pytestmark = requires_triton


@pytest.mark.interpret
@pytest.mark.parametrize("gate0", [False, True])
@pytest.mark.parametrize(("T", "chunk_size"), [(64, 64), (64, 16), (50, 32)])
def test_triton_matches_scan_in_the_interpreter(gate0, T, chunk_size, nan_empty, inputs):
    q, k, v, s, g1, gh, g0 = inputs(B=2, T=T, H=2, d=16, dtype=torch.float32, gate0=gate0)
    ref = zeros_attention(q, k, v, s, g1, gh, g0, backend="scan")
    out = zeros_attention(q, k, v, s, g1, gh, g0, backend="triton", chunk_size=chunk_size)
    assert_close(out, ref, rtol=0, atol=1e-4)


@pytest.mark.interpret
def test_triton_backward_matches_scan(inputs):
    q, k, v, s, g1, gh, g0 = inputs(B=1, T=40, H=2, d=16, dtype=torch.float32, gate0=True)
    grads = []
    for backend in ("triton", "scan"):
        xs = [x.clone().requires_grad_() for x in (q, k, v, s, g1, gh, g0)]
        (zeros_attention(*xs, backend=backend, chunk_size=16) ** 2).sum().backward()
        grads.append([x.grad for x in xs])
    for a, b in zip(*grads, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_triton_on_gpu_matches_scan(dtype, inputs):
    q, k, v, s, g1, gh, g0 = inputs(
        B=4, T=2048, H=8, d=64, dtype=torch.float32, scale=5.0, gate0=True
    )
    xs = [x.cuda() for x in (q, k, v, s, g1, gh, g0)]
    ref = zeros_attention(*xs, backend="chunk")
    out = zeros_attention(*(x.to(dtype) for x in xs), backend="triton").float()
    tol = (1e-4 if dtype == torch.float32 else 3e-2) * ref.abs().max().item()
    assert_close(out, ref, rtol=0, atol=tol)


@pytest.mark.gpu
def test_triton_on_gpu_matches_flash_linear_attention(inputs):
    """The kernel equals one unnormalised causal linear attention over augmented features
    k' = [e^{s-m} k, s k, k], q' = [alpha q, beta q, gamma q]; fla computes the latter."""
    fla = pytest.importorskip("fla.ops.linear_attn")
    q, k, v, s, g1, gh, _ = inputs(B=2, T=1024, H=4, d=64, dtype=torch.float32, scale=2.0)
    q, k, v, s, g1, gh = (x.cuda() for x in (q, k, v, s, g1, gh))
    qn, kn = torch.nn.functional.normalize(q, dim=-1), torch.nn.functional.normalize(k, dim=-1)
    m = s.amax(dim=1, keepdim=True)
    w = torch.exp(s - m)
    t = torch.arange(1, s.shape[1] + 1, device="cuda", dtype=s.dtype).view(1, -1, 1)
    alpha, beta = gh / torch.cumsum(w, 1), (g1 - gh) / t
    gamma = -(beta * torch.cumsum(s, 1) + gh) / t
    k_aug = torch.cat([w[..., None] * kn, s[..., None] * kn, kn], dim=-1)
    q_aug = torch.cat([alpha[..., None] * qn, beta[..., None] * qn, gamma[..., None] * qn], dim=-1)
    ref, _ = fla.chunk_linear_attn(q_aug, k_aug, v, scale=1.0, normalize=False)
    out = zeros_attention(q, k, v, s, g1, gh, backend="triton")
    assert_close(out, ref, rtol=0, atol=1e-3 * ref.abs().max().item())
