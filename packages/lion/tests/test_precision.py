"""Mixed precision: every layer and model under ``torch.autocast("cpu", dtype=torch.bfloat16)``
and the op on bfloat16 inputs, forward and backward, against the float32 reference.

Tolerances come from a bfloat16 emulation: the same module with its inputs and weights rounded
to bfloat16 (and its output rounded once) computed in float32. Its distance to the float32
reference is the error that bfloat16 storage alone causes; a path passes when its own error is
at most ``FACTOR`` times that plus one bfloat16 rounding of the largest reference value
(``2**-8 * max|ref|``, the rounding of the output itself). A backward pass that recomputed in
bfloat16 (cumulative sums and exponentials in bfloat16) was off by several percent of
max|grad|, far outside these bounds.
"""

import copy

import pytest
import torch

from lion import (
    CausalLinearAttention,
    LionAttention,
    LionViT,
    SequenceTagger,
    SoftmaxAttention,
    lion_attention,
)
from paperkit import triton_available

#: Allowed multiple of the emulation's error.
FACTOR = 6
#: One bfloat16 rounding, relative (2**-8 = half of bfloat16's 2**-7 spacing at 1, doubled).
BF16_ROUND = 2.0**-8


def _bf16(t: torch.Tensor) -> torch.Tensor:
    return t.detach().bfloat16().float()


def _bound(ref: torch.Tensor, emulated: torch.Tensor) -> float:
    scale = float(ref.abs().max())
    return FACTOR * float((emulated - ref).abs().max()) + BF16_ROUND * scale


def _assert_within(name, got, ref, emulated):
    err = float((got.float() - ref).abs().max())
    bound = _bound(ref, emulated)
    assert torch.isfinite(got).all(), name
    assert err <= bound, f"{name}: error {err:.3g} > bound {bound:.3g}"


def _run(module, x, *, autocast=False):
    """Forward, and backward of a fixed weighting of the output; the output and the gradients of
    x (when floating) and of every parameter, in float32."""
    module = copy.deepcopy(module)
    x = x.detach().clone()
    if x.is_floating_point():
        x.requires_grad_(True)
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        y = module(x)
    weight = torch.randn(y.shape, generator=torch.Generator().manual_seed(1))
    (y.float() * weight).sum().backward()
    grads = {"x": x.grad} if x.is_floating_point() else {}
    grads |= {n: p.grad for n, p in module.named_parameters() if p.grad is not None}
    return y.detach().float(), {n: g.float() for n, g in grads.items()}


def _emulate(module, x):
    """Inputs and weights rounded to bfloat16, computed in float32, the output rounded."""
    module = copy.deepcopy(module)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(_bf16(p))
    y, grads = _run(module, _bf16(x) if x.is_floating_point() else x)
    return _bf16(y), grads


def _check_autocast(module, x):
    ref, ref_grads = _run(module, x)
    emu, emu_grads = _emulate(module, x)
    got, got_grads = _run(module, x, autocast=True)
    _assert_within("output", got, ref, emu)
    assert got_grads.keys() == ref_grads.keys()
    for name in ref_grads:
        _assert_within(f"grad {name}", got_grads[name], ref_grads[name], emu_grads[name])


def _lion(decay, order="raster", backend="reference", dim=32, heads=2, chunk_size=16):
    torch.manual_seed(0)
    return LionAttention(
        dim, heads, decay=decay, order=order, backend=backend, chunk_size=chunk_size
    )


@pytest.mark.parametrize("backend", ["reference", "chunk", "rnn"])
@pytest.mark.parametrize("decay", ["lit", "d", "s"])
def test_layer_under_autocast(decay, backend):
    """LionAttention under bf16 autocast (forward and every gradient) within the emulated
    bound of float32, on each torch backend and decay; N = 40 spans three chunks of 16."""
    x = torch.randn(2, 40, 32, generator=torch.Generator().manual_seed(0))
    _check_autocast(_lion(decay, backend=backend), x)


def test_snake_layer_under_autocast():
    x = torch.randn(2, 17, 32, generator=torch.Generator().manual_seed(0))  # 4 x 4 + class token
    _check_autocast(_lion("s", order="snake", backend="chunk", chunk_size=4), x)


@pytest.mark.interpret
@pytest.mark.skipif(not triton_available(), reason="needs triton")
@pytest.mark.parametrize("decay", [pytest.param("lit", marks=pytest.mark.slow), "s"])
def test_triton_layer_under_autocast(decay):
    """backend='triton' (under the interpreter) under bf16 autocast: the kernel loads bf16 q, k,
    v, computes in float32, and the backward recomputes the same float32 values."""
    from paperkit import triton_interpret

    if not triton_interpret():
        pytest.skip("needs TRITON_INTERPRET=1 on the CPU")
    x = torch.randn(1, 40, 32, generator=torch.Generator().manual_seed(0))
    _check_autocast(_lion(decay, backend="triton"), x)


