import math

import pytest
import torch

from paperkit.testing import assert_close, assert_param_error, check_finite, gradcheck64
from zeros.ops import zero_sum_weights, zeros_attention
from zeros.scan import SCAN_RANGE_LIMIT


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("T", [1, 7, 64])
@pytest.mark.parametrize("gate0", [False, True])
def test_backends_agree_in_float64(causal, T, gate0, inputs):
    q, k, v, s, g1, gh, g0 = inputs(T=T, gate0=gate0)
    ref = zeros_attention(q, k, v, s, g1, gh, g0, causal=causal, backend="reference")
    scan = zeros_attention(q, k, v, s, g1, gh, g0, causal=causal, backend="scan")
    assert_close(scan, ref, rtol=0, atol=1e-10)
    for chunk_size in (5, 16, 64):  # 5 divides neither 7 nor 64; 16 divides 64 only
        out = zeros_attention(
            q, k, v, s, g1, gh, g0, causal=causal, backend="chunk", chunk_size=chunk_size
        )
        assert_close(out, ref, rtol=0, atol=1e-10, msg=f"chunk_size={chunk_size}")


@pytest.mark.parametrize("causal", [True, False])
def test_weights_sum_to_zero(causal, inputs):
    _, _, _, s, g1, gh, _ = inputs(T=33)
    r = zero_sum_weights(s, g1, gh, causal=causal)
    assert r.shape == (2, 3, 33, 33)
    assert_close(r.sum(-1), torch.zeros(2, 3, 33, dtype=torch.float64), rtol=0, atol=1e-12)
    if causal:  # nothing above the diagonal
        assert torch.equal(r.triu(1), torch.zeros_like(r))
    assert r.abs().max() > 0.1  # and the weights are not trivially zero


def test_weights_with_gate0_sum_to_gate0(inputs):
    _, _, _, s, g1, gh, g0 = inputs(T=9, gate0=True)
    r = zero_sum_weights(s, g1, gh, g0)
    assert_close(r.sum(-1), g0.transpose(1, 2), rtol=0, atol=1e-12)


@pytest.mark.parametrize("causal", [True, False])
def test_all_gates_one_recover_the_prefix_softmax(causal, inputs):
    _, _, _, s, _, _, _ = inputs(T=12)
    ones = torch.ones_like(s)
    r = zero_sum_weights(s, ones, ones, ones, causal=causal)
    st = s.transpose(1, 2).unsqueeze(-2).expand(2, 3, 12, 12)  # s_i along the last axis
    if causal:
        st = st.masked_fill(~torch.ones(12, 12, dtype=torch.bool).tril(), float("-inf"))
    assert_close(r, torch.softmax(st, dim=-1), rtol=0, atol=1e-15)


def test_first_order_term_is_the_centred_logit_over_t(inputs):
    # sigma^1 = 1, sigma^h = 0: r_{t,i} = (s_i - mean_{j<=t} s_j) / t (eq. of delta^1)
    _, _, _, s, _, _, _ = inputs(B=1, T=5, H=1)
    r = zero_sum_weights(s, torch.ones_like(s), torch.zeros_like(s))[0, 0]
    x = s[0, :, 0]
    for t in range(1, 6):
        expected = (x[:t] - x[:t].mean()) / t
        assert_close(r[t - 1, :t], expected, rtol=0, atol=1e-15)


@pytest.mark.parametrize("backend", ["reference", "chunk", "scan"])
def test_causality(backend, inputs):
    q, k, v, s, g1, gh, g0 = inputs(T=20, gate0=True)
    out = zeros_attention(q, k, v, s, g1, gh, g0, backend=backend, chunk_size=6)
    tau = 11
    changed = [x.clone() for x in (q, k, v, s, g1, gh, g0)]
    for x in changed:
        x[:, tau:] += 1.0 + torch.rand_like(x[:, tau:])
    out2 = zeros_attention(*changed, backend=backend, chunk_size=6)
    if backend == "scan":  # its global shift max(s) sees later positions: rounding, not values
        assert_close(out2[:, :tau], out[:, :tau], rtol=0, atol=1e-12)
    else:
        assert torch.equal(out2[:, :tau], out[:, :tau])
    assert not torch.allclose(out2[:, tau:], out[:, tau:])


