"""The Triton selective-scan forward (and its gradients through the chunked backward) against
the reference: under TRITON_INTERPRET=1 on the CPU (L=64, E=32, N=8), at full size on a GPU
(with mamba-ssm's selective_scan_fn and selective_scan_ref when installed)."""

import pytest
import torch

from amvim.ops import mamba_ssm_available, selective_scan
from paperkit.testing import assert_close, requires_triton

pytestmark = requires_triton


def _grads(x, backend):
    xs = {k: v.clone().requires_grad_() for k, v in x.items()}
    out, last = selective_scan(**xs, return_last_state=True, backend=backend)
    w = torch.linspace(-1, 1, out.numel(), device=out.device).reshape(out.shape).cos()
    (out * w).sum().backward()
    return [out.detach(), last.detach()] + [v.grad for v in xs.values()]


def _check(x, backends=("triton",)):
    ref = _grads({k: v.double() for k, v in x.items()}, "reference")
    for backend in backends:
        got = _grads(x, backend)
        for a, b in zip(got, ref, strict=True):
            # fp32 kernel against the fp64 reference: 1e-4 relative to the tensor's scale
            assert_close(a, b, rtol=1e-4, atol=1e-4 * float(b.abs().max()))


@pytest.mark.interpret
def test_triton_forward_and_gradients_in_the_interpreter(scan_inputs, nan_empty):
    _check(scan_inputs(B=2, E=32, L=64, N=8, dtype=torch.float32, seed=1))


@pytest.mark.interpret
def test_triton_large_state_and_partial_channel_block(scan_inputs):
    # N=40 pads to NP=64 with BLOCK_E=16: masked state columns and a partial last channel block
    _check(scan_inputs(B=1, E=20, L=6, N=40, dtype=torch.float32, seed=2))


@pytest.mark.gpu
def test_triton_and_mamba_ssm_on_gpu(scan_inputs):
    x = {k: v.cuda() for k, v in scan_inputs(B=4, E=256, L=512, N=16, dtype=torch.float32).items()}
    _check(x, ("triton", "mamba_ssm") if mamba_ssm_available() else ("triton",))
    if mamba_ssm_available():  # our reference against mamba-ssm's own torch reference
        from mamba_ssm.ops.selective_scan_interface import selective_scan_ref

        theirs = selective_scan_ref(**x, delta_softplus=True)
        ours = selective_scan(**x, backend="reference")
        assert_close(ours, theirs, rtol=1e-4, atol=1e-4 * float(theirs.abs().max()))
