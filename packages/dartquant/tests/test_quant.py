import pytest
import torch
from torch import nn

from dartquant import (
    QuantLinear,
    fake_quantize,
    gptq_quantize,
    quantize_act_per_token,
    quantize_weight_rtn,
)
from paperkit.testing import assert_param_error


@pytest.mark.parametrize("bits", [2, 3, 4, 8])
@pytest.mark.parametrize("sym", [True, False])
def test_rtn_values_on_grid_and_error_bound(bits, sym):
    W = torch.randn(16, 64, generator=torch.Generator().manual_seed(bits), dtype=torch.float64)
    Wq, scale, zero = fake_quantize(W, bits, sym)
    levels = Wq / scale + zero
    assert torch.allclose(levels, levels.round(), atol=1e-9)  # integer codes
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if sym else (0, 2**bits - 1)
    assert levels.min() >= lo - 1e-9 and levels.max() <= hi + 1e-9
    assert ((W - Wq).abs() <= scale / 2 + 1e-12).all()
    assert torch.equal(quantize_weight_rtn(W, bits, sym=sym), Wq)
    assert len(torch.unique(Wq[0])) <= 2**bits


def test_group_quantisation_and_ste():
    W = torch.randn(8, 32, requires_grad=True)
    Wq = quantize_weight_rtn(W, 4, group=8)
    assert torch.equal(Wq[:, :8], quantize_weight_rtn(W[:, :8].detach(), 4))
    Wq.sum().backward()
    assert torch.equal(W.grad, torch.ones_like(W))  # straight-through


def test_act_per_token_clipping():
    x = torch.randn(4, 10, 64)
    x[..., 0] = 40.0
    y_clip = quantize_act_per_token(x, 4, clip_ratio=0.9)
    y_full, scale, _ = fake_quantize(x, 4, sym=False, clip_ratio=1.0)
    assert y_clip.shape == x.shape
    assert torch.equal(y_full, quantize_act_per_token(x, 4, clip_ratio=1.0))
    assert ((y_full - x).abs() <= scale / 2 + 1e-5).all()  # no clipping: within half a step
    assert y_clip[..., 0].max() < y_full[..., 0].min()  # the clipped range cuts the outlier
    # 8 bits is far more accurate than 4 bits
    err8 = ((quantize_act_per_token(x, 8, clip_ratio=1.0) - x) ** 2).mean()
    assert err8 < ((y_full - x) ** 2).mean() / 50


def test_gptq_beats_rtn_on_output_error():
    gen = torch.Generator().manual_seed(0)
    X = torch.randn(2048, 64, generator=gen, dtype=torch.float64) @ torch.randn(
        64, 64, generator=gen, dtype=torch.float64
    )
    W = torch.randn(32, 64, generator=gen, dtype=torch.float64)
    Wg = gptq_quantize(W, X.T @ X, bits=4)
    Wr = quantize_weight_rtn(W, 4)
    err_g = ((X @ (W - Wg).T) ** 2).mean()
    err_r = ((X @ (W - Wr).T) ** 2).mean()
    assert err_g < 0.8 * err_r
    _, scale, _ = fake_quantize(W, 4)
    codes = Wg / scale
    assert torch.allclose(codes, codes.round(), atol=1e-9)  # on RTN's per-channel grid


def test_gptq_refuses_an_indefinite_or_asymmetric_hessian():
    W = torch.randn(4, 8, dtype=torch.float64)
    H = torch.eye(8, dtype=torch.float64)
    H[0, 0] = -5.0  # indefinite: no X^T X looks like this, and 1% damping cannot fix it
    err = assert_param_error(gptq_quantize, W, H, param="H")
    assert "positive semi-definite" in str(err)
    skew = torch.eye(8, dtype=torch.float64)
    skew[0, 1] = 0.5
    assert_param_error(gptq_quantize, W, skew, param="H")
    # a singular but positive semi-definite H (rank 2) is fine once damped
    X = torch.randn(2, 8, dtype=torch.float64)
    Wq = gptq_quantize(W, X.T @ X)
    assert torch.isfinite(Wq).all()


def test_quant_linear_matches_manual():
    lin = nn.Linear(32, 16, bias=False)
    q = QuantLinear.from_linear(lin, w_bits=4, a_bits=8)
    x = torch.randn(2, 5, 32)
    expected = quantize_act_per_token(x, 8) @ quantize_weight_rtn(lin.weight, 4).T
    assert torch.allclose(q(x), expected, atol=1e-6)
    fp = QuantLinear.from_linear(lin, w_bits=None, a_bits=None)
    assert torch.allclose(fp(x), lin(x), atol=1e-6)


@pytest.mark.parametrize(
    ("bits", "exc"),
    [(0, ValueError), (1, ValueError), (17, ValueError), (4.0, TypeError), (True, TypeError)],
)
def test_unsupported_bit_widths(bits, exc):
    W = torch.randn(4, 8)
    assert_param_error(quantize_weight_rtn, W, bits, param="bits", exc=exc)
    assert_param_error(quantize_act_per_token, W, bits, param="bits", exc=exc)
    assert_param_error(gptq_quantize, W, torch.eye(8), bits, param="bits", exc=exc)
    assert_param_error(QuantLinear, 8, 4, w_bits=bits, param="w_bits", exc=exc)


def test_bad_shapes():
    assert_param_error(quantize_weight_rtn, torch.randn(4, 8), group=3, param="group")
    assert_param_error(quantize_weight_rtn, torch.randn(8), param="W")
    assert_param_error(gptq_quantize, torch.randn(4, 8), torch.eye(7), param="H")
    assert_param_error(QuantLinear(8, 4), torch.randn(2, 3, 7), param="x")
    assert_param_error(QuantLinear(8, 4), torch.randn(2, 8).double(), param="x", exc=TypeError)
    assert_param_error(QuantLinear, 8, 4, w_group=3, param="w_group")
    assert_param_error(
        quantize_act_per_token, torch.randn(2, 8), clip_ratio=0.0, param="clip_ratio"
    )
