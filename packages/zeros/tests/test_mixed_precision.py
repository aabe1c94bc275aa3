"""bf16 against fp32: every layer under ``torch.autocast("cpu", dtype=torch.bfloat16)``, and the
operator's backends on bf16 inputs, forward and backward.

Tolerances come from a bf16 emulation: the fp32 computation on inputs (and parameters, and the
upstream gradient) rounded to bf16, with the output rounded to bf16 once. That is the error a
computation that only rounds its inputs and output would make; each bf16 result may be at most
``SLACK`` times as far from the fp32 reference (relative to the reference's largest entry), with
one bf16 rounding (2^-9) as the smallest error allowed. Intermediate products rounded to bf16
(the projections under autocast) make up the rest; in a trial run the ratios were 0.3 to
2.6. In fp16 one rounding is 2^-12.
"""

import copy
from contextlib import nullcontext

import pytest
import torch

from zeros.baselines import LinearAttention, SoftmaxAttention
from zeros.layers import ZeroSAttention
from zeros.models import TinyLM
from zeros.ops import zeros_attention

SLACK = 4.0
ROUNDING = 2.0**-9  # one bf16 rounding, relative
NAMES = ("q", "k", "v", "s", "gate1", "gateh", "gate0")


def _err(a, b):
    return ((a.float() - b).abs().max() / b.abs().max()).item()


def _bf16(x):
    return x.bfloat16().float()


def _check(result, emulated, reference, what, rounding=ROUNDING):
    tol = SLACK * max(_err(emulated, reference), rounding)
    err = _err(result, reference)
    assert err <= tol, f"{what}: 16-bit error {err:.2e} > {tol:.2e} ({SLACK:g} x emulation)"


def _run(module, x, weight, autocast, dtype=torch.bfloat16):
    module = copy.deepcopy(module)
    x = x.clone().requires_grad_(x.is_floating_point())
    with torch.autocast("cpu", dtype=dtype) if autocast else nullcontext():
        y = module(x)
    (y.float() * weight).sum().backward()
    grads = [x.grad] if x.is_floating_point() else []
    grads += [p.grad for p in module.parameters() if p.grad is not None]
    return y.float().detach(), y.dtype, grads


@pytest.mark.parametrize(
    ("make", "tokens"),
    [
        (lambda: ZeroSAttention(32, 2, first_layer=True), False),
        (lambda: ZeroSAttention(32, 2, logit_type="quadratic", causal=False), False),
        (lambda: SoftmaxAttention(32, 2), False),
        (lambda: LinearAttention(32, 2), False),
        pytest.param(
            lambda: TinyLM(vocab=40, dim=32, depth=2, heads=2), True, marks=pytest.mark.slow
        ),
    ],
    ids=["zeros", "zeros-noncausal", "softmax", "linear", "tinylm"],
)
def test_layers_under_bf16_autocast_match_fp32_within_the_emulated_error(make, tokens):
    torch.manual_seed(0)
    module = make()
    with torch.no_grad():  # away from the initialisation (mu = 0, tau = 1, zero biases)
        for p in module.parameters():
            p.add_(0.05 * torch.randn_like(p))
    T = 64 if tokens else 300  # past 256 positions: a bf16 position counter would stop there
    x = torch.randint(0, 40, (2, T)) if tokens else torch.randn(2, T, 32)
    weight = _bf16(torch.randn(2, T, 40 if tokens else 32))  # exact in bf16
    y_ref, _, g_ref = _run(module, x, weight, autocast=False)
    emulation = copy.deepcopy(module)
    with torch.no_grad():
        for p in emulation.parameters():
            p.copy_(_bf16(p))
    y_emu, _, g_emu = _run(emulation, _bf16(x) if not tokens else x, weight, autocast=False)
    y, dtype, g = _run(module, x, weight, autocast=True)
    assert dtype == torch.bfloat16
    _check(y, _bf16(y_emu), y_ref, "output")
    assert len(g) == len(g_ref)
    for i, (a, e, r) in enumerate(zip(g, g_emu, g_ref, strict=True)):
        _check(a, e, r, f"gradient {i}")


