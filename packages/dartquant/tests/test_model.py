import torch
import transformers

from dartquant import decode, encode, heavy_tailed_acts, perplexity, synthetic_text, tiny_llama
from paperkit.testing import assert_param_error, check_finite


def test_text_round_trip_and_determinism():
    text = synthetic_text(2000, seed=1)
    assert len(text) == 2000 and text == synthetic_text(2000, seed=1) != synthetic_text(
        2000, seed=2
    )
    assert decode(encode(text)) == text


def test_model_shapes_causality_and_ppl():
    torch.manual_seed(0)
    model = tiny_llama(96, 32, 1, 4).eval()
    assert isinstance(model, transformers.LlamaForCausalLM)
    assert isinstance(tiny_llama(96, 32, 1, 4, family="qwen2"), transformers.Qwen2ForCausalLM)
    x = torch.randint(0, 96, (2, 10))
    y = model(x).logits
    check_finite(y)
    assert y.shape == (2, 10, 96)
    x2 = x.clone()
    x2[:, 7:] = 0
    assert torch.allclose(model(x2).logits[:, :7], y[:, :7], atol=1e-5)  # causal
    ppl = perplexity(model, torch.randint(0, 96, (300,)), 32)
    assert 50 < ppl < 200  # an untrained model is near uniform over 96 ids


def test_heavy_tailed_acts_have_outlier_channels():
    x = heavy_tailed_acts(2048, 32, n_outliers=3, outlier_scale=50.0)
    rms = x.pow(2).mean(0).sqrt()
    assert (rms > 20).sum() == 3


def test_model_errors():
    assert_param_error(tiny_llama, 96, 30, 1, 4, param="n_heads")
    assert_param_error(tiny_llama, 96, 32, 1, 4, 3, param="n_kv_heads")
    assert_param_error(tiny_llama, 96, 32, 1, 4, family="gpt2", param="family")
    model = tiny_llama(96, 32, 1, 4)
    assert_param_error(
        perplexity, torch.nn.Linear(2, 2), torch.arange(80), param="model", exc=TypeError
    )
    assert_param_error(encode, "caf\u00e9", param="text")
    assert_param_error(perplexity, model, torch.randint(0, 96, (10,)), 32, param="tokens")
    assert_param_error(perplexity, model, torch.tensor([0, 200] * 40), 32, param="tokens")
    assert_param_error(tiny_llama, 10**12, 64, param="vocab")  # would not fit in memory
