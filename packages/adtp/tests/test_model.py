import math

import pytest
import torch

from adtp.data import needle_task
from adtp.model import PrunableEncoder, keep_counts


def test_hard_with_ratio_one_equals_full(tiny):
    # float64, atol 1e-10: re-padding changes shapes and summation order, not the result
    model, x = tiny
    full = model(x.input_ids, x.attention_mask)
    hard = model(x.input_ids, x.attention_mask, "hard", [1.0, 1.0, 1.0])
    assert torch.allclose(hard["logits"], full["logits"], atol=1e-10, rtol=0)
    assert torch.equal(hard["flops"], full["flops"])


def test_soft_with_unit_masks_equals_full(tiny):
    # keep ratio 1 keeps every live token with mask exactly 1; +log(1 + 1e-6) cancels in softmax
    model, x = tiny
    full = model(x.input_ids, x.attention_mask)
    soft = model(x.input_ids, x.attention_mask, "soft", [1.0, 1.0, 1.0])
    assert all(bool((m[x.attention_mask] == 1).all()) for m in soft["masks"])
    assert torch.allclose(soft["logits"], full["logits"], atol=1e-10, rtol=0)


@pytest.mark.parametrize("ratios", [[0.6, 0.3, 0.1], [0.9, 0.9, 0.5], [0.05, 0.05, 0.05]])
@pytest.mark.parametrize("score", ["predictor", "attention", "random"])
def test_hard_pruning_keeps_cls_sep_exact_counts_in_order(tiny, ratios, score):
    model, x = tiny
    out = model(x.input_ids, x.attention_mask, "hard", ratios, score=score)
    n = x.attention_mask.sum(1)
    for k, index in enumerate(out["kept_index"]):
        want = [max(2, math.ceil(ratios[k] * int(length) - 1e-9)) for length in n]
        want = [
            min(w, prev)
            for w, prev in zip(want, out["kept_counts"][:, max(k - 1, 0)].tolist(), strict=True)
        ]
        assert out["kept_counts"][:, k].tolist() == want
        for b in range(len(n)):
            kept = index[b][index[b] >= 0].tolist()
            assert len(kept) == want[b]
            assert kept == sorted(kept)  # order preserved
            assert kept[0] == 0 and kept[-1] == int(n[b]) - 1  # CLS and SEP
            assert all(bool(x.attention_mask[b, i]) for i in kept)  # never padding


def test_hard_keeps_the_top_scored_tokens(tiny):
    model, x = tiny
    with torch.no_grad():
        scores = model.predictors[0].score(model.hidden_states(x.input_ids, x.attention_mask)[1])
    out = model(x.input_ids, x.attention_mask, "hard", [0.5, 0.5, 0.5])
    n = x.attention_mask.sum(1)
    for b in range(len(n)):
        inner = scores[b, 1 : n[b] - 1]
        top = set((inner.topk(int(out["kept_counts"][b, 0]) - 2).indices + 1).tolist())
        kept = set(out["kept_index"][0][b].tolist()) - {0, int(n[b]) - 1, -1}
        assert kept == top


def test_flops_of_hard_mode_follow_the_counts(tiny):
    from adtp.flops import encoder_flops

    model, x = tiny
    out = model(x.input_ids, x.attention_mask, "hard", [0.5, 0.4, 0.2])
    counts = out["kept_counts"]
    for b, n in enumerate(x.attention_mask.sum(1).tolist()):
        tokens = [n] + counts[b].tolist()  # layer 0 full, then layers 1, 2, 3
        assert int(out["flops"][b]) == encoder_flops(tokens, 16, 32)


def test_soft_expected_flops_is_differentiable_in_the_ratios(tiny):
    model, x = tiny
    r = torch.tensor([0.7, 0.5, 0.3], dtype=torch.float64, requires_grad=True)
    out = model(x.input_ids, x.attention_mask, "soft", r.expand(6, 3), temperature=0.5)
    out["expected_flops"].sum().backward()
    assert bool((r.grad > 0).all())


def test_soft_masks_are_cumulative_and_mark_the_hard_choice(tiny):
    model, x = tiny
    ratios = [0.7, 0.5, 0.3]
    soft = model(x.input_ids, x.attention_mask, "soft", ratios, temperature=0.05)
    hard = model(x.input_ids, x.attention_mask, "hard", ratios)
    first = soft["masks"][0]
    for b in range(6):
        alive = set(torch.nonzero(first[b] > 0.5).flatten().tolist())
        assert alive == set(hard["kept_index"][0][b][hard["kept_index"][0][b] >= 0].tolist())
    for prev, cur in zip(soft["masks"], soft["masks"][1:], strict=False):
        assert bool((cur <= prev + 1e-12).all())


def test_retainer_drives_the_hard_counts(tiny):
    model, x = tiny
    out = model(x.input_ids, x.attention_mask, "hard")
    r = out["keep_ratios"]
    assert bool((r[:, 1:] <= r[:, :-1]).all())
    assert torch.equal(
        out["kept_counts"][:, 0], keep_counts(r[:, :1], x.attention_mask.sum(1))[:, 0]
    )


def test_keep_counts_count_cls_and_sep():
    n = torch.tensor([10, 40, 3])
    assert keep_counts(torch.tensor([[0.01], [0.5], [1.0]]), n)[:, 0].tolist() == [2, 20, 3]


def test_bad_keep_ratio_and_prune_layer():
    x = needle_task(2, min_len=12, max_len=16, max_signals=2, seed=0)
    model = PrunableEncoder(200, 8, 3, 2, 16, 16, 2, [1, 2])
    for bad in ([0.0, 0.5], [0.5, 1.5], [float("nan"), 0.5]):
        with pytest.raises(ValueError, match="'keep_ratios'"):
            model(x.input_ids, x.attention_mask, "hard", bad)
    for layers in ([0, 1], [1, 3], [2, 1]):
        with pytest.raises(ValueError, match="'prune_layers'"):
            PrunableEncoder(200, 8, 3, 2, 16, 16, 2, layers)


def test_autocast_bf16_runs(tiny):
    model, x = tiny
    m = model.float()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = m(x.input_ids, x.attention_mask, "hard", [0.5, 0.4, 0.3])
    assert bool(torch.isfinite(out["logits"]).all())