def test_zeros_layer_under_fp16_autocast_matches_fp32_within_the_emulated_error():
    """The same check in fp16 (11-bit significand: one rounding is 2^-12 relative)."""
    torch.manual_seed(0)
    module = ZeroSAttention(32, 2, first_layer=True)
    with torch.no_grad():
        for p in module.parameters():
            p.add_(0.05 * torch.randn_like(p))
    x = torch.randn(2, 300, 32)

    def fp16(t):
        return t.half().float()

    weight = fp16(torch.randn(2, 300, 32))
    y_ref, _, g_ref = _run(module, x, weight, autocast=False)
    emulation = copy.deepcopy(module)
    with torch.no_grad():
        for p in emulation.parameters():
            p.copy_(fp16(p))
    y_emu, _, g_emu = _run(emulation, fp16(x), weight, autocast=False)
    y, dtype, g = _run(module, x, weight, autocast=True, dtype=torch.float16)
    assert dtype == torch.float16
    _check(y, fp16(y_emu), y_ref, "output", rounding=2.0**-12)
    for i, (a, e, r) in enumerate(zip(g, g_emu, g_ref, strict=True)):
        _check(a, e, r, f"gradient {i}", rounding=2.0**-12)


def _grads(backend, xs, weight, **kw):
    xs = [x.clone().requires_grad_() for x in xs]
    out = zeros_attention(*xs, backend=backend, **kw)
    (out.float() * weight).sum().backward()
    return out, [x.grad for x in xs]


@pytest.mark.parametrize("backend", ["reference", "scan", "chunk"])
def test_torch_backends_on_bf16_inputs_match_fp32(backend, inputs):
    xs = inputs(B=2, T=300, H=2, d=16, dtype=torch.float32, scale=3.0, gate0=True)
    weight = _bf16(torch.randn(2, 300, 2, 16, generator=torch.Generator().manual_seed(1)))
    ref, g_ref = _grads("reference", xs, weight)
    emu, g_emu = _grads("reference", [_bf16(x) for x in xs], weight)
    out, g = _grads(backend, [x.bfloat16() for x in xs], weight, chunk_size=32)
    assert out.dtype == torch.bfloat16 and all(x.dtype == torch.bfloat16 for x in g)
    _check(out, _bf16(emu), ref, "output")
    for name, a, e, r in zip(NAMES, g, g_emu, g_ref, strict=True):
        _check(a, _bf16(e), r, name)


@pytest.mark.interpret
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16])
def test_triton_forward_and_backward_on_16_bit_inputs_match_fp32(dtype, inputs):
    """The kernel computes in fp32 and so does its backward's recompute, whatever it loads."""
    pytest.importorskip("triton")
    from paperkit import triton_interpret

    if not triton_interpret():
        pytest.skip("needs TRITON_INTERPRET=1")
    xs = inputs(B=1, T=80, H=2, d=16, dtype=torch.float32, scale=3.0, gate0=True)
    weight = _bf16(torch.randn(1, 80, 2, 16, generator=torch.Generator().manual_seed(1)))
    ref, g_ref = _grads("reference", xs, weight)
    emu, g_emu = _grads("reference", [x.to(dtype).float() for x in xs], weight)
    out, g = _grads("triton", [x.to(dtype) for x in xs], weight, chunk_size=32)
    assert out.dtype == dtype
    rounding = ROUNDING if dtype == torch.bfloat16 else 2.0**-12
    _check(out, emu.to(dtype).float(), ref, "output", rounding)
    for name, a, e, r in zip(NAMES, g, g_emu, g_ref, strict=True):
        _check(a, e.to(dtype).float(), r, name, rounding)
