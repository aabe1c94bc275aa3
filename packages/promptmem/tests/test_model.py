"""Part B's backbone and prompt tuning (the paper's prompt-tuning setting, Section 5)."""

import pytest
import torch

from paperkit.testing import check_seeded_determinism
from promptmem import FrozenTransformer, memorization_dataset, tune_prompt


def test_only_the_prompt_gets_gradients():
    # check 6: every model parameter is frozen; the prompt receives the gradient
    model = FrozenTransformer(8, d=16, heads=2, max_len=12)
    assert all(not p.requires_grad for p in model.parameters())
    prompt = torch.randn(3, 16, requires_grad=True)
    x = torch.randint(0, 8, (5, 4))
    logits = model(prompt, x)
    assert logits.shape == (5, 4, 8)
    logits.sum().backward()
    assert prompt.grad is not None and prompt.grad.abs().sum() > 0
    assert all(p.grad is None for p in model.parameters())


def test_prompt_changes_the_output_and_m0_works():
    model = FrozenTransformer(8, d=16, heads=2, max_len=12, init_std=0.5)
    x = torch.randint(0, 8, (4, 3))
    empty = model(torch.zeros(0, 16), x)  # m = 0: no prompt
    assert empty.shape == (4, 3, 8)
    with_prompt = model(torch.randn(2, 16), x)
    assert not torch.allclose(empty, with_prompt)
    # a batched prompt (B, m, d) equal to the shared one gives the same logits
    shared = torch.randn(2, 16)
    torch.testing.assert_close(model(shared.expand(4, 2, 16), x), model(shared, x))


def test_init_scale_and_real_inputs():
    small = FrozenTransformer(8, d=16, heads=2, init_std=0.02, seed=3)
    large = FrozenTransformer(8, d=16, heads=2, init_std=0.5, seed=3)
    ratio = large.head.weight.std() / small.head.weight.std()
    assert 20 < ratio < 30  # N(0, sigma^2) weights: 0.5 / 0.02 = 25
    assert torch.equal(small.norm.weight, torch.ones(16)) and small.head.bias.abs().sum() == 0
    real = FrozenTransformer(5, d=16, heads=2, d0=7)
    X, _ = memorization_dataset(6, 2, vocab=5, kind="lowrank", rank=3, d0=7)
    assert real(torch.zeros(1, 16), X).shape == (6, 2, 5)
    with pytest.raises(ValueError, match="'x'"):
        FrozenTransformer(5, d=16, heads=2)(torch.zeros(1, 16), X)


def test_pretrained_backbone_learned_its_task():
    # "pretrained": trained on reversing token sequences, then frozen; it beats chance (1/8)
    model = FrozenTransformer(8, d=16, layers=1, heads=2, max_len=8, init_std="pretrained")
    assert all(not p.requires_grad for p in model.parameters())
    x = torch.randint(0, 8, (64, 8), generator=torch.Generator().manual_seed(5))
    acc = (model(torch.zeros(0, 16), x).argmax(-1) == x.flip(1)).float().mean()
    assert acc > 0.5


def test_tune_prompt_memorises_a_trivial_dataset():
    # check 7: n = 4, N = 1, m = 4 memorised in < 300 steps, deterministically under the seed
    X, Y = memorization_dataset(4, 1, vocab=8, seed=0)
    model = FrozenTransformer(8, init_std=0.5, seed=0)
    prompt, acc, steps = tune_prompt(model, X, Y, 4, steps=300, seed=0)
    assert acc == 1.0 and steps < 300 and prompt.shape == (4, 64)
    assert (model(prompt, X).argmax(-1) == Y).all()
    check_seeded_determinism(lambda: tune_prompt(model, X, Y, 4, steps=300, seed=0)[0])
    before = [p.clone() for p in model.parameters()]
    tune_prompt(model, X, Y, 2, steps=5)
    assert all(torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))


def test_tune_prompt_reports_failure_and_m0():
    X, Y = memorization_dataset(16, 1, vocab=8, input_vocab=64, seed=1)
    model = FrozenTransformer(8, d=16, heads=2, input_vocab=64, init_std=0.5)
    _, acc, steps = tune_prompt(model, X, Y, 1, steps=3)
    assert acc < 1.0 and steps == 3
    prompt, acc0, steps0 = tune_prompt(model, X, Y, 0, steps=50)
    assert prompt.shape == (0, 16) and steps0 == 0
    expected = (model(torch.zeros(0, 16), X).argmax(-1) == Y).float().mean()
    assert acc0 == pytest.approx(float(expected))


def test_runs_under_autocast():
    model = FrozenTransformer(8, d=16, heads=2, init_std=0.5)
    prompt, x = torch.randn(2, 16), torch.randint(0, 8, (3, 4))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = model(prompt, x)
    assert low.dtype == torch.bfloat16 and low.shape == (3, 4, 8)
    # bf16 keeps ~3 significant digits; the logits agree with float32 to that precision
    torch.testing.assert_close(low.float(), model(prompt, x), atol=0.1, rtol=0.05)
