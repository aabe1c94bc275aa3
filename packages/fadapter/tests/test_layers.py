import pytest
import torch

from fadapter import AdapterAFNO2d, AFNO2d, FAdapterAFNO2d, OperatorNet
from fadapter.bands import kept_modes
from paperkit.testing import (
    assert_close,
    assert_param_error,
    check_state_dict_roundtrip,
    gradcheck64,
)


def _randomise(module, seed=0, std=0.3):
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in module.parameters():
            p.copy_(std * torch.randn(p.shape, generator=g, dtype=p.dtype))
    return module


def naive_afno(layer, x):
    """Per-mode loop of the Fourier layer of Sec. 3 in complex arithmetic (float64)."""
    B, H, W, C = x.shape
    nb, c = layer.num_blocks, layer.block_size
    X = torch.fft.rfft2(x.double(), dim=(1, 2), norm="ortho")
    w1, b1, w2, b2 = (
        torch.complex(p[0], p[1]).detach().to(torch.complex128)
        for p in (layer.w1, layer.b1, layer.w2, layer.b2)
    )
    out = torch.zeros_like(X)
    rows, cols, _ = kept_modes(H, layer.modes, layer.mode_set)
    for r, q in zip(rows.tolist(), cols.tolist(), strict=True):
        for k in range(nb):
            z = X[:, r, q, k * c : (k + 1) * c]
            o1 = z @ w1[k] + b1[k]
            o1 = torch.complex(torch.nn.functional.gelu(o1.real), torch.nn.functional.gelu(o1.imag))
            out[:, r, q, k * c : (k + 1) * c] = o1 @ w2[k] + b2[k]
    return torch.fft.irfft2(out, s=(H, W), dim=(1, 2), norm="ortho") + x.double()


