"""The Triton causal kernel against the reference: under TRITON_INTERPRET=1 on the CPU (marked
interpret, tiny sizes) and at full size on a GPU (marked gpu, also against fla's
chunk_linear_attn)."""

import pytest
import torch
from torch import nn

from doflinattn import HedgehogFeatureMap, LinearAttention
from paperkit.testing import assert_close, requires_triton

pytestmark = requires_triton


def _inputs(B, H, N, d, device="cpu", seed=0):
    g = torch.Generator(device=device).manual_seed(seed)
    return [torch.randn(B, H, N, d, generator=g, device=device) for _ in range(3)]


def _run(attn, inputs, mask=None):
    xs = [x.clone().requires_grad_() for x in inputs]
    out = attn(*xs, key_padding_mask=mask)
    w = torch.linspace(-1, 1, out.numel(), device=out.device).reshape(out.shape).cos()
    (out * w).sum().backward()
    params = [p.grad.clone() for p in attn.parameters()]
    for p in attn.parameters():
        p.grad = None
    return [out.detach()] + [x.grad for x in xs] + params


@pytest.mark.interpret
@pytest.mark.parametrize("m", [16, 12])  # 12 is padded to 16 inside the launcher
def test_triton_matches_reference_in_the_interpreter(m):
    inputs = _inputs(1, 2, 64, 16)
    phi = HedgehogFeatureMap(16, m)
    mask = torch.zeros(1, 64, dtype=torch.bool)
    mask[0, 50:] = True
    got = _run(LinearAttention(phi, causal=True, backend="triton"), inputs, mask)
    ref = _run(LinearAttention(phi, causal=True, backend="reference"), inputs, mask)
    for a, b in zip(got, ref, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.interpret
@pytest.mark.parametrize("m", [16, pytest.param(32, marks=pytest.mark.slow)])  # m/2 = 8: padded
def test_fused_hedgehog_prologue_matches_reference_in_the_interpreter(m):
    inputs = _inputs(2, 2, 64, 16, seed=1)
    torch.manual_seed(0)
    maps = nn.ModuleList(HedgehogFeatureMap(16, m) for _ in range(2))
    for f in maps:  # biases away from 0, so that their gradients are tested too
        nn.init.normal_(f.linear.bias)
    mask = torch.zeros(2, 64, dtype=torch.bool)
    mask[1, 40:] = True
    fused = LinearAttention(maps, causal=True, backend="triton", fused_prologue=True)
    got = _run(fused, inputs, mask)
    ref = _run(LinearAttention(maps, causal=True, backend="reference"), inputs, mask)
    assert len(got) == 8  # out, dq, dk, dv, and W, b of each of the two maps
    for a, b in zip(got, ref, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


def test_fused_prologue_needs_shared_hedgehog_maps():
    from doflinattn import MLPFeatureMap

    with pytest.raises(ValueError, match="'fused_prologue'"):
        LinearAttention(MLPFeatureMap(8, 8), causal=True, fused_prologue=True)
    with pytest.raises(ValueError, match="'fused_prologue'"):
        LinearAttention(
            HedgehogFeatureMap(8, 8), HedgehogFeatureMap(8, 8), causal=True, fused_prologue=True
        )


@pytest.mark.gpu
@pytest.mark.parametrize("fused", [False, True])
def test_triton_matches_reference_on_gpu(fused):
    inputs = _inputs(2, 4, 1000, 64, device="cuda")
    phi = HedgehogFeatureMap(64, 48).cuda()
    attn = LinearAttention(phi, causal=True, backend="triton", fused_prologue=fused)
    got = _run(attn, inputs)
    ref = _run(LinearAttention(phi, causal=True, backend="reference"), inputs)
    for a, b in zip(got, ref, strict=True):
        assert_close(a, b, rtol=1e-3, atol=1e-3)  # fp32 sums over 1000 rows in another order


@pytest.mark.gpu
def test_triton_matches_fla_on_gpu():
    fla = pytest.importorskip("fla.ops.linear_attn")
    from doflinattn.kernels.causal_triton import causal_linear_attention_triton

    g = torch.Generator(device="cuda").manual_seed(0)
    pq, pk = (torch.rand(2, 4, 512, 64, generator=g, device="cuda") for _ in range(2))
    v = torch.randn(2, 4, 512, 64, generator=g, device="cuda")
    ours = causal_linear_attention_triton(pq, pk, v, 0.0)
    theirs = fla.chunk_linear_attn(
        pq.transpose(1, 2), pk.transpose(1, 2), v.transpose(1, 2), scale=1.0, normalize=True
    )[0].transpose(1, 2)
    assert_close(ours, theirs, rtol=1e-2, atol=1e-2)  # fla's tf32 dots


@pytest.mark.interpret
@pytest.mark.parametrize("fused", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_value_dimension_split_across_programs_in_the_interpreter(fused):
    """e = 40: three value blocks of 16 (the last one partial); the backward sums the blocks'
    shares of d phi_q, d phi_k and counts the (dO . o) term once."""
    g = torch.Generator().manual_seed(3)
    q, k = (torch.randn(1, 2, 40, 16, generator=g) for _ in range(2))
    v = torch.randn(1, 2, 40, 40, generator=g)
    torch.manual_seed(1)
    phi = HedgehogFeatureMap(16, 24)
    nn.init.normal_(phi.linear.bias)
    got = _run(LinearAttention(phi, causal=True, backend="triton", fused_prologue=fused), [q, k, v])
    ref = _run(LinearAttention(phi, causal=True, backend="reference"), [q, k, v])
    for a, b in zip(got, ref, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)
