import pytest
import torch

from paperkit.testing import assert_close, assert_param_error, check_seeded_determinism
from zeros import TinyLM, ZeroSAttention
from zeros.models import ATTENTIONS


@pytest.mark.parametrize("attn", ATTENTIONS)
def test_tinylm_shapes_and_causality(attn):
    torch.manual_seed(0)
    model = TinyLM(vocab=20, dim=32, depth=2, heads=4, attn=attn, max_seq_len=16)
    tokens = torch.randint(0, 20, (2, 16))
    logits = model(tokens)
    assert logits.shape == (2, 16, 20)
    changed = tokens.clone()
    changed[:, 10:] = (changed[:, 10:] + 1) % 20
    assert_close(model(changed)[:, :10], logits[:, :10], rtol=0, atol=1e-6)


def test_zero_order_gate_placement():
    def first_layers(zero_order):
        model = TinyLM(20, 32, 3, 4, attn="zeros", zero_order=zero_order)
        return [b.attn.first_layer for b in model.blocks]

    assert first_layers("first") == [True, False, False]
    assert first_layers("all") == [True, True, True]
    assert first_layers("none") == [False, False, False]


def test_attention_kwargs_and_init():
    model = TinyLM(20, 32, 2, 4, attn="zeros", terms="first", backend="chunk")
    assert all(isinstance(b.attn, ZeroSAttention) and b.attn.terms == "first" for b in model.blocks)
    std = model.blocks[0].attn.out_proj.weight.std().item()
    assert 0.005 < std < 0.015  # 0.02 / sqrt(2 * depth) = 0.01


def test_determinism_and_errors():
    check_seeded_determinism(lambda: TinyLM(10, 16, 1, 2)(torch.randint(0, 10, (2, 6))))
    assert_param_error(TinyLM, 10, 16, 1, 2, attn="rnn", param="attn")
    assert_param_error(TinyLM, 0, 16, param="vocab")
    assert_param_error(TinyLM, 10, 16, 1, 2, zero_order="some", param="zero_order")
    assert_param_error(TinyLM(10, 16, 1, 2), torch.randn(2, 6), param="tokens", exc=TypeError)
    assert_param_error(TinyLM, 10, 16, 1, 3, param="heads")  # not a divisor of dim


def test_token_ids_outside_the_vocabulary_are_refused():
    model = TinyLM(10, 16, 1, 2, max_seq_len=8)
    error = assert_param_error(model, torch.tensor([[1, 10, 2]]), param="tokens")
    assert "[0, 10)" in str(error) and "from 1 to 10" in str(error)
    assert_param_error(model, torch.tensor([[1, -1]]), param="tokens")
    assert_param_error(model, torch.zeros(1, 9, dtype=torch.int64), param="tokens")  # > 8 long