def test_contrast_closed_form():
    # T = 2, q = k1 = k2 and both gates 1: o_2 = (sigmoid(s1 - s2) - 1/2)(v1 - v2)
    qk = torch.randn(1, 1, 1, 5, dtype=torch.float64)
    q = k = qk.expand(1, 2, 1, 5)
    v = torch.randn(1, 2, 1, 5, dtype=torch.float64)
    s = torch.tensor([[[1.3], [-0.4]]], dtype=torch.float64)
    ones = torch.ones_like(s)
    expected = (torch.sigmoid(s[0, 0] - s[0, 1]) - 0.5) * (v[0, 0, 0] - v[0, 1, 0])
    for backend in ("reference", "scan", "chunk"):
        o = zeros_attention(q, k, v, s, ones, ones, backend=backend)
        assert_close(o[0, 1, 0], expected, rtol=0, atol=1e-14, msg=backend)


def _stability_inputs(inputs, T, scale, seed=3):
    q, k, v, s, g1, gh, _ = inputs(B=1, T=T, H=2, d=8, dtype=torch.float32, scale=scale, seed=seed)
    return q, k, v, s, g1, gh


def test_stable_for_wide_logits(inputs):
    q, k, v, s, g1, gh = _stability_inputs(inputs, T=1024, scale=30.0)
    ref = zeros_attention(*(x.double() for x in (q, k, v, s, g1, gh)), backend="reference")
    tol = 1e-3 * ref.abs().max().item()
    for backend in ("chunk", "scan"):
        out = zeros_attention(q, k, v, s, g1, gh, backend=backend)
        check_finite(out)
        assert out.dtype == torch.float32
        assert_close(out, ref, rtol=0, atol=tol, msg=backend)


def test_extreme_logits_chunk_and_reference_stay_exact_scan_refuses(inputs):
    q, k, v, s, g1, gh = _stability_inputs(inputs, T=128, scale=1e4)
    ref = zeros_attention(*(x.double() for x in (q, k, v, s, g1, gh)), backend="reference")
    tol = 1e-3 * ref.abs().max().item()
    for backend in ("reference", "chunk"):
        out = zeros_attention(q, k, v, s, g1, gh, backend=backend)
        check_finite(out)
        assert_close(out, ref, rtol=0, atol=tol, msg=backend)
    error = assert_param_error(zeros_attention, q, k, v, s, g1, gh, backend="scan", param="s")
    assert f"within {SCAN_RANGE_LIMIT:g}" in str(error) and "backend='chunk'" in str(error)
    auto = zeros_attention(q, k, v, s, g1, gh, backend="auto")  # hands over to chunk
    assert_close(auto, ref, rtol=0, atol=tol)


@pytest.mark.parametrize("causal", [True, False])
def test_logits_of_size_80_in_float64(causal, inputs):
    q, k, v, _, g1, gh, g0 = inputs(B=1, T=64, H=2, d=8, gate0=True)
    s = 80.0 * torch.sign(torch.randn(1, 64, 2, dtype=torch.float64))  # |s| = 80 everywhere
    s[0, 5, 0] = -80.0
    ref = zeros_attention(q, k, v, s, g1, gh, g0, causal=causal, backend="reference")
    check_finite(ref)
    for backend in ("scan", "chunk"):
        out = zeros_attention(q, k, v, s, g1, gh, g0, causal=causal, backend=backend, chunk_size=16)
        assert_close(out, ref, rtol=0, atol=1e-9 * ref.abs().max().item(), msg=backend)


def test_no_fixed_floor_on_the_normaliser(inputs):
    # early prefixes have tiny e^{s - max}: a floor such as 1e-12 would give O(1) errors here
    q, k, v, s, g1, gh, _ = inputs(B=1, T=64, H=1, d=4, scale=30.0, seed=5)
    ref = zeros_attention(q, k, v, s, g1, gh, backend="reference")
    assert_close(zeros_attention(q, k, v, s, g1, gh, backend="scan"), ref, rtol=0, atol=1e-9)


@pytest.mark.parametrize("backend", ["scan", "chunk"])
@pytest.mark.parametrize("gate0", [False, True])
def test_gradcheck(backend, gate0, inputs):
    q, k, v, s, g1, gh, g0 = inputs(B=1, T=6, H=2, d=3, gate0=gate0)
    args = (q, k, v, s, g1, gh) + ((g0,) if gate0 else ())

    def fn(*xs):
        return zeros_attention(*xs, backend=backend, chunk_size=4)

    assert gradcheck64(fn, *args)


