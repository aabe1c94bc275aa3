import pytest
import torch

from flashbias.decompose import NeuralFactorizer
from paperkit.testing import assert_param_error


@pytest.mark.slow  # the first torch.optim step imports torch._dynamo: 15 s to minutes on 2 cores
def test_fit_reaches_low_error_on_a_bias_low_rank_in_the_features():
    torch.manual_seed(0)
    g = torch.Generator().manual_seed(0)
    f_q, f_k = torch.randn(1, 40, 6, generator=g), torch.randn(1, 30, 5, generator=g)
    a, b = torch.randn(6, 2, 3, generator=g), torch.randn(5, 2, 3, generator=g)

    def dense(fq, fk):  # b_{h,ij} = (f_i A_h) . (g_j B_h): rank 3 per head, linear in features
        return torch.einsum(
            "bnhr,bmhr->bhnm",
            torch.einsum("bnc,chr->bnhr", fq, a),
            torch.einsum("bmc,chr->bmhr", fk, b),
        )

    model = NeuralFactorizer(6, 5, heads=2, rank=4, hidden=64)
    history = model.fit([(f_q, f_k)], dense, steps=300, lr=3e-3)
    assert history[0] > 0.5
    assert history[-1] < 1e-2
    q_b, k_b = model(f_q, f_k)
    assert q_b.shape == (1, 40, 2, 4) and k_b.shape == (1, 30, 2, 4)


def test_layers_have_no_biases_and_the_documented_widths():
    model = NeuralFactorizer(3, 4, heads=2, rank=5)
    linears = [m for m in model.phi_q if isinstance(m, torch.nn.Linear)]
    assert [(m.in_features, m.out_features) for m in linears] == [(3, 256), (256, 256), (256, 10)]
    assert all(m.bias is None for m in linears)


def test_bad_arguments():
    assert_param_error(NeuralFactorizer, 3, 4, 2, rank=0, param="rank")
    model = NeuralFactorizer(3, 4, 2, rank=2, hidden=8)
    f_q, f_k = torch.randn(1, 5, 3), torch.randn(1, 6, 4)
    assert_param_error(model.fit, [], lambda a, b: a, steps=3, param="feature_pairs")
    assert_param_error(model.fit, [(f_q, f_k)], "bias", param="dense_bias_fn", exc=TypeError)
    assert_param_error(model.fit, [(f_q, f_k)], lambda a, b: a, lr=0.0, param="lr")
    # the target must be (B, H, N, M) and finite: checked before the optimiser is built
    wrong = torch.zeros(1, 2, 5, 5)
    assert_param_error(model.fit, [(f_q, f_k)], lambda a, b: wrong, param="dense_bias_fn")
    nan = torch.full((1, 2, 5, 6), float("nan"))
    assert_param_error(model.fit, [(f_q, f_k)], lambda a, b: nan, param="dense_bias_fn")
    assert_param_error(model, f_q.double(), f_k, param="f_q", exc=TypeError)
