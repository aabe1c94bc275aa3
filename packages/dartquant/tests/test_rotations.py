import pytest
import scipy.linalg
import torch

from dartquant import fwht, hadamard, online_hadamard, random_hadamard, random_orthogonal
from paperkit.testing import assert_close, assert_param_error

POWERS = [2**k for k in range(11)]  # 1 ... 1024


@pytest.mark.parametrize("d", POWERS)
def test_hadamard_entries_and_orthogonality(d):
    H = hadamard(d, torch.float64)
    assert_close(H.abs(), torch.full((d, d), d**-0.5, dtype=torch.float64), rtol=0, atol=1e-15)
    assert_close(H @ H.T, torch.eye(d, dtype=torch.float64), rtol=0, atol=1e-12)
    # cross-check: scipy's Sylvester construction, normalised
    assert torch.equal(H * d**0.5, torch.from_numpy(scipy.linalg.hadamard(d)).double())


@pytest.mark.parametrize("d", [1, 2, 16, 128, 1024])
def test_fwht_matches_dense_hadamard(d):
    x = torch.randn(3, 5, d, generator=torch.Generator().manual_seed(d))
    dense = x @ (d**0.5 * hadamard(d))
    assert_close(fwht(x), dense, rtol=1e-5, atol=1e-5 * dense.abs().max().item())
    assert_close(online_hadamard(x).norm(dim=-1), x.norm(dim=-1), rtol=1e-5, atol=0)


def test_random_rotations_are_orthogonal_and_seeded():
    for R in (random_hadamard(64, 3, torch.float64), random_orthogonal(48, 3, torch.float64)):
        assert_close(R.T @ R, torch.eye(R.shape[0], dtype=torch.float64), rtol=0, atol=1e-12)
    assert torch.equal(random_hadamard(64, 1), random_hadamard(64, 1))
    assert not torch.equal(random_hadamard(64, 1), random_hadamard(64, 2))
    # H diag(s): every entry keeps magnitude 1/sqrt(d)
    assert_close(random_hadamard(32, 5).abs(), hadamard(32).abs(), rtol=0, atol=0)


@pytest.mark.parametrize("d", [3, 12, 20, 28, 96])
def test_sizes_without_sylvester_hadamard_are_rejected(d):
    err = assert_param_error(hadamard, d, param="d")
    assert "power of 2" in str(err)
    assert_param_error(random_hadamard, d, param="d")


def test_sizes_that_would_not_fit_are_refused_before_allocating():
    err = assert_param_error(hadamard, 2**30, param="d")  # 8 EiB of float64
    assert "fit in memory" in str(err)
    assert_param_error(random_orthogonal, 10**9, param="d")
    assert_param_error(hadamard, 0, param="d")


def test_fwht_rejects_bad_last_dim():
    assert_param_error(fwht, torch.randn(4, 12), param="x")
    assert_param_error(fwht, [1.0, 2.0], param="x", exc=TypeError)
