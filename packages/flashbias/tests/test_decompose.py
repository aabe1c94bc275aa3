import pytest
import torch

from flashbias import dense_bias_attention, flash_bias_attention
from flashbias.decompose import (
    alibi_bias,
    alibi_factors,
    alibi_slopes,
    distance_factors,
    factors_to_dense,
    svd_factors,
)
from paperkit.testing import assert_close, assert_param_error


def test_alibi_slopes_closed_form():
    # m_h = 2^{-8(h+1)/H}: for H=8 the slopes are 1/2, 1/4, ..., 1/256 (the ALiBi paper)
    assert_close(alibi_slopes(8), torch.tensor([2.0**-i for i in range(1, 9)]), rtol=0, atol=0)


def test_alibi_factors_reproduce_the_dense_definition():
    N, H = 300, 4
    q_b, k_b = alibi_factors(N, H)
    i = torch.arange(N, dtype=torch.float64)
    dense = -alibi_slopes(H)[:, None, None] * (i[:, None] - i[None, :])  # -m_h (i - j)
    assert_close(factors_to_dense(q_b, k_b)[0], dense, rtol=0, atol=1e-10)
    assert float(factors_to_dense(q_b, k_b)[0, 0, 5, 2]) < 0  # older keys are penalised


@pytest.mark.parametrize(("dtype", "atol"), [(torch.float64, 1e-10), (torch.float32, 5e-5)])
@pytest.mark.parametrize("backend", ["reference", "sdpa"])
def test_alibi_attention_matches_dense(dtype, atol, backend, qkv):
    N, H = 300, 4  # not a multiple of any block size
    q, k, v, _, _ = qkv(B=1, N=N, H=H, d=16)
    ref = dense_bias_attention(q, k, v, alibi_bias(N, H), causal=True)
    q_b, k_b = alibi_factors(N, H)
    args = [t.to(dtype) for t in (q, k, v, q_b, k_b)]
    out = flash_bias_attention(*args, causal=True, backend=backend)
    assert_close(out.double(), ref, rtol=0, atol=atol)


def test_bidirectional_alibi_is_refused():
    assert_param_error(alibi_factors, 10, 2, causal=False, param="causal")


def test_distance_factors_exact_and_row_constant_invisible(qkv):
    g = torch.Generator().manual_seed(1)
    x = torch.rand(2, 20, 3, generator=g, dtype=torch.float64)
    y = torch.rand(2, 17, 3, generator=g, dtype=torch.float64)
    w = torch.tensor([0.5, 1.0, 2.0], dtype=torch.float64)
    q_b, k_b = distance_factors(x, y, w)
    assert q_b.shape == (2, 20, 3, 5)
    dense = -w[None, :, None, None] * torch.cdist(x, y)[:, None].pow(2)
    assert_close(factors_to_dense(q_b, k_b), dense, rtol=0, atol=1e-10)
    q_d, k_d = distance_factors(x, y, w, drop_row_constant=True)
    assert q_d.shape[-1] == 4
    q, k, v, _, _ = qkv(B=2, N=20, M=17, H=3)
    full = flash_bias_attention(q, k, v, q_b, k_b, backend="sdpa")
    dropped = flash_bias_attention(q, k, v, q_d, k_d, backend="sdpa")
    assert_close(dropped, full, rtol=0, atol=1e-12)
    assert_close(full, dense_bias_attention(q, k, v, dense), rtol=0, atol=1e-12)


def test_svd_recovers_an_exact_low_rank_bias():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(2, 30, 3, generator=g, dtype=torch.float64)
    b = torch.randn(2, 25, 3, generator=g, dtype=torch.float64)
    bias = a @ b.transpose(1, 2)  # rank exactly 3 per head
    q_b, k_b, R = svd_factors(bias, energy=0.999999)
    assert R == 3
    assert q_b.shape == (1, 30, 2, 3) and k_b.shape == (1, 25, 2, 3)
    assert_close(factors_to_dense(q_b, k_b)[0], bias, rtol=0, atol=1e-10)


def test_svd_rank_is_monotone_in_energy():
    from flashbias.data import swin_cpb_bias

    bias = swin_cpb_bias(6, 2, seed=0)
    ranks = [svd_factors(bias, energy=e)[2] for e in (0.5, 0.9, 0.99, 0.999, 0.99999)]
    assert ranks == sorted(ranks) and ranks[-1] > ranks[0]


def test_softmax_row_invariance(qkv):
    q, k, v, q_b, k_b = qkv(N=11, M=9)
    c = torch.randn(1, 11, 3, 1, dtype=torch.float64)  # an arbitrary per-row constant
    q_ext = torch.cat([q_b, c], -1)
    k_ext = torch.cat([k_b, torch.ones(1, 9, 3, 1, dtype=torch.float64)], -1)
    base = flash_bias_attention(q, k, v, q_b, k_b, backend="reference")
    assert_close(
        flash_bias_attention(q, k, v, q_ext, k_ext, backend="sdpa"), base, rtol=0, atol=1e-12
    )


def test_svd_bad_inputs():
    bias = torch.randn(2, 5, 5)
    assert_param_error(svd_factors, bias, rank=6, param="rank")
    assert_param_error(svd_factors, bias, energy=1.5, param="energy")
    assert_param_error(svd_factors, torch.randn(5, 5), param="bias")
    assert_param_error(svd_factors, bias, rank=2.0, param="rank", exc=TypeError)
    bad = bias.clone()
    bad[0, 0, 0] = float("nan")
    assert_param_error(svd_factors, bad, param="bias")


def test_sizes_set_by_tensors_are_refused_before_any_work(monkeypatch, qkv):
    """The outputs' bytes are checked against PAPERKIT_MAX_BYTES before they are allocated."""
    _, _, _, q_b, k_b = qkv(N=40, M=30)  # float64, H = 3, R = 4: a 3·40·30·8-byte dense bias
    x = torch.rand(1, 40, 3, dtype=torch.float64)
    monkeypatch.setenv("PAPERKIT_MAX_BYTES", "20000")
    assert_param_error(factors_to_dense, q_b, k_b, param="q_b")
    assert_param_error(distance_factors, x, x, torch.ones(100, dtype=torch.float64), param="weight")
    assert_param_error(alibi_bias, 100, 2, param="N")
    assert distance_factors(x, x, torch.ones(3, dtype=torch.float64))[0].shape == (1, 40, 3, 5)
