"""Every layer under ``torch.autocast("cpu", dtype=torch.bfloat16)`` (and fp16 for the torch
paths), forward and backward, against the fp32 reference. The tolerance comes from an emulation:
the same computation in fp32 on inputs and parameters rounded to the low-precision dtype has an
error E against fp32 (what any such input costs); autocast, which also rounds intermediate
products, may be off by at most ``FACTOR`` x E (plus a floor of 4 units of roundoff for outputs
whose emulation error is ~0)."""

import copy

import pytest
import torch
from torch import nn

from doflinattn import HedgehogFeatureMap, LinearAttention, MLPFeatureMap
from doflinattn.teachers import TinySoftmaxEncoder
from paperkit.testing import requires_triton

#: How many times the bf16-emulation error autocast may reach.
FACTOR = 8.0
BF16_EPS = 2.0**-8  # unit roundoff of bf16
EPS = {torch.bfloat16: BF16_EPS, torch.float16: 2.0**-11}
LOW = [torch.bfloat16, torch.float16]


def _round(t, dtype=torch.bfloat16):
    return t.detach().to(dtype).float()


def _run(model, inputs, autocast, dtype=torch.bfloat16):
    model.zero_grad(set_to_none=True)
    xs = [x.detach().clone().requires_grad_(x.is_floating_point()) for x in inputs]
    with torch.autocast("cpu", dtype=dtype, enabled=autocast):
        out = model(*xs)
    w = torch.linspace(-1, 1, out.numel()).reshape(out.shape).cos()
    (out.float() * w).sum().backward()
    grads = [x.grad for x in xs if x.is_floating_point()] + [p.grad for p in model.parameters()]
    return [out.detach().float()] + [g.float() for g in grads]


def _rel(a, b):
    return float((a - b).abs().max() / b.abs().max().clamp_min(1e-12))


def check_against_emulation(model, inputs, dtype=torch.bfloat16):
    """Returns the autocast and emulation errors (relative to max |fp32|) of the output and of
    every gradient, after asserting autocast <= FACTOR x emulation + a floor of 4 ulps."""
    ref = _run(model, inputs, autocast=False)
    emul_model = copy.deepcopy(model)
    with torch.no_grad():
        for p in emul_model.parameters():
            p.copy_(_round(p, dtype))
    rounded = [_round(x, dtype) if x.is_floating_point() else x for x in inputs]
    emul = _run(emul_model, rounded, False)
    auto = _run(model, inputs, autocast=True, dtype=dtype)
    assert len(auto) == len(ref)
    rows = []
    for i, (a, e, r) in enumerate(zip(auto, emul, ref, strict=True)):
        err_auto, err_emul = _rel(a, r), _rel(e, r)
        rows.append((err_auto, err_emul))
        assert err_auto <= FACTOR * err_emul + 4 * EPS[dtype], (i, err_auto, err_emul)
    return rows


def _qkv(B=2, H=2, N=40, d=16, e=24, seed=0):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(B, H, N, n, generator=g) for n in (d, d, e)]


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("kind", ["hedgehog", "mlp"])
def test_feature_maps_under_autocast(kind, dtype):
    torch.manual_seed(0)
    phi = HedgehogFeatureMap(16, 32) if kind == "hedgehog" else MLPFeatureMap(16, 32)
    check_against_emulation(phi, [torch.randn(3, 20, 16)], dtype)


@pytest.mark.parametrize("dtype", LOW)
@pytest.mark.parametrize("causal", [False, True])
def test_linear_attention_reference_under_autocast(causal, dtype):
    torch.manual_seed(0)
    maps = nn.ModuleList(HedgehogFeatureMap(16, 32) for _ in range(2))
    attn = LinearAttention(maps, causal=causal, backend="reference")
    check_against_emulation(attn, _qkv(), dtype)


def test_reference_sums_half_precision_in_fp32():
    """bf16 features and values: the causal reference keeps its prefix sums and products in fp32
    and rounds once, at the output, so every entry is within one bf16 rounding of the fp32
    result on the same values (summing in bf16 put entries off by up to 25 %: the rounded
    prefix sums of signed values cancel)."""
    from doflinattn.reference import linear_attention_features

    g = torch.Generator().manual_seed(0)
    pq, pk = torch.rand(2, 1, 2, 1024, 16, generator=g).to(torch.bfloat16)
    v = torch.randn(1, 2, 1024, 16, generator=g).to(torch.bfloat16)
    out = linear_attention_features(pq, pk, v, True, 1e-6)
    assert out.dtype == torch.bfloat16
    ref = linear_attention_features(pq.float(), pk.float(), v.float(), True, 1e-6)
    err = (out.float() - ref).abs()
    assert (err <= BF16_EPS * ref.abs() + 1e-2 * BF16_EPS * ref.abs().max()).all()


@pytest.mark.parametrize("dtype", LOW)
def test_tiny_encoder_under_autocast(dtype):
    torch.manual_seed(0)
    model = TinySoftmaxEncoder(vocab=12, dim=32, num_heads=2, num_layers=2, max_len=32)
    maps = [nn.ModuleList(HedgehogFeatureMap(16, 16) for _ in range(2)) for _ in range(2)]
    tokens = torch.randint(0, 12, (2, 24))
    for m in (model, model.swap_attention(maps)):
        ref = _run(m, [tokens], autocast=False)
        emul_model = copy.deepcopy(m)
        with torch.no_grad():
            for p in emul_model.parameters():
                p.copy_(_round(p, dtype))
        emul = _run(emul_model, [tokens], autocast=False)
        auto = _run(m, [tokens], autocast=True, dtype=dtype)
        for a, e, r in zip(auto, emul, ref, strict=True):
            if r.abs().max() == 0:  # e.g. the grads of unused position embeddings
                continue
            assert _rel(a, r) <= FACTOR * _rel(e, r) + 4 * EPS[dtype]


@requires_triton
@pytest.mark.interpret
@pytest.mark.slow
@pytest.mark.parametrize("fused", [False, True])
def test_triton_under_autocast(fused):
    """The Triton path under autocast: bf16 features from the map meet fp32 values (cast to
    one dtype on the host); forward and backward against the fp32 reference."""
    torch.manual_seed(0)
    maps = nn.ModuleList(HedgehogFeatureMap(16, 32) for _ in range(2))
    attn = LinearAttention(maps, causal=True, backend="triton", fused_prologue=fused)
    check_against_emulation(attn, _qkv(B=1, N=32, e=24))


@requires_triton
@pytest.mark.interpret
def test_triton_bf16_inputs_match_fp32_reference_at_emulated_tolerance():
    """bf16 q, k, v and bf16 maps through the kernel (fp32 inside, forward and backward) vs the
    fp32 reference on the same bf16-rounded values: only the bf16 output rounding may remain."""
    torch.manual_seed(0)
    maps = nn.ModuleList(HedgehogFeatureMap(16, 32) for _ in range(2))
    q, k, v = (_round(x) for x in _qkv(B=1, N=32, e=24))
    with torch.no_grad():
        for p in maps.parameters():
            p.copy_(_round(p))
    ref = LinearAttention(maps, causal=True, backend="reference")
    got = LinearAttention(copy.deepcopy(maps).to(torch.bfloat16), causal=True, backend="triton")
    r = _run(ref, [q, k, v], autocast=False)
    g = _run(got, [x.to(torch.bfloat16) for x in (q, k, v)], autocast=False)
    for a, b in zip(g, r, strict=True):
        assert _rel(a, b) <= FACTOR * BF16_EPS
