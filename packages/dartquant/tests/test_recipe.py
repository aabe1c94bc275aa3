import pytest
import torch

from dartquant import (
    METHODS,
    calibrate_rotations,
    collect_activations,
    hadamard,
    perplexity,
    pipeline,
    tiny_llama,
)
from paperkit.testing import assert_param_error


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    model = tiny_llama(96, 32, 2, 4, 2).eval()
    with torch.no_grad():
        model.model.embed_tokens.weight[:, :2] += 20.0  # massive-activation channels
    tokens = torch.randint(0, 96, (8, 33), generator=torch.Generator().manual_seed(0))
    return model, tokens


def test_collect_activation_shapes(setup):
    model, tokens = setup
    X1, X2 = collect_activations(model, tokens)
    assert X1.shape == (2 * 2 * 8 * 33, 32)
    assert [x.shape for x in X2] == [(8 * 33, 4, 8)] * 2


@pytest.mark.parametrize("method", METHODS)
def test_every_method_gives_a_rotated_equivalent_and_quantised_model(setup, method):
    model, tokens = setup
    res = pipeline(
        model, tokens, method, w_bits=4, a_bits=8, kv_bits=8, e2e_steps=2, r1_epochs=1, r2_epochs=1
    )
    with torch.no_grad():
        ref = model(tokens).logits
        assert (res.fp_model(tokens).logits - ref).abs().max().item() < 1e-3
    ppl_fp, ppl_q = (
        perplexity(model, tokens.flatten(), 32),
        perplexity(res.model, tokens.flatten(), 32),
    )
    assert ppl_q != ppl_fp and torch.isfinite(torch.tensor(ppl_q))
    if method == "none":
        assert res.R1 is None
    else:
        assert res.R1.shape == (32, 32) and [r.shape for r in res.R2s] == [(2, 8, 8)] * 2
        assert torch.allclose(res.R1.T @ res.R1, torch.eye(32), atol=1e-4)
    if method == "dartquant":  # Hadamard start: QR of H is H up to column signs
        R1_start, _ = torch.linalg.qr(hadamard(32))
        assert not torch.allclose(res.R1, R1_start, atol=1e-6)  # calibration moved it
        assert res.info["r1_whip"][1] <= res.info["r1_whip"][0] * 1.01


def test_pipeline_bad_input(setup):
    model, tokens = setup
    assert_param_error(pipeline, model, tokens[:0], param="calib_tokens")
    assert_param_error(pipeline, model, tokens.float(), param="calib_tokens", exc=TypeError)
    assert_param_error(pipeline, model, tokens + 200, param="calib_tokens")
    assert_param_error(pipeline, model, tokens, "gptq_only", param="method")
    assert_param_error(pipeline, model, tokens, w_bits=1, param="w_bits")
    assert_param_error(pipeline, torch.nn.Linear(4, 4), tokens, param="model", exc=TypeError)
    # errors name the argument at the function the user called
    err = assert_param_error(
        calibrate_rotations, model, tokens, "dartquant", r1_epochs=0, param="r1_epochs"
    )
    assert "of calibrate_rotations" in str(err)
    assert_param_error(calibrate_rotations, model, tokens, "spinquant", param="method")
    assert_param_error(pipeline, model, tokens, r1_epoch=3, param="r1_epoch", exc=TypeError)
    odd = tiny_llama(96, 32, 1, 4, ffn_dim=96)  # no Hadamard of size 96 for R4
    assert_param_error(pipeline, odd, tokens, "quarot", param="model")
