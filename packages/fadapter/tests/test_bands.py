from itertools import pairwise

import pytest
import torch

from fadapter import band_dims, band_index
from fadapter.bands import band_edges, kept_modes
from paperkit.testing import assert_param_error


def test_band_dims_paper_default():
    # closed form of Sec. 4 for K=32, d=32, p=2, B=4: floor(16 + 48 (1 - c_b/32)^2),
    # c_b = 4, 12, 20, 28 -> 52.75, 34.75, 22.75, 16.75
    assert band_dims(32) == [52, 34, 22, 16]
    assert band_dims(8, adapter_dim=4) == [6, 4, 2, 2]  # 2 + 6 (7/8)^2 = 6.59, ...


@pytest.mark.parametrize("modes", [1, 4, 8, 12, 32, 33])
@pytest.mark.parametrize("bands", [1, 2, 3, 4])
@pytest.mark.parametrize("power", [0.5, 1.0, 2.0, 3.0])
def test_band_dims_non_increasing(modes, bands, power):
    if bands > modes:
        return
    dims = band_dims(modes, bands, adapter_dim=16, power=power)
    assert len(dims) == bands and all(d >= 1 for d in dims)
    assert all(a >= b for a, b in pairwise(dims))


@pytest.mark.parametrize("mode_set", ["symmetric", "corner"])
@pytest.mark.parametrize(("modes", "bands"), [(8, 4), (5, 3), (7, 7), (12, 1)])
def test_radial_bands_cover_every_kept_mode_once(mode_set, modes, bands):
    table = band_index(modes, bands, mode_set)
    rows = 2 * modes - 1 if mode_set == "symmetric" else modes
    assert table.shape == (rows, modes) and table.dtype == torch.long
    assert int(table.min()) == 0 and int(table.max()) == bands - 1  # one band per mode
    edges = band_edges(modes, bands)
    _, cols, kx = kept_modes(64, modes, mode_set)
    rho = torch.maximum(kx.abs(), cols)  # Chebyshev radius, brute force per mode
    expected = torch.tensor([sum(e <= int(r) for e in edges[1:]) for r in rho])
    assert torch.equal(table.flatten(), expected)
    assert all(int((table == b).sum()) > 0 for b in range(bands))


def test_square_diag_drops_off_diagonal_modes():
    table = band_index(8, 4, "corner", "square_diag")
    kept = table >= 0
    assert int(kept.sum()) == 4 * 2 * 2  # four 2x2 diagonal squares of the 8x8 corner
    assert int(table[0, 7]) == -1 and int(table[7, 7]) == 3


def test_kept_modes_rows_wrap_negative_frequencies():
    rows, cols, kx = kept_modes(16, 3)
    assert rows.tolist()[:3] == [14, 14, 14] and kx.tolist()[:3] == [-2, -2, -2]
    assert sorted(set(rows.tolist())) == [0, 1, 2, 14, 15]
    assert cols.max() == 2


def test_errors_num_bands_and_adapter_dim():
    assert_param_error(band_dims, 4, num_bands=5, param="num_bands")
    assert_param_error(band_index, 4, 5, param="num_bands")
    assert_param_error(band_dims, 8, adapter_dim=0, param="adapter_dim")
