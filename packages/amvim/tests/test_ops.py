"""The selective scan: reference vs a naive loop, chunked vs reference, gradients, causality,
and the backends that cannot run here."""

import pytest
import torch
import torch.nn.functional as F

from amvim.ops import mamba_ssm_available, selective_scan
from paperkit.testing import assert_close, assert_param_error, gradcheck64

OPTIONAL = ("D", "z", "delta_bias")


def naive(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=True):
    """The recurrence written per (b, e, n) with Python scalars (Mamba, Alg. 2)."""
    Bsz, E, L = u.shape
    N = A.shape[1]
    out = torch.zeros(Bsz, E, L, dtype=torch.float64)
    last = torch.zeros(Bsz, E, N, dtype=torch.float64)
    for b in range(Bsz):
        for e in range(E):
            h = [0.0] * N
            for t in range(L):
                dt = float(delta[b, e, t]) + (float(delta_bias[e]) if delta_bias is not None else 0)
                if delta_softplus:
                    dt = float(F.softplus(torch.tensor(dt, dtype=torch.float64)))
                y = 0.0
                for n in range(N):
                    a = float(torch.exp(torch.tensor(dt * float(A[e, n]), dtype=torch.float64)))
                    h[n] = a * h[n] + dt * float(B[b, n, t]) * float(u[b, e, t])
                    y += float(C[b, n, t]) * h[n]
                if D is not None:
                    y += float(D[e]) * float(u[b, e, t])
                if z is not None:
                    zz = float(z[b, e, t])
                    y *= zz / (1 + float(torch.exp(torch.tensor(-zz, dtype=torch.float64))))
                out[b, e, t] = y
            last[b, e] = torch.tensor(h, dtype=torch.float64)
    return out, last


@pytest.mark.parametrize("optional", [True, False])
@pytest.mark.parametrize("softplus", [True, False])
def test_reference_matches_naive_loop(scan_inputs, optional, softplus):
    x = scan_inputs(L=9)
    if not optional:
        x = {k: (None if k in OPTIONAL else v) for k, v in x.items()}
    if not softplus:  # keep Δ positive without the softplus
        x["delta"] = x["delta"].abs()
        if x["delta_bias"] is not None:
            x["delta_bias"] = x["delta_bias"].abs()
    out, last = selective_scan(
        **x, delta_softplus=softplus, return_last_state=True, backend="reference"
    )
    want, want_last = naive(**x, delta_softplus=softplus)
    assert_close(out, want, rtol=1e-12, atol=1e-12)
    assert_close(last, want_last, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("backend", ["chunked", "recurrent"])
@pytest.mark.parametrize("optional", [True, False])
@pytest.mark.parametrize("L", [1, 16, 37, 64])
def test_fast_paths_match_reference(scan_inputs, optional, L, backend):
    x = scan_inputs(B=2, E=4, L=L, N=3, seed=L)
    if not optional:
        x = {k: (None if k in OPTIONAL else v) for k, v in x.items()}
    ref = selective_scan(**x, return_last_state=True, backend="reference")
    out = selective_scan(**x, return_last_state=True, backend=backend)
    for a, b in zip(out, ref, strict=True):
        assert_close(a, b, rtol=1e-10, atol=1e-10)  # fp64, agreement to 1e-10


def test_chunked_is_stable_with_strong_decay(scan_inputs):
    # ΔA of about -100 per step: e^{-S_s} alone would overflow float64 within a chunk
    x = scan_inputs(E=2, L=40, N=2, seed=3)
    x["A"] = -torch.full((2, 2), 50.0, dtype=torch.float64)
    x["delta"] = x["delta"].abs() + 2.0
    ref = selective_scan(**x, backend="reference")
    out = selective_scan(**x, backend="chunked")
    assert torch.isfinite(out).all()
    assert_close(out, ref, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("backend", ["reference", "chunked", "recurrent"])
def test_gradcheck(scan_inputs, backend):
    x = scan_inputs(B=1, E=3, L=7, N=2)
    names = list(x)

    def f(*args):
        return selective_scan(**dict(zip(names, args, strict=True)), backend=backend)

    assert gradcheck64(f, *x.values())


def test_recurrent_gradcheck_without_optional_inputs_and_through_the_last_state(scan_inputs):
    x = scan_inputs(B=1, E=2, L=6, N=2)
    u, delta, A, B, C = (x[k] for k in ("u", "delta", "A", "B", "C"))

    def f(u, delta, A, B, C):
        out, last = selective_scan(
            u, delta, A, B, C, delta_softplus=False, backend="recurrent", return_last_state=True
        )
        return out, last

    assert gradcheck64(f, u, delta.abs(), A, B, C)


@pytest.mark.parametrize("backend", ["reference", "chunked", "recurrent"])
def test_causality(scan_inputs, backend):
    x = scan_inputs(E=3, L=20, N=4)
    before = selective_scan(**x, backend=backend)
    tau = 11
    x["u"] = x["u"].clone()
    x["u"][:, :, tau] += 5.0
    x["delta"][:, :, tau] -= 1.0
    after = selective_scan(**x, backend=backend)
    assert torch.equal(after[:, :, :tau], before[:, :, :tau])
    assert (after[:, :, tau:] - before[:, :, tau:]).abs().max() > 1e-3  # the change does arrive


def test_float32_chunked_close_to_float64(scan_inputs):
    x = scan_inputs(B=2, E=8, L=64, N=8, seed=5)
    ref = selective_scan(**x, backend="reference")
    out = selective_scan(**{k: v.float() for k, v in x.items()}, backend="chunked")
    assert_close(out, ref, rtol=1e-4, atol=1e-4 * float(ref.abs().max()))


@pytest.mark.skipif(mamba_ssm_available(), reason="mamba-ssm is installed here")
def test_mamba_ssm_backend_refused_naming_the_install(scan_inputs):
    err = assert_param_error(selective_scan, **scan_inputs(), backend="mamba_ssm", param="backend")
    assert "pip install mamba-ssm" in str(err)


def test_triton_on_cpu_without_interpreter_refused(scan_inputs, monkeypatch):
    monkeypatch.delenv("TRITON_INTERPRET", raising=False)
    assert_param_error(selective_scan, **scan_inputs(), backend="triton", param="backend")


def test_auto_on_cpu_is_recurrent(scan_inputs):
    x = scan_inputs(L=33)
    auto = selective_scan(**x)
    assert torch.equal(auto, selective_scan(**x, backend="recurrent"))