def test_baselines_under_autocast():
    x = torch.randn(2, 24, 32, generator=torch.Generator().manual_seed(0))
    torch.manual_seed(0)
    _check_autocast(SoftmaxAttention(32, 2), x)
    _check_autocast(CausalLinearAttention(32, 2, decay="s"), x)
    _check_autocast(CausalLinearAttention(32, 2, decay="lit"), x)


def test_models_under_autocast():
    """A LionViT (snake, class token) and a SequenceTagger under bf16 autocast."""
    torch.manual_seed(0)
    vit = LionViT(8, 2, 1, 5, dim=32, depth=2, heads=2, order="snake", pool="cls")
    images = torch.rand(2, 1, 8, 8, generator=torch.Generator().manual_seed(0))
    _check_autocast(vit, images)
    torch.manual_seed(0)
    tagger = SequenceTagger(8, 8, 32, dim=32, depth=2, heads=2)
    tokens = torch.randint(0, 8, (2, 20), generator=torch.Generator().manual_seed(0))
    _check_autocast(tagger, tokens)


def test_layer_takes_the_autocast_dtype():
    """Under autocast a float32 layer takes a bfloat16 x (the output of an autocast linear);
    outside autocast that x is still refused."""
    layer = _lion("s")
    x = torch.randn(1, 8, 32).bfloat16()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        assert layer(x).dtype == torch.bfloat16
    with pytest.raises(TypeError):
        layer(x)


def _op_inputs(N=70, d=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    q = torch.nn.functional.elu(torch.randn(2, 2, N, d, generator=g)) + 1
    k = torch.nn.functional.elu(torch.randn(2, 2, N, d, generator=g)) + 1
    v = torch.randn(2, 2, N, d, generator=g)
    ll = torch.nn.functional.logsigmoid(2 * torch.randn(2, 2, N, generator=g) + 1)
    return q, k, v, ll


def _op_run(inputs, backend, dtype=None):
    inputs = [x.detach().clone() for x in inputs]
    if dtype is not None:
        inputs = [x.to(dtype) for x in inputs]
    for x in inputs:
        x.requires_grad_(True)
    y = lion_attention(*inputs, backend=backend, chunk_size=16)
    weight = torch.randn(y.shape, generator=torch.Generator().manual_seed(1))
    (y.float() * weight).sum().backward()
    return (
        y.detach().float(),
        [x.grad.float() for x in inputs],
        y.dtype,
        [x.grad.dtype for x in inputs],
    )


def _op_backends():
    from paperkit import triton_interpret

    backends = ["reference", "chunk", "rnn"]
    if triton_available() and triton_interpret():
        backends.append("triton")
    return backends


@pytest.mark.parametrize("backend", _op_backends())
def test_op_on_bf16_inputs(backend):
    """lion_attention on bfloat16 q, k, v, log-decays: a bfloat16 output and bfloat16
    gradients, within the emulated bound of the float32 op (N = 70: five chunks of 16)."""
    inputs = _op_inputs()
    ref, ref_grads, _, _ = _op_run(inputs, "reference")
    emu, emu_grads, _, _ = _op_run([_bf16(x) for x in inputs], "reference")
    got, got_grads, dtype, grad_dtypes = _op_run(inputs, backend, torch.bfloat16)
    assert dtype == torch.bfloat16 and grad_dtypes == [torch.bfloat16] * 4
    _assert_within("output", got, ref, _bf16(emu))
    for name, g, r, e in zip("qkvl", got_grads, ref_grads, emu_grads, strict=True):
        _assert_within(f"grad {name}", g, r, _bf16(e))


def test_bound_is_tight_enough_to_fail():
    """The bound catches a bfloat16 recompute: the chunk form computed in bfloat16 throughout
    (cumulative sums, exponentials, products; N = 256, chunks of 64) is off by 5-10 % of
    max|grad| and breaks it on every gradient, where the float32 computation stays within a
    third of it."""
    from lion.chunk import chunk_parts
    from lion.reference import normalize

    inputs = _op_inputs(N=256)
    ref, ref_grads, _, _ = _op_run(inputs, "reference")
    emu, emu_grads, _, _ = _op_run([_bf16(x) for x in inputs], "reference")
    low = [x.detach().bfloat16().requires_grad_(True) for x in inputs]
    y = normalize(chunk_parts(*low, 64), 1e-6)
    weight = torch.randn(y.shape, generator=torch.Generator().manual_seed(1))
    (y.float() * weight).sum().backward()
    errors = [
        float((x.grad.float() - r).abs().max()) > _bound(r, _bf16(e))
        for x, r, e in zip(low, ref_grads, emu_grads, strict=True)
    ]
    assert all(errors)
