import math

import numpy as np
import pytest
import torch
from torch import nn

from alphadecay import esd_eigenvalues, pl_alpha_hill, pl_fit
from paperkit.testing import assert_close, assert_param_error


def _pareto(n, a, seed):
    # density ~ x^{-a} on [1, inf): inverse CDF x = u^{-1/(a-1)}
    return np.random.default_rng(seed).random(n) ** (-1.0 / (a - 1.0))


def test_hill_on_hand_list():
    # N=4, i0=floor(4/2)=2, T={4,8}, k=2: alpha = 1 + 2/(ln 8 - ln 4) = 1 + 2/ln 2 (by hand)
    expected = 1 + 2 / math.log(2)
    assert pl_alpha_hill([1.0, 2.0, 4.0, 8.0]) == pytest.approx(expected, rel=1e-14)
    assert pl_alpha_hill(torch.tensor([8.0, 1.0, 4.0, 2.0], dtype=torch.float64)) == (
        pytest.approx(expected, rel=1e-14)
    )
    fit = pl_fit([1.0, 2.0, 4.0, 8.0])
    assert (fit.xmin, fit.k) == (4.0, 2)


def test_xmin_pos_moves_the_tail():
    # xmin_pos=4: i0 = 1, T = {2, 4, 8}, k = 3: alpha = 1 + 3/(ln2 + ln4 + ln8 - 3 ln2)
    assert pl_alpha_hill([1.0, 2.0, 4.0, 8.0], xmin_pos=4) == pytest.approx(
        1 + 3 / (3 * math.log(2))
    )


def test_pareto_tail_recovers_exponent():
    # 20 000 draws with density exponent 3: Hill on the top half is within 0.1 (its standard
    # error is about (alpha - 1) / sqrt(k) = 2 / 100 = 0.02, so 0.1 is five of them)
    x = _pareto(20_000, 3.0, seed=0)
    assert abs(pl_alpha_hill(x) - 3.0) < 0.1


def test_ks_fit_on_pareto_tail():
    # A pure Pareto(2.5) tail above a uniform bulk: the KS fit finds the tail
    rng = np.random.default_rng(1)
    tail = _pareto(3000, 2.5, seed=2) * 5.0
    eigs = np.concatenate([rng.uniform(0.1, 5.0, 1000), tail])
    fit = pl_fit(eigs, method="ks")
    assert abs(fit.alpha - 2.5) < 0.2
    assert np.isin(fit.xmin, eigs)
    assert fit.xmin >= 4.0


@pytest.mark.parametrize("c", [0.01, 100.0])
def test_scale_and_transpose_invariance(c):
    W = torch.randn(60, 40, dtype=torch.float64, generator=torch.Generator().manual_seed(3))
    a = pl_alpha_hill(W)
    assert abs(pl_alpha_hill(c * W) - a) < 1e-9
    assert abs(pl_alpha_hill(W.T) - a) < 1e-9
    assert abs(pl_alpha_hill(c * W, method="ks") - pl_alpha_hill(W, method="ks")) < 1e-9


def test_eigenvalues_match_numpy_svd():
    W = torch.randn(37, 23, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    expected = np.sort(np.linalg.svd(W.numpy(), compute_uv=False) ** 2)
    eigs = esd_eigenvalues(W)
    assert eigs.dtype == torch.float64 and eigs.shape == (23,)
    assert_close(eigs, expected, rtol=1e-10, atol=1e-10)
    assert esd_eigenvalues(W.float()).dtype == torch.float32
    assert esd_eigenvalues(W.half()).dtype == torch.float32


def test_filter_zeros_drops_the_null_space():
    # a rank-10 40x40 matrix: 30 zero eigenvalues; filtered fit = fit of the 10 non-zero ones
    g = torch.Generator().manual_seed(5)
    W = torch.randn(40, 10, dtype=torch.float64, generator=g) @ torch.randn(
        10, 40, dtype=torch.float64, generator=g
    )
    nonzero = esd_eigenvalues(W)[-10:]
    assert pl_alpha_hill(W, filter_zeros=True) == pytest.approx(pl_alpha_hill(nonzero), rel=1e-9)


def test_errors():
    assert_param_error(pl_alpha_hill, nn.Linear(4, 3).bias, param="W_or_eigs")
    assert_param_error(pl_alpha_hill, torch.randn(10), param="W_or_eigs")  # negative: not an ESD
    assert_param_error(pl_alpha_hill, torch.ones(2, 3, 4), param="W_or_eigs")
    assert_param_error(pl_alpha_hill, [1.0, 2.0], xmin_pos=1, param="xmin_pos")
    assert_param_error(pl_alpha_hill, [1.0, 2.0, 3.0], method="mle", param="method")
    assert_param_error(pl_alpha_hill, [5.0, 5.0, 5.0, 5.0], param="W_or_eigs")  # constant tail
    W = torch.randn(8, 8)
    W[2, 3] = float("nan")
    err = assert_param_error(pl_alpha_hill, W, param="W_or_eigs")  # named as the user passed it
    assert "of pl_alpha_hill" in str(err)
    assert_param_error(esd_eigenvalues, torch.randn(5), param="W")
    assert_param_error(esd_eigenvalues, torch.zeros(0, 4), param="W")
    W[2, 3] = float("inf")
    assert_param_error(esd_eigenvalues, W, param="W")
