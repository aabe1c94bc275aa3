"""LinearAttention against the naive O(N^2) normalised-kernel attention, the exact quadratic
feature map, gradients, and autocast."""

import pytest
import torch
from torch import nn

from doflinattn import HedgehogFeatureMap, LinearAttention, MLPFeatureMap
from doflinattn.reference import naive_kernel_attention
from paperkit.testing import gradcheck64


def _qkv(B=2, H=3, N=11, d=4, e=5, seed=0, dtype=torch.float64):
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(B, H, N, s, generator=g, dtype=dtype) for s in (d, d, e))


def _pad(B=2, N=11):
    mask = torch.zeros(B, N, dtype=torch.bool)
    mask[0, 8:] = True
    mask[1, 3:5] = True
    return mask


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("padded", [False, True])
@pytest.mark.parametrize("cls", [HedgehogFeatureMap, MLPFeatureMap])
def test_equals_naive_attention(causal, padded, cls):
    q, k, v = _qkv()
    phi = cls(4, 6).double()
    mask = _pad() if padded else None
    attn = LinearAttention(phi, causal=causal, backend="reference")
    out = attn(q, k, v, key_padding_mask=mask)
    ref = naive_kernel_attention(phi(q), phi(k), v, causal, 1e-6, mask)
    assert torch.allclose(out, ref, rtol=0, atol=1e-10)


class _Outer(nn.Module):
    """phi(x) = vec(x x^T): phi(q) . phi(k) = (q . k)^2 exactly."""

    def forward(self, x):
        return (x[..., :, None] * x[..., None, :]).flatten(-2)


@pytest.mark.parametrize("causal", [False, True])
def test_exact_quadratic_feature_map(causal):
    q, k, v = _qkv()
    out = LinearAttention(_Outer(), causal=causal, eps=1e-12, backend="reference")(q, k, v)
    a = (q @ k.transpose(-1, -2)) ** 2
    if causal:
        a = torch.tril(a)
    expect = (a @ v) / (a.sum(-1, keepdim=True) + 1e-12)
    assert torch.allclose(out, expect, rtol=1e-10, atol=1e-12)


def test_per_head_maps_and_separate_key_map():
    q, k, v = _qkv()
    maps_q = nn.ModuleList(HedgehogFeatureMap(4, 6) for _ in range(3)).double()
    maps_k = nn.ModuleList(HedgehogFeatureMap(4, 6) for _ in range(3)).double()
    out = LinearAttention(maps_q, maps_k, backend="reference")(q, k, v)
    for h in range(3):
        ref = naive_kernel_attention(maps_q[h](q[:, h]), maps_k[h](k[:, h]), v[:, h], False, 1e-6)
        assert torch.allclose(out[:, h], ref, atol=1e-10)
    with pytest.raises(ValueError, match="'feature_map_q'.*one map per head"):
        LinearAttention(maps_q[:2])(q, k, v)


@pytest.mark.parametrize("causal", [False, True])
def test_gradcheck(causal):
    q, k, v = _qkv(B=1, H=2, N=5, d=3, e=2)
    phi = HedgehogFeatureMap(3, 4).double()
    attn = LinearAttention(phi, causal=causal, backend="reference")
    mask = torch.tensor([[False, False, False, True, False]])
    gradcheck64(lambda q, k, v: attn(q, k, v, key_padding_mask=mask), q, k, v)


def test_padding_keys_do_not_matter():
    q, k, v = _qkv()
    mask = _pad()
    attn = LinearAttention(HedgehogFeatureMap(4, 6).double())
    k2, v2 = k.clone(), v.clone()
    k2[0, :, 8:] = 100.0
    v2[1, :, 3:5] = -7.0
    assert torch.allclose(attn(q, k, v, mask), attn(q, k2, v2, mask), atol=1e-12)


def test_runs_under_autocast():
    q, k, v = _qkv(dtype=torch.float32)
    attn = LinearAttention(HedgehogFeatureMap(4, 8))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = attn(q, k, v)
    ref = attn(q, k, v)
    assert out.shape == ref.shape and bool(torch.isfinite(out).all())
    assert float((out.float() - ref).abs().max()) < 0.05  # bf16 has 8 mantissa bits


def test_triton_backend_refuses_non_causal():
    q, k, v = _qkv(dtype=torch.float32)
    with pytest.raises(ValueError, match="'backend'"):
        LinearAttention(HedgehogFeatureMap(4, 8), backend="triton")(q, k, v)
