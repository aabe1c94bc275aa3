import torch

from alphadecay import ALPHABET, TinyLlama, synthetic_corpus, synthetic_text
from paperkit.testing import (
    assert_param_error,
    check_finite,
    check_state_dict_roundtrip,
)


def test_corpus_is_deterministic_and_english_like():
    a, b = synthetic_corpus(20_000, seed=3), synthetic_corpus(20_000, seed=3)
    assert torch.equal(a, b) and a.dtype == torch.int64 and a.shape == (20_000,)
    assert not torch.equal(a, synthetic_corpus(20_000, seed=4))
    assert int(a.min()) >= 0 and int(a.max()) < len(ALPHABET)
    text = synthetic_text(200_000, seed=0)
    words = text.replace(".", " ").replace(",", " ").split()
    counts = torch.tensor(sorted({w: words.count(w) for w in set(words[:20_000])}.values()))
    # Zipf-like: the most frequent word form is far more common than the median one
    assert counts[-1] > 20 * counts.median()
    assert {"the", "and"} <= set(words)
    assert "".join(ALPHABET[i] for i in synthetic_corpus(500, seed=0)) == synthetic_text(500, 0)


def test_tinyllama_contracts():
    torch.manual_seed(0)
    model = TinyLlama(len(ALPHABET), d=64, n_layers=2, n_heads=4, ctx=64)
    assert (
        90_000 < sum(p.numel() for p in model.parameters()) < 120_000
    )  # ~0.1M, as the README's reproduction model
    tokens = torch.randint(0, len(ALPHABET), (3, 64))
    logits = model(tokens)
    assert logits.shape == (3, 64, len(ALPHABET))
    check_finite(logits)
    # causal: changing the last token leaves earlier logits unchanged
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % len(ALPHABET)
    assert torch.equal(model(changed)[:, :-1], logits[:, :-1])
    check_state_dict_roundtrip(
        lambda: TinyLlama(30, d=32, n_layers=1, n_heads=2, ctx=8), tokens[:, :8] % 30
    )


def test_errors():
    assert_param_error(TinyLlama, 30, d=30, n_heads=4, param="d")
    assert_param_error(TinyLlama, 0, param="vocab")
    model = TinyLlama(30, d=32, n_layers=1, n_heads=2, ctx=8)
    assert_param_error(model, torch.zeros(2, 9, dtype=torch.long), param="tokens")
    assert_param_error(model, torch.tensor([[0, 30]]), param="tokens")  # id == vocab
    assert_param_error(model, torch.tensor([[0, -1]]), param="tokens")
    assert_param_error(model, torch.zeros(2, 3), param="tokens", exc=TypeError)
    assert_param_error(TinyLlama, 10**12, param="vocab")  # would not fit in memory
    assert_param_error(synthetic_corpus, 0, param="n_tokens")
