import pytest

from paperkit import tiny_causal_lm
from paperkit.testing import assert_param_error


def test_unknown_family_is_refused_before_transformers_is_needed():
    assert_param_error(
        tiny_causal_lm, "gpt2", vocab=8, dim=8, layers=1, heads=2, hidden=8, ctx=8, param="family"
    )


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_builds_the_requested_architecture(family):
    transformers = pytest.importorskip("transformers")
    torch = pytest.importorskip("torch")
    model = tiny_causal_lm(
        family, vocab=11, dim=16, layers=2, heads=4, kv_heads=2, hidden=24, ctx=32
    )
    expected = {"llama": transformers.LlamaForCausalLM, "qwen2": transformers.Qwen2ForCausalLM}
    assert type(model) is expected[family]
    config = model.config
    assert (config.hidden_size, config.num_hidden_layers, config.intermediate_size) == (16, 2, 24)
    assert (config.num_attention_heads, config.num_key_value_heads) == (4, 2)
    assert model.lm_head.weight.data_ptr() != model.model.embed_tokens.weight.data_ptr()
    logits = model(torch.zeros(1, 5, dtype=torch.long)).logits
    assert logits.shape == (1, 5, 11)
    has_bias = model.model.layers[0].self_attn.q_proj.bias is not None
    assert has_bias == (family == "qwen2")  # Qwen2's q/k/v carry biases
