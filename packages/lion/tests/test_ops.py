"""The masks and the three forms (the reference, rnn and chunk backends of lion_attention), in
float64, against closed forms and direct loops."""

import functools
import itertools

import pytest
import torch

from lion import lion_attention
from lion.reference import (
    backward_mask,
    decay_mask,
    forward_mask,
    lion_mask,
    masked_attention,
)
from paperkit.testing import assert_close, assert_param_error, gradcheck64

lion_full = functools.partial(lion_attention, backend="reference")
lion_rnn = functools.partial(lion_attention, backend="rnn")
lion_chunk = functools.partial(lion_attention, backend="chunk")


@pytest.mark.parametrize("decay", ["lit", "d", "s"])
def test_three_forms_agree(decay, qkv):
    """Full, RNN and chunk forms agree to 1e-10 for N = 37 and C = 1, 8, 64 (> N)."""
    q, k, v, ll = qkv(N=37, decay=decay)
    full = lion_full(q, k, v, ll)
    assert_close(lion_rnn(q, k, v, ll), full, rtol=0, atol=1e-10)
    for chunk_size in (1, 8, 64):
        assert_close(lion_chunk(q, k, v, ll, chunk_size=chunk_size), full, rtol=0, atol=1e-10)


def test_decay_mask_closed_form():
    """LION-D with lambda = 0.5, N = 4: M_ij = 0.5^|i-j| exactly (powers of two) from
    decay_mask, and to rounding from the cumsum construction of lion_mask."""
    ll = torch.full((1, 1, 4), 0.5, dtype=torch.float64).log()
    expected = torch.tensor(
        [[1, 0.5, 0.25, 0.125], [0.5, 1, 0.5, 0.25], [0.25, 0.5, 1, 0.5], [0.125, 0.25, 0.5, 1]],
        dtype=torch.float64,
    )
    assert torch.equal(decay_mask(ll[..., 0], 4)[0, 0], expected)
    assert torch.equal(lion_mask(ll)[0, 0], expected)
    assert torch.equal(lion_mask(ll.float())[0, 0], expected.float())


def test_selective_mask_against_triple_loop():
    """M_ij is the product of lambda_t over t in (i, j], from an O(N^3) loop;
    M = M^F + M^B - I with M^F lower and M^B upper triangular."""
    g = torch.Generator().manual_seed(3)
    lam = torch.rand(2, 3, 9, generator=g, dtype=torch.float64) * 0.9 + 0.05
    N = lam.shape[-1]
    loop = torch.ones(2, 3, N, N, dtype=torch.float64)
    for i, j in itertools.product(range(N), range(N)):
        ts = range(j, i) if i > j else range(i + 1, j + 1)  # (i, j], either direction
        for t in ts:
            loop[..., i, j] *= lam[..., t]
    mask = lion_mask(lam.log())
    assert_close(mask, loop, rtol=1e-12, atol=0)
    mf, mb = forward_mask(lam.log()), backward_mask(lam.log())
    assert torch.equal(mf, mf.tril()) and torch.equal(mb, mb.triu())
    assert_close(mf + mb - torch.eye(N, dtype=torch.float64), mask, rtol=1e-15, atol=0)
    # the first token is not special-cased: M_10 = lambda_0
    assert_close(mask[..., 1, 0], lam[..., 0], rtol=1e-15, atol=0)


def test_selective_mask_survives_tiny_decays():
    """Built from cumsum differences with log lambda clamped at -1e4, never a raw product: a
    lambda of e^-1e5 cuts the mask to 0 without NaN, and the mask beyond it is unaffected."""
    ll = torch.full((1, 1, 6), -0.1, dtype=torch.float64)
    ll[..., 2] = -1e5
    mask = lion_mask(ll)
    assert torch.isfinite(mask).all()
    assert mask[0, 0, 4, 1] == 0  # the path 1 -> 4 crosses lambda_2
    assert_close(mask[0, 0, 5, 3], 0.9048374180359595**2, rtol=1e-10, atol=0)


