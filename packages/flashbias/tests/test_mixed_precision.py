"""bf16 on the CPU: the op's forward and backward with bf16 inputs, and every layer under
``torch.autocast("cpu", dtype=torch.bfloat16)``, against the fp32 computation.

The tolerance is not a fixed number but a stated multiple of the error of a bf16 *emulation*:
the same fp32 computation on inputs (and, for layers, parameters) rounded to bf16. That error is
what bf16 storage alone costs; a correct bf16 computation adds the rounding of its intermediate
results, a few times more (the measured ratios are 2.0-4.2 for the op, 1.7-3.7 for the layers;
the multiples below leave about a factor 2 of room). A wrong gradient (a missing term, a softmax in
the wrong dtype) is off by far more than that and fails.
"""

import copy

import pytest
import torch

from flashbias import BiasedAttention, flash_bias_attention
from flashbias.swin import TinySwin

#: Allowed error of a bf16 (or fp16) run, in multiples of the emulation's error.
OP_MULTIPLE = 8
LAYER_MULTIPLE = 8
#: The ``distance`` bias enters as factors whose entries are squared norms (‖x‖², ‖y‖², x·y): the
#: bias is their difference, so rounding the *factors* to bf16 (which autocast does and the
#: emulation of the coordinates does not) cost up to 13x the emulation's error on other random
#: draws (4.3x on this test's).
DISTANCE_MULTIPLE = 32


def _error(a, b):
    return (a.float() - b.float()).abs().max().item()


def _op_grads(inputs, backend, **kwargs):
    xs = [x.clone().requires_grad_() for x in inputs]
    out = flash_bias_attention(*xs, backend=backend, **kwargs)
    w = torch.linspace(-1, 1, out.numel()).reshape(out.shape).cos()
    (out.float() * w).sum().backward()
    return [out.detach().float()] + [x.grad.float() for x in xs]


def _check(low, emulated, exact, multiple):
    for i, (a, e, t) in enumerate(zip(low, emulated, exact, strict=True)):
        bound = _error(e, t)
        assert bound > 0, i  # the emulation does round something
        assert _error(a, t) <= multiple * bound, (i, _error(a, t) / bound)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("backend", ["reference", "sdpa"])
def test_bf16_op_forward_and_backward_within_the_emulation_error(backend, causal, qkv):
    """Output and the gradients of q, k, v and both factors with bf16 inputs (ragged N != M,
    a bias of rank 4) against the fp32 reference."""
    inputs = qkv(B=2, N=48, M=40, H=2, d=16, R=4, dtype=torch.float32)
    exact = _op_grads(inputs, "reference", causal=causal)
    emulated = _op_grads([x.bfloat16().float() for x in inputs], "reference", causal=causal)
    low = _op_grads([x.bfloat16() for x in inputs], backend, causal=causal)
    _check(low, emulated, exact, OP_MULTIPLE)


def _layer_grads(module, x, kwargs, autocast):
    module = copy.deepcopy(module)
    x = x.clone().requires_grad_()
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=autocast):
        y = module(x, **kwargs)
    w = torch.linspace(-1, 1, y.numel()).reshape(y.shape).cos()
    (y.float() * w).sum().backward()
    params = [p.grad.float().flatten() for p in module.parameters() if p.grad is not None]
    return [y.detach().float(), x.grad.float(), torch.cat(params)]


def _rounded(module):
    module = copy.deepcopy(module)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(p.bfloat16().float())
    return module


def _check_layer(module, x, kwargs, multiple):
    """Output, input gradient and all parameter gradients (one vector) under autocast."""
    exact = _layer_grads(module, x, kwargs, autocast=False)
    emulated = _layer_grads(_rounded(module), x.bfloat16().float(), kwargs, autocast=False)
    low = _layer_grads(module, x, kwargs, autocast=True)
    assert low[0].dtype == torch.float32 and torch.isfinite(low[0]).all()
    _check(low, emulated, exact, multiple)


@pytest.mark.parametrize("backend", ["reference", "sdpa"])
@pytest.mark.parametrize("kind", ["alibi", "distance", "svd", "neural", None])
def test_biased_attention_under_bf16_autocast(kind, backend):
    torch.manual_seed(0)
    layer = BiasedAttention(32, 4, kind, rank=4 if kind in ("svd", "neural") else None)
    layer.backend = backend
    x = torch.randn(2, 24, 32)
    kwargs = {"coords": torch.randn(2, 24, 2)} if kind == "distance" else {}
    if kind == "svd":
        layer.set_static_bias(torch.randn(4, 24, 24))
    _check_layer(layer, x, kwargs, DISTANCE_MULTIPLE if kind == "distance" else LAYER_MULTIPLE)


def test_tiny_swin_under_bf16_autocast():
    """The Swin blocks with their dense CPB bias (SDPA with a float mask) under autocast."""
    torch.manual_seed(0)
    _check_layer(TinySwin(window=4, dim=16, heads=2), torch.randn(3, 16, 1), {}, LAYER_MULTIPLE)
