"""The fused Triton kernels (forward and backward) against the reference: under TRITON_INTERPRET=1
on the CPU (marked interpret, tiny sizes), and at full size on a GPU (marked gpu)."""

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_leaves

from flashbias import flash_bias_attention
from paperkit.bench import loglog_slope, peak_memory
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


def _weights(shape, device="cpu"):
    """A fixed, non-constant cotangent for the output."""
    n = torch.Size(shape).numel()
    return torch.linspace(-1, 1, n, device=device).reshape(shape).cos()


def _grads(inputs, backend, w=None, **kwargs):
    """Output and the gradients of <out, w> (default ``_weights``) for every given input."""
    xs = [x.clone().requires_grad_() if x is not None else None for x in inputs]
    out = flash_bias_attention(*xs, backend=backend, **kwargs)
    w = _weights(out.shape, out.device) if w is None else w
    (out.float() * w).sum().backward()
    return [out.detach().float()] + [x.grad.float() for x in xs if x is not None]


@pytest.mark.interpret
@pytest.mark.parametrize(
    ("causal", "with_mask", "factors"),
    [
        (False, False, "shared"),
        (True, True, "per_batch"),
        (False, True, "none"),
        (True, False, "per_batch"),
    ],
)
def test_triton_backward_matches_reference(causal, with_mask, factors, qkv):
    """Ragged N != M, d and R not powers of two, factors shared by the batch (their gradient is
    summed over it), given per batch, or absent; broadcast float mask; causal."""
    q, k, v, q_b, k_b = qkv(B=2, N=40, M=50, H=1, d=12, R=3, dtype=torch.float32)
    if factors == "per_batch":
        q_b, k_b = torch.randn(2, 40, 1, 3), torch.randn(2, 50, 1, 3)
    elif factors == "none":
        q_b = k_b = None
    mask = torch.randn(2, 1, 40, 50) if with_mask else None
    kw = dict(attn_mask=mask, causal=causal)
    got = _grads((q, k, v, q_b, k_b), "triton", **kw)
    ref = _grads((q, k, v, q_b, k_b), "reference", **kw)
    assert len(got) == (4 if factors == "none" else 6)
    for a, b in zip(got, ref, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.interpret
def test_triton_backward_at_the_largest_tiny_size(qkv):
    """N = 64, d = 32, R = 16: two blocks each way in the interpreter, no padding of d or R."""
    inputs = qkv(B=1, N=64, H=1, d=32, R=16, dtype=torch.float32)
    got = _grads(inputs, "triton", causal=True)
    ref = _grads(inputs, "reference", causal=True)
    for a, b in zip(got, ref, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.interpret
@pytest.mark.parametrize("causal", [False, True])
def test_triton_directional_derivatives_float32(causal, qkv):
    """gradcheck-style, per input: the fused backward's <grad, u> against central differences
    (L(x + hu) - L(x - hu)) / 2h of the fused forward itself, fp32, random direction u.
    A 1% error in any one gradient gives a relative mismatch of ~1e-2; exact gives <= 4e-4."""
    inputs = qkv(B=1, N=20, M=24, H=1, d=6, R=2, dtype=torch.float32)
    g = torch.Generator().manual_seed(1)
    w = torch.randn(1, 20, 1, 6, generator=g)

    def loss(*xs):
        return (flash_bias_attention(*xs, causal=causal, backend="triton").double() * w).sum()

    xs = [x.clone().requires_grad_() for x in inputs]
    loss(*xs).backward()
    h = 1e-2
    for i, x in enumerate(inputs):
        u = torch.randn(x.shape, generator=g)
        plus = [y + h * u if j == i else y for j, y in enumerate(inputs)]
        minus = [y - h * u if j == i else y for j, y in enumerate(inputs)]
        numerical = ((loss(*plus) - loss(*minus)) / (2 * h)).item()
        analytical = (xs[i].grad.double() * u).sum().item()
        assert abs(numerical - analytical) <= 3e-3 * abs(numerical), (i, numerical, analytical)


@pytest.mark.interpret
def test_triton_backward_with_a_fully_masked_row(qkv):
    """A query row whose every key is masked gets output 0 and gradient 0, and adds nothing to
    the key-side gradients: they equal the reference's on the other rows."""
    q, k, v, q_b, k_b = qkv(B=1, N=24, M=20, H=2, d=8, R=2, dtype=torch.float32)
    mask = torch.randn(1, 2, 24, 20)
    mask[:, :, 5] = -torch.inf
    w = _weights(q.shape)
    got = _grads((q, k, v, q_b, k_b), "triton", w, attn_mask=mask)
    keep = torch.arange(24) != 5
    ref_inputs = (q[:, keep], k, v, q_b[:, keep], k_b)
    ref = _grads(ref_inputs, "reference", w[:, keep], attn_mask=mask[:, :, keep])
    out, dq, dk, dv, dqb, dkb = got
    assert out[:, 5].abs().max() == 0 and dq[:, 5].abs().max() == 0 and dqb[:, 5].abs().max() == 0
    for a, b in zip((out[:, keep], dq[:, keep], dk, dv, dqb[:, keep], dkb), ref, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


def _check_low_precision(inputs64, dtype, **kwargs):
    """Output and gradients against the float64 reference: the fused kernel's error is at most
    3x that of the reference path run in the same dtype (the FlashAttention test convention)."""
    truth = _grads(inputs64, "reference", **kwargs)
    low = [x.to(dtype) for x in inputs64]
    ref = _grads(low, "reference", **kwargs)
    got = _grads(low, "triton", **kwargs)
    for a, b, t in zip(got, ref, truth, strict=True):
        t = t.float()
        assert (a - t).abs().max() <= 3 * (b - t).abs().max() + 1e-5 * t.abs().max()


@pytest.mark.interpret
def test_triton_backward_float16_in_the_interpreter(qkv):
    """fp16 tiles and fp32 accumulators (bf16 ``tl.dot`` is not emulated by the interpreter)."""
    _check_low_precision(qkv(B=2, N=64, M=50, H=1, d=32, R=16), torch.float16, causal=True)


@pytest.mark.interpret
def test_triton_widest_head_in_the_interpreter(qkv):
    """d = 100, R = 5 (padded to D = 128, RP = 32 in fp16: the 16 x 32 forward and 16 x 16
    backward tiles the gate compiles there), ragged N != M, causal, against the float64
    reference as in the fp16 test above; and fp32 (8-warp backward) against the reference."""
    inputs = qkv(B=1, N=40, M=36, H=1, d=100, R=5)
    _check_low_precision(inputs, torch.float16, causal=True)
    inputs = [x.float() for x in inputs]
    got = _grads(inputs, "triton", causal=True)
    ref = _grads(inputs, "reference", causal=True)
    for a, b in zip(got, ref, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


class LargestTensor(TorchDispatchMode):
    """Records the element count of the largest floating tensor any torch op creates while
    active (the kernels' launches are no torch ops and allocate nothing; the interpreter's byte
    views of their arguments are not counted)."""

    def __init__(self):
        super().__init__()
        self.numel = 0

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        for t in tree_leaves(out):
            if isinstance(t, torch.Tensor) and t.dtype.is_floating_point:
                self.numel = max(self.numel, t.numel())
        return out


@pytest.mark.interpret
def test_triton_backward_materialises_no_n_by_m_tensor(qkv):
    """The largest tensor the backward creates grows like N (slope 1 in N = M) for the kernels,
    like N² for the reference (its scores): the kernels work on tiles."""
    largest = {"triton": [], "reference": []}
    for backend, sizes in largest.items():
        for N in (64, 128):
            xs = [x.requires_grad_() for x in qkv(B=1, N=N, H=1, d=16, R=2, dtype=torch.float32)]
            out = flash_bias_attention(*xs, causal=True, backend=backend)
            with LargestTensor() as probe:
                out.backward(_weights(out.shape))
            sizes.append(probe.numel)
    assert max(largest["triton"]) <= 128 * 128 // 2 < 128 * 128 <= max(largest["reference"])
    assert loglog_slope([64, 128], largest["triton"]) < 1.2
    assert loglog_slope([64, 128], largest["reference"]) > 1.7


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_triton_on_gpu_matches_reference(dtype, qkv):
    """fp32 at a fixed 2e-3; bf16 within 3x the error of a bf16 emulation (the fp32 reference on
    inputs rounded to bf16): bf16 storage of the inputs alone costs about 0.05 here, more than
    any fixed tolerance meant for the kernel's own rounding."""
    inputs = [x.cuda() for x in qkv(B=2, N=1000, H=8, d=64, R=16, dtype=torch.float32)]
    ref = flash_bias_attention(*inputs, causal=True, backend="reference")
    out = flash_bias_attention(*[x.to(dtype) for x in inputs], causal=True, backend="triton")
    if dtype == torch.float32:
        assert_close(out.float(), ref, rtol=0, atol=2e-3)
        return
    rounded = [x.to(dtype).float() for x in inputs]
    emulated = flash_bias_attention(*rounded, causal=True, backend="reference")
    bound = (emulated - ref).abs().max().item()
    assert 0 < (out.float() - ref).abs().max().item() <= 3 * bound


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("d", [64, 128])
def test_triton_backward_on_gpu_matches_reference(dtype, d, qkv):
    inputs = [x.cuda() for x in qkv(B=2, N=1000, M=900, H=4, d=d, R=16, dtype=torch.float64)]
    _check_low_precision(inputs, dtype, causal=True)


@pytest.mark.gpu
def test_triton_backward_memory_on_gpu(qkv):
    """At N = M = 16384, 8 heads, the backward allocates less than one head's fp32 N x M scores."""
    N = 16384
    raw = qkv(B=1, N=N, H=8, d=64, R=16, dtype=torch.float32)
    xs = [x.cuda().half().requires_grad_() for x in raw]
    out = flash_bias_attention(*xs, causal=True, backend="triton")
    w = torch.randn_like(out)
    assert peak_memory(lambda: out.backward(w), device="cuda") < N * N * 4