def test_lit_is_noncausal_normalised_linear_attention(qkv):
    """LIT equals phi(Q)(phi(K)^T V) / (phi(Q) phi(K)^T 1)."""
    q, k, v, _ = qkv(decay="lit")
    kv = k.transpose(-1, -2) @ v
    expected = (q @ kv) / (q @ k.sum(-2, keepdim=True).transpose(-1, -2))
    assert_close(lion_full(q, k, v, None, eps=0.0), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("decay", ["d", "s"])
def test_rows_are_a_convex_combination(decay, qkv):
    """The attention rows are nonnegative and sum to A1/(A1 + eps), so a constant v
    passes through (exactly with eps = 0)."""
    q, k, v, ll = qkv(decay=decay)
    a = (q @ k.transpose(-1, -2)) * lion_mask(ll)
    assert (a >= 0).all()
    mass = a.sum(-1, keepdim=True)
    ones = torch.ones_like(v)
    for form in (lion_full, lion_rnn):
        assert_close(form(q, k, ones, ll), (mass / (mass + 1e-6)).expand_as(v), rtol=1e-12, atol=0)
        assert_close(form(q, k, 3 * ones, ll, eps=0.0), 3 * ones, rtol=1e-12, atol=0)


@pytest.mark.parametrize("decay", ["lit", "d", "s"])
def test_forward_mask_alone_is_causal_decayed_linear_attention(decay, qkv):
    """With M^F alone, y_i = sum_{j<=i} (lambda_j..lambda_{i-1}) (q_i.k_j) v_j / (same
    with 1), computed here by a direct loop (RetNet/GLA-style recurrence)."""
    q, k, v, ll = qkv(N=11, decay=decay)
    lam = torch.ones(q.shape[:3], dtype=q.dtype) if ll is None else ll.exp()
    expected = torch.empty_like(v)
    state = torch.zeros(*q.shape[:2], q.shape[-1], q.shape[-1] + 1, dtype=q.dtype)
    vv = torch.cat([v, torch.ones_like(v[..., :1])], -1)
    for i in range(q.shape[2]):
        if i > 0:
            state = lam[..., i - 1, None, None] * state
        state = state + k[..., i, :, None] * vv[..., i, None, :]
        out = (q[..., i, :, None] * state).sum(-2)
        expected[..., i, :] = out[..., :-1] / (out[..., -1:] + 1e-6)
    mask = forward_mask(torch.zeros(q.shape[:3], dtype=q.dtype) if ll is None else ll)
    assert_close(masked_attention(q, k, v, mask), expected, rtol=1e-10, atol=1e-12)


def test_gradcheck_full_and_chunk_selective(qkv):
    """gradcheck in float64 for lion_full and lion_chunk with selective decays."""
    q, k, v, ll = qkv(B=1, H=2, N=6, d=3, decay="s")
    assert gradcheck64(lambda *x: lion_full(*x), q, k, v, ll)
    assert gradcheck64(lambda *x: lion_chunk(*x, chunk_size=4), q, k, v, ll)
    assert gradcheck64(lambda *x: lion_rnn(*x), q, k, v, ll)


@pytest.mark.parametrize("backend", ["reference", "rnn", "chunk"])
def test_one_nan_policy_on_every_backend(backend, qkv):
    """NaN or inf in any input, and decays outside (0, 1], are refused the same way on every
    backend (the rnn form used to return NaN silently)."""
    q, k, v, ll = qkv(N=5)
    fn = functools.partial(lion_attention, backend=backend)
    for name, x in (("q", q), ("k", k), ("v", v), ("log_lambda", ll)):
        for bad in (float("nan"), float("inf")):
            broken = x.clone()
            broken.reshape(-1)[3] = bad
            args = {"q": q, "k": k, "v": v, "log_lambda": ll, name: broken}
            assert_param_error(fn, **args, param=name)
    for bad in (0.1, float("-inf")):  # lambda > 1, lambda = 0
        broken = ll.clone()
        broken[0, 0, 2] = bad
        assert_param_error(fn, q, k, v, broken, param="log_lambda")


def test_inputs_are_promoted_to_their_common_dtype(qkv):
    q, k, v, ll = qkv(N=6)
    out = lion_attention(q.float(), k, v.float(), ll, backend="chunk")
    assert out.dtype == torch.float64
    assert_close(
        out, lion_attention(q.float().double(), k, v.float().double(), ll), rtol=0, atol=1e-12
    )


def test_triton_is_refused_for_shapes_it_cannot_tile(qkv):
    q, k, v, ll = qkv(N=8, d=12)
    assert_param_error(
        lion_attention, q, k, v, ll, backend="triton", chunk_size=16, param="backend"
    )
    q, k, v, ll = qkv(N=8, d=16)
    assert_param_error(
        lion_attention, q, k, v, ll, backend="triton", chunk_size=12, param="backend"
    )


def test_masks_refuse_bad_decays():
    for fn in (lion_mask, forward_mask, backward_mask):
        assert_param_error(fn, torch.tensor([[-0.1, 0.2, -0.3]]), param="log_lambda")
        assert_param_error(fn, torch.tensor([[-0.1, float("-inf")]]), param="log_lambda")
        assert_param_error(fn, torch.tensor(-0.1), param="log_lambda")