def test_mismatches_name_the_argument(inputs):
    q, k, v, s, g1, gh, _ = inputs()
    assert_param_error(zeros_attention, q, k, v, s, g1, gh[:, :3], param="gateh")
    assert_param_error(zeros_attention, q, k[..., :2], v, s, g1, gh, param="k")
    assert_param_error(zeros_attention, q, k, v, s[..., 0], g1, gh, param="s")
    assert_param_error(zeros_attention, q, k, v, s, g1, gh, "x", param="gate0", exc=TypeError)
    assert_param_error(
        zeros_attention, q, k, v, s, g1, gh, causal=False, backend="triton", param="backend"
    )
    assert_param_error(zero_sum_weights, s, g1[:, :2], gh, param="gate1")


def test_an_empty_sequence_is_refused(inputs):
    q, k, v, s, g1, gh, _ = inputs(T=0)
    assert_param_error(zeros_attention, q, k, v, s, g1, gh, param="q")


@pytest.mark.parametrize("backend", ["reference", "scan", "chunk"])
def test_nan_is_refused_on_every_backend(backend, inputs):
    q, k, v, s, g1, gh, _ = inputs()
    v[0, 3, 1, 2] = float("nan")
    assert_param_error(zeros_attention, q, k, v, s, g1, gh, backend=backend, param="v")


def test_mixed_float_dtypes_are_promoted(inputs):
    q, k, v, s, g1, gh, _ = inputs()
    ref = zeros_attention(q, k, v, s, g1, gh, backend="reference")
    out = zeros_attention(q.float(), k, v.float(), s, g1.float(), gh, backend="chunk")
    assert out.dtype == torch.float64
    assert_close(out, ref, rtol=0, atol=1e-6)  # q and v rounded to float32 on the way
    half = zeros_attention(*(x.half() for x in (q, k, v)), s.half(), g1.half(), gh.half())
    assert half.dtype == torch.float16


def test_work_that_would_not_fit_is_refused_before_it_starts():
    T = 2**20  # the reference backend's (T, T) weights: 2^40 floats per head
    q = torch.zeros(1, 1, 1, 4).expand(1, T, 1, 4)  # views: no memory is allocated
    s = torch.zeros(1, 1, 1).expand(1, T, 1)
    error = assert_param_error(zeros_attention, q, q, q, s, s, s, backend="reference", param="q")
    assert "fit in memory" in str(error)
    assert_param_error(zero_sum_weights, s, s, s, param="s")


def _spy_forms(monkeypatch):
    """Count the calls of the chunk path's forms: the factored form's two arrangements (keys:
    calls autograd does not record; values: recorded ones) and the pairwise form."""
    from zeros import chunk

    calls = {"factored_keys": 0, "factored_values": 0, "pairwise": 0}
    for form in calls:
        real = getattr(chunk, f"_{form}")

        def spy(*a, _real=real, _form=form):
            calls[_form] += 1
            return _real(*a)

        monkeypatch.setattr(chunk, f"_{form}", spy)
    return calls


@pytest.mark.parametrize("gate0", [False, True])
def test_chunk_factored_form_equals_the_pairwise_form(gate0, inputs, monkeypatch):
    """Moderate logits take the rank-3 form; its two arrangements and the forced pairwise form
    give the same output, and the recorded ones the same gradients, in float64 (T = 100: a
    partial last block)."""
    from zeros import chunk

    calls = _spy_forms(monkeypatch)
    xs = [
        x.requires_grad_()
        for x in inputs(B=2, T=100, H=2, d=8, gate0=gate0, scale=5.0)
        if x is not None
    ]

    def run():
        out = zeros_attention(*xs, backend="chunk", chunk_size=16)
        grads = torch.autograd.grad((out * torch.linspace(-1, 1, 8)).sum(), xs)
        return out.detach(), grads

    factored, grads_f = run()
    with torch.no_grad():
        keys = zeros_attention(*xs, backend="chunk", chunk_size=16)
    assert calls == {"factored_keys": 1, "factored_values": 1, "pairwise": 0}
    monkeypatch.setattr(chunk, "factored_range", lambda dtype: -1.0)
    pairwise, grads_p = run()
    assert calls == {"factored_keys": 1, "factored_values": 1, "pairwise": 1}
    assert_close(factored, pairwise, rtol=0, atol=1e-12)
    assert_close(keys, pairwise, rtol=0, atol=1e-12)
    for gf, gp in zip(grads_f, grads_p, strict=True):
        assert_close(gf, gp, rtol=0, atol=1e-11)


