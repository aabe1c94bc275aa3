"""The tile-based Triton splat against the torch paths: under TRITON_INTERPRET=1 on the CPU
(marked interpret), and at full size on a GPU (marked gpu)."""

import pytest
import torch

from gaussianfusion.gaussians import Gaussians2D, splat
from paperkit.testing import assert_close, assert_param_error, requires_triton


def _gaussians(B, N, dtype=torch.float32, seed=0, spread=10.0):
    g = torch.Generator().manual_seed(seed)

    def rand(*shape):
        return torch.randn(*shape, generator=g, dtype=dtype)

    one = torch.zeros(B, N, 1, dtype=dtype)
    # means partly outside the default 64 m x 64 m extent, anisotropic and rotated
    gs = Gaussians2D(
        spread * rand(B, N, 2), 0.6 * rand(B, N, 2), rand(B, N), rand(B, N), one, one, one
    )
    return gs, rand(B, N, 3)


@requires_triton
@pytest.mark.interpret
@pytest.mark.parametrize("cutoff", [None, 3.0])
@pytest.mark.parametrize(("N", "F", "hw"), [(40, 5, (20, 24)), (7, 70, (9, 13))])
def test_triton_matches_torch_in_the_interpreter(cutoff, N, F, hw):
    """Dense and culled maps, partial tiles, N not a multiple of the Gaussian block, and F over
    one column block (70 > 64), fp32 kernel against float64 torch."""
    g, _ = _gaussians(2, N, torch.float64)
    values = torch.randn(2, N, F, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    ref = splat(g, values, hw, cutoff=cutoff, backend="torch")
    out = splat(g, values, hw, cutoff=cutoff, backend="triton")
    assert out.dtype == torch.float64 and out.shape == (2, F, *hw)
    assert_close(out, ref, rtol=0, atol=1e-5 * ref.abs().max().item())


@requires_triton
@pytest.mark.interpret
def test_triton_normalised_semantic_map_matches_torch():
    g, values = _gaussians(1, 24)
    probs = torch.softmax(values, -1)
    maps = [
        splat(g, probs, (16, 16), normalize=True, cutoff=4.0, backend=b)
        for b in ("triton", "torch")
    ]
    assert_close(maps[0], maps[1], rtol=0, atol=1e-5)
    assert_close(maps[0].sum(1), torch.ones(1, 16, 16), rtol=0, atol=1e-5)  # a distribution


@requires_triton
@pytest.mark.interpret
@pytest.mark.parametrize("cutoff", [None, 3.0])
def test_triton_backward_matches_torch(cutoff):
    """Gradients in every property (the backward recomputes the torch path in fp32)."""
    g, values = _gaussians(1, 24, spread=5.0)
    leaves = [g.mean, g.log_scale, g.rotation, g.opacity_logit, values]
    grads = []
    for backend in ("triton", "torch"):
        xs = [x.detach().clone().requires_grad_() for x in leaves]
        gg = Gaussians2D(xs[0], xs[1], xs[2], xs[3], g.semantic, g.explicit, g.implicit)
        out = splat(gg, xs[4], (16, 16), cutoff=cutoff, backend=backend)
        (out * torch.linspace(-1, 1, 16)).sum().backward()
        grads.append([x.grad for x in xs])
    for a, b in zip(*grads, strict=True):
        assert b.abs().max() > 1e-3  # every property carries a real gradient here
        assert_close(a, b, rtol=0, atol=1e-5 * b.abs().max().item())


def test_triton_backend_is_refused_where_it_cannot_run(monkeypatch):
    from gaussianfusion.kernels import splat_triton

    monkeypatch.setattr(splat_triton, "triton_available", lambda: False)
    g, values = _gaussians(1, 4)
    assert_param_error(splat, g, values, (8, 8), backend="triton", param="backend")
    assert_param_error(splat, g, values, (8, 8), backend="cuda", param="backend")
    assert splat(g, values, (8, 8), backend="auto").shape == (1, 3, 8, 8)


@requires_triton
@pytest.mark.gpu
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("cutoff", [None, 3.0])
def test_triton_on_gpu_matches_torch(dtype, cutoff):
    g, _ = _gaussians(2, 4096, spread=20.0)
    values = torch.randn(2, 4096, 16, generator=torch.Generator().manual_seed(2))
    low = g.to("cuda", dtype)
    ref = low.to(torch.float32)  # the reference sees the same (rounded) inputs in fp32
    low_values = values.cuda().to(dtype)
    ref = splat(ref, low_values.float(), (200, 200), cutoff=cutoff, chunk=256, backend="torch")
    out = splat(low, low_values, (200, 200), cutoff=cutoff, backend="triton")
    tol = (1e-4 if dtype == torch.float32 else 1e-2) * ref.abs().max().item()
    assert_close(out.float(), ref, rtol=0, atol=tol)


def test_gaussians_to_converts_every_property():
    g, _ = _gaussians(1, 3)
    h = g.to(torch.float64)
    assert all(getattr(h, f).dtype == torch.float64 for f in ("mean", "semantic", "implicit"))
    assert torch.equal(h.rotation, g.rotation.double()) and h.n == 3
