"""The triton backend (the chunkwise Triton kernel) against the pure-torch forms: under
TRITON_INTERPRET=1 on the CPU (marked interpret), at full size and against flash-linear-attention
on a GPU (marked gpu)."""

import pytest
import torch

from lion import LionAttention, lion_attention
from paperkit.testing import assert_close, assert_param_error, requires_triton

pytestmark = requires_triton


def _triton(q, k, v, ll, chunk_size):
    return lion_attention(q, k, v, ll, backend="triton", chunk_size=chunk_size)


def lion_full(q, k, v, ll):
    return lion_attention(q, k, v, ll, backend="reference")


def lion_chunk(q, k, v, ll, chunk_size):
    return lion_attention(q, k, v, ll, backend="chunk", chunk_size=chunk_size)


@pytest.mark.interpret
@pytest.mark.parametrize("decay", ["lit", "s"])
@pytest.mark.parametrize(("N", "chunk_size"), [(64, 16), (50, 32)])
def test_triton_matches_reference_in_the_interpreter(decay, N, chunk_size, qkv, nan_empty):
    """The kernel equals lion_full (N = 64, d = 16; also a short last block)."""
    q, k, v, ll = qkv(B=1, H=2, N=N, d=16, dtype=torch.float32, decay=decay)
    q, k = q / 4, k / 4
    ref = lion_full(q.double(), k.double(), v.double(), None if ll is None else ll.double())
    assert_close(_triton(q, k, v, ll, chunk_size), ref, rtol=0, atol=2e-5)


@pytest.mark.interpret
@pytest.mark.parametrize(
    ("d", "chunk_size"), [pytest.param(64, 64, marks=pytest.mark.slow), (128, 32)]
)
def test_triton_value_blocks_and_capped_tiles_match_reference(d, chunk_size, qkv):
    """Head sizes 64 and 128 run 2 and 8 value blocks per (batch, head, direction), with the tile
    capped below chunk_size (32 and 16): still the reference, in float32 (N = 40)."""
    from lion.kernels.chunk_triton import launch_config

    config = launch_config(torch.float32, d, chunk_size)
    assert config["BLOCK"] < chunk_size and d // config["BV"] in (2, 8)
    q, k, v, ll = qkv(B=1, H=1, N=40, d=d, dtype=torch.float32, decay="s")
    q, k = q / d**0.5, k / d**0.5
    ref = lion_full(q.double(), k.double(), v.double(), ll.double())
    assert_close(_triton(q, k, v, ll, chunk_size), ref, rtol=0, atol=2e-5)


@pytest.mark.interpret
def test_triton_layer_and_backward(qkv):
    """backend='triton' in the layer gives the reference outputs and gradients."""
    torch.manual_seed(0)
    layer = LionAttention(32, 2, decay="s", chunk_size=16, backend="triton")
    x = torch.randn(1, 32, 32, requires_grad=True)
    out = layer(x)
    (out**2).sum().backward()
    grad = x.grad.clone()
    x.grad = None
    layer.set_backend("reference")
    ref = layer(x)
    (ref**2).sum().backward()
    assert_close(out, ref, rtol=0, atol=1e-5)
    assert_close(grad, x.grad, rtol=1e-4, atol=1e-5)


@pytest.mark.interpret
def test_triton_is_deterministic(qkv):
    q, k, v, ll = qkv(B=1, H=1, N=32, d=16, dtype=torch.float32)
    assert torch.equal(_triton(q, k, v, ll, 16), _triton(q, k, v, ll, 16))


def test_unsupported_shapes_are_refused(qkv):
    from lion.kernels.chunk_triton import lion_chunk_triton_parts

    q, k, v, ll = qkv(B=1, H=1, N=8, d=12, dtype=torch.float32)
    assert_param_error(lion_chunk_triton_parts, q, k, v, ll, 16, param="q")
    q, k, v, ll = qkv(B=1, H=1, N=8, d=16, dtype=torch.float32)
    assert_param_error(lion_chunk_triton_parts, q, k, v, ll, 8, param="chunk_size")


@pytest.mark.interpret
def test_auto_picks_triton_where_it_runs(qkv):
    """Under the interpreter, auto runs the kernel for tileable shapes and chunk otherwise."""
    q, k, v, ll = qkv(B=1, H=1, N=32, d=16, dtype=torch.float32)
    assert torch.equal(lion_attention(q, k, v, ll, chunk_size=16), _triton(q, k, v, ll, 16))
    q, k, v, ll = qkv(B=1, H=1, N=32, d=12, dtype=torch.float32)
    auto = lion_attention(q, k, v, ll, chunk_size=16)
    assert torch.equal(auto, lion_chunk(q, k, v, ll, 16))


@pytest.mark.gpu
@pytest.mark.parametrize("decay", ["lit", "d", "s"])
def test_triton_on_gpu_matches_reference(decay, qkv):
    q, k, v, ll = (
        None if x is None else x.cuda()
        for x in qkv(B=2, H=4, N=2048, d=64, dtype=torch.float32, decay=decay)
    )
    q, k = torch.nn.functional.normalize(q, dim=-1), torch.nn.functional.normalize(k, dim=-1)
    ref = lion_chunk(q.double(), k.double(), v.double(), None if ll is None else ll.double(), 64)
    assert_close(_triton(q, k, v, ll, 64), ref, rtol=0, atol=1e-4)


@pytest.mark.gpu
def test_triton_on_gpu_matches_flash_linear_attention(qkv):
    """Anchor: fla's chunk_simple_gla forward + on the flipped sequence - the diagonal."""
    pytest.importorskip("fla.ops.simple_gla")
    from lion.bench import fla_lion

    q, k, v, ll = (x.cuda() for x in qkv(B=2, H=4, N=1024, d=64, dtype=torch.float32))
    q, k = torch.nn.functional.normalize(q, dim=-1), torch.nn.functional.normalize(k, dim=-1)
    ref = fla_lion(q, k, v, ll)
    assert_close(_triton(q, k, v, ll, 64), ref, rtol=0, atol=1e-3)
