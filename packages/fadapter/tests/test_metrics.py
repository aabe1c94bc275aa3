import torch

from fadapter import band_errors, l2re


def test_l2re_per_sample_mean():
    true = torch.stack([torch.ones(4, 4), 2 * torch.ones(4, 4)])
    pred = true.clone()
    pred[0] += 0.5  # sample 0: 0.5 relative error, sample 1: 0
    assert abs(float(l2re(pred, true)) - 0.25) < 1e-7


def test_band_errors_locate_a_single_mode_error():
    true = torch.randn(3, 32, 32, generator=torch.Generator().manual_seed(0))
    x = torch.arange(32) / 32
    bump = torch.sin(2 * torch.pi * 14 * x)[:, None] * torch.ones(1, 32)  # rho = 14
    err = band_errors(true + 0.1 * bump, true, 4)  # K = 17: edges 0, 4, 8, 12, 17
    assert err[:3].abs().max() < 1e-6 and err[3] > 0.01
    assert torch.allclose(band_errors(2 * true, true, 4), torch.ones(4, dtype=true.dtype))
