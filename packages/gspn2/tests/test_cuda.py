"""The CUDA kernels (fused and one launch per line) against the scan backend.

Marked ``gpu``: skipped without a CUDA device, run by ``nox -s gpu`` and ``ci/gpu-check``.
The reference is the ``scan`` backend in float64 on the same (rounded) inputs, itself tested
against the per-pixel ``reference`` backend in test_ops.py.
"""

import pytest
import torch

from gspn2.ops import gspn_4dir, gspn_scan
from paperkit.testing import assert_close, requires_cupy

pytestmark = [pytest.mark.gpu, requires_cupy]

BACKENDS = ["cuda", "cuda_multilaunch"]
# (B, C, H, W, G): H > 32 (threads loop over a line), odd W, B·C > 1024 blocks, H != W
SHAPES = [(2, 4, 5, 7, 1), (1, 8, 40, 37, 1), (2, 8, 33, 65, 8), (3, 520, 6, 5, 2), (1, 2, 1, 9, 1)]
TOLERANCE = {torch.float32: 1e-5, torch.float16: 1e-2, torch.bfloat16: 3e-2}


def _reference(fn, inputs):
    return fn(*(t.double() if isinstance(t, torch.Tensor) else t for t in inputs))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
@pytest.mark.parametrize("direction", ["lr", "rl", "tb", "bt"])
def test_scan_forward_backward(scan_inputs, backend, shape, dtype, direction):
    B, C, H, W, G = shape
    axis = -2 if direction in ("lr", "rl") else -1
    chunk = None if W % 2 else 3
    inputs = scan_inputs(B, C, H, W, G, dtype=dtype, axis=axis, device="cuda")
    leaves = [t.requires_grad_() for t in inputs]
    ref_leaves = [t.detach().double().requires_grad_() for t in inputs]
    kw = dict(chunk=chunk, direction=direction)
    out = gspn_scan(*leaves, backend=backend, **kw)
    ref = gspn_scan(*ref_leaves, backend="scan", **kw)
    tol = TOLERANCE[dtype]
    assert out.dtype == dtype
    assert_close(out, ref, rtol=tol, atol=tol, msg="forward")
    cotangent = torch.randn_like(ref)
    grads = torch.autograd.grad(out, leaves, cotangent.to(dtype))
    ref_grads = torch.autograd.grad(ref, ref_leaves, cotangent)
    for name, g, r in zip(("x", "w_m", "w_0", "w_p", "lam"), grads, ref_grads, strict=True):
        # weight gradients sum over C/G channels and the whole line: scale the tolerance
        scale = 1.0 if name in ("x", "lam") else max(1.0, r.abs().max().item())
        assert_close(g, r, rtol=tol, atol=tol * scale, msg=f"grad {name}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_bfloat16_forward(scan_inputs, backend):
    inputs = scan_inputs(2, 8, 40, 37, 1, dtype=torch.bfloat16, device="cuda")
    out = gspn_scan(*inputs, backend=backend)
    ref = gspn_scan(*(t.double() for t in inputs), backend="scan")
    assert_close(out, ref, rtol=TOLERANCE[torch.bfloat16], atol=TOLERANCE[torch.bfloat16])


@pytest.mark.parametrize("backend", BACKENDS)
def test_four_directions(four_dir_inputs, backend):
    inputs = four_dir_inputs(2, 16, 36, 45, G=1, dtype=torch.float32, device="cuda")
    for v in (inputs["x"], inputs["mix"]):
        v.requires_grad_()
    out = gspn_4dir(**inputs, backend=backend)
    ref = gspn_4dir(**inputs, backend="scan")
    assert_close(out, ref, rtol=1e-5, atol=1e-5)
    gx, gm = torch.autograd.grad(out.square().sum(), (inputs["x"], inputs["mix"]))
    rx, rm = torch.autograd.grad(ref.square().sum(), (inputs["x"], inputs["mix"]))
    assert_close(gx, rx, rtol=1e-4, atol=1e-4)
    assert_close(gm, rm, rtol=1e-4, atol=1e-3)


def test_fused_equals_multilaunch_fp32(scan_inputs):
    """Both kernels do the same fp32 arithmetic per pixel (shared device functions)."""
    inputs = scan_inputs(1, 8, 64, 64, 1, dtype=torch.float32, device="cuda")
    fused = gspn_scan(*inputs, backend="cuda")
    assert_close(fused, gspn_scan(*inputs, backend="cuda_multilaunch"), rtol=1e-6, atol=1e-6)


def test_auto_picks_the_kernel_and_rejects_float64(scan_inputs):
    inputs = scan_inputs(1, 4, 8, 8, 1, dtype=torch.float32, device="cuda")
    assert torch.equal(gspn_scan(*inputs), gspn_scan(*inputs, backend="cuda"))
    doubles = [t.double() for t in inputs]
    with pytest.raises(ValueError, match="'x' parameter"):
        gspn_scan(*doubles, backend="cuda")
    auto = gspn_scan(*doubles)  # auto takes the scan backend for float64
    assert auto.dtype == torch.float64
    assert torch.equal(auto, gspn_scan(*doubles, backend="scan"))
