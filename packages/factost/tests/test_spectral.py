"""Band split (Stage 1's multi-frequency reconstruction target) and RevIN."""

import pytest
import torch

from factost import RevIN, band_split


@pytest.mark.parametrize("L", [12, 24, 48, 37])
def test_bands_sum_to_input(L):
    x = torch.randn(4, 3, L, dtype=torch.float64, generator=torch.Generator().manual_seed(L))
    bands = band_split(x)
    assert bands.shape == (4, 3, 3, L)
    assert torch.allclose(bands.sum(-2), x, atol=1e-6)  # exact by linearity of the FFT


@pytest.mark.parametrize("L", [16, 24, 48])
def test_each_band_is_zero_outside_its_bins(L):
    x = torch.randn(5, L, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    spectra = torch.fft.rfft(band_split(x), dim=-1).abs()  # (5, 3, L//2+1)
    k = torch.arange(L // 2 + 1)
    ranges = [(0, L / 8), (L / 8, L / 4), (L / 4, float("inf"))]
    for b, (lo, hi) in enumerate(ranges):
        outside = (k < lo) | (k >= hi)
        assert spectra[:, b, outside].max() < 1e-9
        assert spectra[:, b, ~outside].max() > 1e-3  # and something inside


def test_revin_round_trip_and_statistics():
    rev = RevIN()
    x = torch.randn(6, 24, dtype=torch.float64) * 7 + 3
    xn, stats = rev.norm(x)
    assert torch.allclose(xn.mean(-1), torch.zeros(6, dtype=torch.float64), atol=1e-9)
    assert torch.allclose(xn.std(-1, unbiased=False), torch.ones(6, dtype=torch.float64), atol=1e-5)
    assert torch.allclose(rev.denorm(xn, stats), x, atol=1e-9)
