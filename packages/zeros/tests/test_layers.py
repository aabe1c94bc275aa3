import math

import pytest
import torch

from paperkit.testing import (
    assert_close,
    assert_param_error,
    check_dtype_device,
    check_finite,
    check_seeded_determinism,
    check_state_dict_roundtrip,
)
from zeros import ZeroSAttention
from zeros.rope import RotaryEmbedding


def test_shapes_backends_and_determinism():
    x = torch.randn(2, 40, 32)
    outs = {}
    for backend in ("reference", "scan", "chunk"):
        torch.manual_seed(0)
        layer = ZeroSAttention(32, 4, backend=backend, chunk_size=16, first_layer=True)
        outs[backend] = check_dtype_device(layer, x)
        check_finite(outs[backend])
    assert_close(outs["scan"], outs["reference"], rtol=0, atol=1e-5)
    assert_close(outs["chunk"], outs["reference"], rtol=0, atol=1e-5)
    check_seeded_determinism(lambda: ZeroSAttention(32, 4)(torch.randn(2, 10, 32)))


def test_float64_and_state_dict():
    x = torch.randn(1, 9, 16, dtype=torch.float64)
    check_dtype_device(ZeroSAttention(16, 2).double(), x)
    check_state_dict_roundtrip(lambda: ZeroSAttention(16, 2, first_layer=True).double(), x)


@pytest.mark.parametrize("causal", [True, False])
def test_layer_matches_a_hand_written_forward(causal):
    """Recompute the layer from its weights with the explicit weights r_{t,i} (steps 1-5 of the
    zeros.layers docstring)."""
    torch.manual_seed(1)
    D, H = 12, 2
    d = D // H
    layer = ZeroSAttention(D, H, causal=causal, backend="scan", first_layer=True).double()
    with torch.no_grad():
        layer.mu.normal_()
        layer.log_tau.fill_(0.7)
    x = torch.randn(1, 6, D, dtype=torch.float64)
    W, b = layer.in_proj.weight, layer.in_proj.bias
    proj = x[0] @ W.T + b
    q, k, v, u = (proj[:, i * D : (i + 1) * D].view(6, H, d) for i in range(4))
    g = proj[:, 4 * D :].view(6, H, 3)
    rope = RotaryEmbedding(d, 64).double()
    q, k = rope(q[None])[0], rope(k[None])[0]
    out = torch.zeros(6, H, d, dtype=torch.float64)
    tau = math.exp(0.7)
    for h in range(H):
        for t in range(6):
            n = t + 1 if causal else 6
            idx = range(n)

            def s_of(i, h=h, n=n):
                upto = i + 1 if causal else n
                mean = (tau * layer.mu[h] + u[:upto, h].sum(0)) / (tau + upto)
                return -(u[i, h] @ mean) / math.sqrt(d)

            s = torch.stack([s_of(i) for i in idx])
            p = torch.softmax(s, 0)
            d1 = (s - s.mean()) / n
            dh = p - 1 / n - d1
            r = (
                torch.sigmoid(g[t, h, 0]) * d1
                + torch.sigmoid(g[t, h, 1]) * dh
                + torch.tanh(g[t, h, 2]) / n
            )
            qn = q[t, h] / q[t, h].norm()
            for j, i in enumerate(idx):
                out[t, h] += r[j] * (qn @ (k[i, h] / k[i, h].norm())) * v[i, h]
    out = torch.nn.functional.layer_norm(out, (d,), eps=1e-5).reshape(6, D)
    expected = out @ layer.out_proj.weight.T + layer.out_proj.bias
    assert_close(layer(x)[0], expected, rtol=0, atol=1e-10)


@pytest.mark.parametrize("logit_type", ["deviation", "quadratic", "mean"])
def test_logit_types(logit_type):
    layer = ZeroSAttention(16, 2, logit_type=logit_type).double()
    u = torch.randn(1, 5, 2, 8, dtype=torch.float64)
    s = layer.radial_logits(u)
    expected = {
        "quadratic": u.pow(2).sum(-1) / 8,
        "mean": u.sum(-1) / 8,
        # tau = 1, mu = 0 at init: the running mean is sum_{j<=i} u_j / (1 + i)
        "deviation": -(u * (u.cumsum(1) / (1 + torch.arange(1, 6).view(1, 5, 1, 1)))).sum(-1)
        / math.sqrt(8),
    }[logit_type]
    assert_close(s, expected, rtol=0, atol=1e-12)


def test_terms_ablation_zeroes_a_gate():
    torch.manual_seed(0)
    x = torch.randn(1, 8, 16, dtype=torch.float64)
    outs = {}
    for terms in ("both", "first", "higher"):
        torch.manual_seed(0)
        outs[terms] = ZeroSAttention(16, 2, terms=terms).double()(x)
    assert not torch.allclose(outs["first"], outs["both"])
    assert not torch.allclose(outs["higher"], outs["both"])


def test_gradients_reach_every_parameter():
    layer = ZeroSAttention(16, 2, first_layer=True)
    layer(torch.randn(2, 12, 16)).pow(2).sum().backward()
    for name, p in layer.named_parameters():
        assert p.grad is not None and p.grad.abs().sum() > 0, name


def test_bad_arguments():
    assert_param_error(ZeroSAttention, 30, 4, param="num_heads")
    assert_param_error(ZeroSAttention, 12, 4, param="num_heads")  # d = 3 is odd: no RoPE
    assert_param_error(ZeroSAttention, 0, 1, param="dim")
    assert_param_error(ZeroSAttention, 16, 2, logit_type="cosine", param="logit_type")
    assert_param_error(ZeroSAttention, 16, 2, backend="cuda", param="backend")
    assert_param_error(ZeroSAttention, 16, 2, terms="zero", param="terms")
    assert_param_error(ZeroSAttention, 16, 2, chunk_size=0, param="chunk_size")
    assert_param_error(ZeroSAttention, 16, 2, dropout=1.0, param="dropout")
    assert_param_error(ZeroSAttention, 16, "2", param="num_heads", exc=TypeError)
    assert_param_error(ZeroSAttention, 10**6, 2, param="dim")  # 20 TB of weights
    layer = ZeroSAttention(16, 2, max_seq_len=8)
    assert_param_error(layer, torch.randn(1, 9, 16), param="x")
    assert_param_error(layer, torch.randn(9, 16), param="x")
    assert_param_error(layer, torch.randn(1, 4, 15), param="x")
    ZeroSAttention(16, 2, max_seq_len=8, rope=False)(torch.randn(1, 9, 16))  # no RoPE: no limit


@pytest.mark.parametrize("dtype", [torch.float64, torch.float16])
def test_input_of_another_dtype_is_refused_clearly(dtype):
    error = assert_param_error(
        ZeroSAttention(16, 2), torch.randn(1, 4, 16, dtype=dtype), param="x", exc=TypeError
    )
    assert "torch.float32" in str(error)


def test_a_backend_that_cannot_run_is_an_error_not_a_fall_back():
    layer = ZeroSAttention(16, 2, backend="triton")  # d = 8: below the kernel's smallest tile
    assert_param_error(layer, torch.randn(1, 4, 16), param="backend")