def test_chunk_factored_form_holds_up_to_its_range_in_float32(inputs, monkeypatch):
    """A jump of 55 at the end of every block (just inside the fp32 bound of 61.4) keeps the
    factored form within fp32 rounding of the float64 reference; a jump of 90 goes pairwise,
    where the factored form would overflow (e^90 > fp32 max)."""
    from zeros import chunk
    from zeros.chunk import factored_range

    assert 61 < factored_range(torch.float32) < 62
    q, k, v, _, g1, gh, _ = inputs(B=1, T=128, H=2, d=8, dtype=torch.float32)
    for jump, form in ((55.0, "factored_keys"), (90.0, "pairwise")):
        calls = _spy_forms(monkeypatch)
        s = torch.zeros(1, 128, 2)
        s[:, 15::16] = jump * torch.arange(1, 9).view(1, 8, 1)  # block maxima rise by `jump`
        ref = zeros_attention(*(x.double() for x in (q, k, v, s, g1, gh)), backend="reference")
        out = zeros_attention(q, k, v, s, g1, gh, backend="chunk", chunk_size=16)
        assert calls[form] == 1 and sum(calls.values()) == 1
        check_finite(out)
        assert_close(out, ref, rtol=0, atol=2e-5 * ref.abs().max().item(), msg=form)
        if form == "factored_keys":  # and the arrangement for calls autograd records
            recorded = zeros_attention(
                q, k, v, s.clone().requires_grad_(), g1, gh, backend="chunk", chunk_size=16
            )
            assert calls["factored_values"] == 1
            assert_close(recorded.detach(), ref, rtol=0, atol=2e-5 * ref.abs().max().item())
    monkeypatch.setattr(chunk, "factored_range", lambda dtype: math.inf)
    assert not zeros_attention(q, k, v, s, g1, gh, backend="chunk", chunk_size=16).isfinite().all()


def test_chunk_normalises_inside_the_factored_form(inputs, monkeypatch):
    """The factored form folds 1/|q| and 1/|k| into per-position scalars: scaling q and k
    changes nothing, and all-zero query and key rows (F.normalize maps them to 0) stay finite
    next to a 50-per-block logit jump, where a row's coefficient reaches e^50, in fp32."""
    calls = _spy_forms(monkeypatch)
    q, k, v, _, g1, gh, _ = inputs(B=1, T=64, H=2, d=8, dtype=torch.float32)
    s = torch.zeros(1, 64, 2)
    s[:, 15::16] = 50.0 * torch.arange(1, 5).view(1, 4, 1)
    q[:, 3], k[:, 5], q[:, 20:22] = 0.0, 0.0, 0.0
    ref = zeros_attention(*(x.double() for x in (q, k, v, s, g1, gh)), backend="reference")
    out = zeros_attention(q, k, v, s, g1, gh, backend="chunk", chunk_size=16)
    scaled = zeros_attention(1e-6 * q, 1e6 * k, v, s, g1, gh, backend="chunk", chunk_size=16)
    assert calls == {"factored_keys": 2, "factored_values": 0, "pairwise": 0}
    check_finite(out)
    assert_close(out, ref, rtol=0, atol=2e-5 * ref.abs().max().item())
    assert_close(scaled, out, rtol=0, atol=1e-6 * ref.abs().max().item())


def test_chunk_gradients_stay_finite_next_to_large_in_block_jumps(inputs, monkeypatch):
    """Rows 45 below their block's maximum (coefficients up to e^45): the fp32 gradients of
    every input match the float64 reference's (summing x_u = e^{s_u - M_b} ~ e^-45 would pass
    e^90 through the backward, past fp32's range)."""
    calls = _spy_forms(monkeypatch)
    q, k, v, _, g1, gh, _ = inputs(B=1, T=64, H=2, d=8, dtype=torch.float32)
    s = torch.zeros(1, 64, 2)
    s[:, 15::16] = 45.0 * torch.arange(1, 5).view(1, 4, 1)
    weight = torch.linspace(-1, 1, 8)

    def grads(backend, dtype):
        xs = [x.to(dtype).requires_grad_() for x in (q, k, v, s, g1, gh)]
        out = zeros_attention(*xs, backend=backend, chunk_size=16)
        return torch.autograd.grad((out * weight.to(dtype)).sum(), xs)

    for got, ref in zip(
        grads("chunk", torch.float32), grads("reference", torch.float64), strict=True
    ):
        check_finite(got)
        assert_close(got.double(), ref, rtol=0, atol=1e-4 * ref.abs().max().item())
    assert calls == {"factored_keys": 0, "factored_values": 1, "pairwise": 0}