@pytest.mark.parametrize("mode_set", ["symmetric", "corner"])
def test_afno_matches_naive_per_mode_loop(mode_set):
    layer = _randomise(AFNO2d(8, num_blocks=2, modes=3, hidden_factor=2, mode_set=mode_set))
    x = torch.randn(2, 8, 6, 8, dtype=torch.float64)
    assert_close(layer.double()(x), naive_afno(layer, x), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode_set", ["symmetric", "corner"])
def test_fadapter_is_identity_at_init(mode_set):
    layer = _randomise(AFNO2d(32, num_blocks=4, modes=8, mode_set=mode_set))
    adapted = FAdapterAFNO2d.from_layer(layer, adapter_dim=8)
    x = torch.randn(2, 16, 16, 32)
    assert (adapted(x) - layer(x)).abs().max() < 1e-6


def test_square_diag_is_not_the_identity():
    layer = _randomise(AFNO2d(16, num_blocks=2, modes=8, mode_set="corner"))
    adapted = FAdapterAFNO2d.from_layer(layer, adapter_dim=4, band_shape="square_diag")
    x = torch.randn(2, 16, 16, 16)
    assert (adapted(x) - layer(x)).abs().max() > 1e-3  # off-diagonal kept modes dropped


def test_band_adapter_shares_weights_between_real_and_imag():
    layer = AFNO2d(8, num_blocks=2, modes=4)
    ad = _randomise(FAdapterAFNO2d.from_layer(layer, adapter_dim=4).adapters["in"], seed=3)
    names = {n for n, _ in ad.named_parameters()}
    assert not any("imag" in n or "real" in n for n in names)
    sizes = [3, 5, 9, 19]  # modes per band, in band order
    z = torch.randn(2, sum(sizes), 2, 4, dtype=torch.complex64)

    def manual(a):  # Ad(a) = a + s U GELU(D a + b_D) + b_U, band by band, block by block
        out, start = torch.empty_like(a), 0
        for b, n in enumerate(sizes):
            for k in range(2):
                v = a[:, start : start + n, k]
                h = torch.nn.functional.gelu(v @ ad.down[b][k] + ad.down_bias[b][k])
                out[:, start : start + n, k] = v + h @ ad.up[b][k] + ad.up_bias[b][k]
            start += n
        return out

    got = ad(z, sizes)
    assert_close(got.real, manual(z.real), rtol=1e-5, atol=1e-6)
    assert_close(got.imag, manual(z.imag), rtol=1e-5, atol=1e-6)


def test_gradcheck_adapted_fourier_layer():
    layer = _randomise(AFNO2d(4, num_blocks=2, modes=3)).double()
    adapted = _randomise(FAdapterAFNO2d.from_layer(layer, adapter_dim=2, num_bands=2), 1).double()
    x = torch.randn(1, 8, 8, 4, dtype=torch.float64)
    names = ("adapters.in.down.0", "adapters.mid.up.1", "adapters.out.up_bias.0", "base.w1")
    start = [dict(adapted.named_parameters())[n].detach() for n in names]

    def f(x, *params):
        return torch.func.functional_call(adapted, dict(zip(names, params, strict=True)), (x,))

    # Jacobians in x and in each listed parameter (fast mode: random projections of them)
    assert gradcheck64(f, x, *start, fast_mode=True)


def test_rfft_roundtrip_and_parseval_ortho():
    x = torch.randn(3, 16, 12, 2, dtype=torch.float64)
    X = torch.fft.rfft2(x, dim=(1, 2), norm="ortho")
    back = torch.fft.irfft2(X, s=(16, 12), dim=(1, 2), norm="ortho")
    assert (back - x).abs().max() < 1e-10
    # Parseval on the half spectrum: interior columns count twice (their conjugates)
    w = torch.full((12 // 2 + 1,), 2.0, dtype=torch.float64)
    w[0] = w[-1] = 1.0
    energy = (X.abs() ** 2 * w[None, None, :, None]).sum()
    assert abs(float(energy - (x**2).sum())) < 1e-10 * float((x**2).sum())


def test_one_band_fadapter_equals_vanilla_adapter():
    layer = _randomise(AFNO2d(16, num_blocks=2, modes=4))
    fa = FAdapterAFNO2d.from_layer(
        layer, adapter_dim=5, num_bands=1, min_dim_factor=1.0, max_dim_factor=1.0
    )
    va = AdapterAFNO2d.from_layer(layer, adapter_dim=5)
    assert fa.dims == [5]
    _randomise(fa.adapters, seed=7)
    va.adapters.load_state_dict(fa.adapters.state_dict())
    x = torch.randn(2, 8, 8, 16)
    assert_close(fa(x), va(x), rtol=1e-5, atol=1e-6)
    assert (fa(x) - layer(x)).abs().max() > 1e-3  # the adapters do act


def test_errors():
    assert_param_error(AFNO2d, 30, num_blocks=4, param="num_blocks")
    layer = AFNO2d(16, num_blocks=4, modes=4)
    assert_param_error(FAdapterAFNO2d.from_layer, layer, num_bands=5, param="num_bands")
    assert_param_error(FAdapterAFNO2d.from_layer, layer, adapter_dim=0, param="adapter_dim")
    assert_param_error(layer, torch.randn(2, 16, 8, 8), param="x")  # channel-first
    assert_param_error(layer, torch.randn(8, 8, 16), param="x")  # not 4-D
    assert_param_error(layer, torch.randn(1, 6, 8, 16), param="x")  # grid too small: 2K-1 > 6


def test_layers_run_under_autocast_and_keep_dtype():
    net = OperatorNet(in_frames=2, width=16, depth=1, num_blocks=4, modes=3)
    x = torch.randn(2, 16, 16, 2)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = net(x)
    assert torch.isfinite(out).all() and out.shape == (2, 16, 16, 1)
    assert net.double()(x.double()).dtype == torch.float64


def test_state_dict_roundtrip():
    x = torch.randn(1, 8, 8, 8)
    check_state_dict_roundtrip(
        lambda: _randomise(
            FAdapterAFNO2d.from_layer(AFNO2d(8, 2, 4), adapter_dim=3),
            seed=int(torch.randint(0, 100, ())),
        ),
        x,
    )


def test_operator_net_size_of_the_paper_setting():
    # 2x2 patches of 4 frames + 2 coordinates, width 64, 4 blocks (8 blocks of 8, 8 modes,
    # MLP ratio 2): 1,600 + 4 x (2,304 + 16,576 + 256) + 260
    assert sum(p.numel() for p in OperatorNet().parameters()) == 78_404
