import pytest
import torch
import transformers

from alphadecay import ALPHABET, AlphaDecayAdamW, synthetic_corpus, synthetic_text, tiny_llama
from alphadecay.train import lm_loss
from paperkit.testing import assert_param_error, check_finite


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


def test_tiny_llama_is_a_transformers_causal_lm():
    torch.manual_seed(0)
    model = tiny_llama(len(ALPHABET), d=64, n_layers=2, n_heads=4, ctx=64)
    assert isinstance(model, transformers.LlamaForCausalLM)
    assert (
        90_000 < sum(p.numel() for p in model.parameters()) < 120_000
    )  # ~0.1M, as the README's reproduction model
    tokens = torch.randint(0, len(ALPHABET), (3, 64))
    logits = model(tokens).logits
    assert logits.shape == (3, 64, len(ALPHABET))
    check_finite(logits)
    # causal: changing the last token leaves earlier logits unchanged
    changed = tokens.clone()
    changed[:, -1] = (changed[:, -1] + 1) % len(ALPHABET)
    assert torch.equal(model(changed).logits[:, :-1], logits[:, :-1])
    qwen = tiny_llama(30, d=32, n_layers=1, n_heads=2, ctx=8, family="qwen2")
    assert isinstance(qwen, transformers.Qwen2ForCausalLM)


@pytest.mark.parametrize("family", ["llama", "qwen2"])
def test_alphadecay_trains_a_checkpoint_from_disk(tmp_path, family):
    """A user's path: a tiny checkpoint saved with save_pretrained, loaded with
    from_pretrained, trained with AlphaDecayAdamW without any module mapping."""
    torch.manual_seed(0)
    tiny_llama(30, d=32, n_layers=2, n_heads=2, ctx=16, family=family).save_pretrained(tmp_path)
    model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path)
    opt = AlphaDecayAdamW(model, lr=3e-3, weight_decay=0.1, update_every=5, min_eigs=8)
    names = set(opt.last_alphas)
    assert {n.rsplit(".", 1)[-1] for n in names} == {
        "q_proj",
        "k_proj",
        "v_proj",
        "o_proj",
        "gate_proj",
        "up_proj",
        "down_proj",
    }
    assert len(names) == 2 * 7 - 1  # every block projection but the first Linear
    x = torch.randint(0, 30, (8, 17), generator=torch.Generator().manual_seed(1))
    losses = []
    for _ in range(20):
        loss = lm_loss(model, x)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.8 * losses[0]
    assert len(set(opt.last_decays.values())) > 1  # per-module decays, not one value


def test_errors():
    assert_param_error(tiny_llama, 30, d=30, n_heads=4, param="d")
    assert_param_error(tiny_llama, 0, param="vocab")
    assert_param_error(tiny_llama, 30, family="gpt2", param="family")
    assert_param_error(tiny_llama, 10**12, param="vocab")  # would not fit in memory
    assert_param_error(synthetic_corpus, 0, param="n_tokens")
