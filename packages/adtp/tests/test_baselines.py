import pytest
import torch

from adtp.baselines import FixedRatioPruner, geometric_schedule, match_flops
from adtp.data import needle_task
from adtp.metrics import paired_bootstrap, precision_at_k
from adtp.model import PrunableEncoder


def test_match_flops_hits_the_target(tiny):
    model, x = tiny
    n = x.attention_mask.sum(1)
    rho = match_flops(model, n, 0.5)
    out = FixedRatioPruner("ig", geometric_schedule(rho, 3))(model, x.input_ids, x.attention_mask)
    full = model(x.input_ids, x.attention_mask)["flops"]
    assert float(out["flops"].sum() / full.sum()) == pytest.approx(0.5, abs=0.05)


@pytest.mark.parametrize("score", ["attention", "ig", "random"])
def test_fixed_schedule_same_counts_for_every_score(tiny, score):
    model, x = tiny
    out = FixedRatioPruner(score, [0.5, 0.3, 0.2])(model, x.input_ids, x.attention_mask)
    ref = model(x.input_ids, x.attention_mask, "hard", [0.5, 0.3, 0.2])
    assert torch.equal(out["kept_counts"], ref["kept_counts"])


def test_attention_score_keeps_the_most_attended_tokens():
    torch.manual_seed(0)
    model = PrunableEncoder(200, 16, 3, 2, 32, 32, 2, [1, 2]).double().eval()
    x = needle_task(4, min_len=20, max_len=30, max_signals=2, seed=1)
    from adtp.attribution import attention_importance

    maps = model.attention_maps(x.input_ids, x.attention_mask)
    s = attention_importance(maps[:1], x.attention_mask)
    out = FixedRatioPruner("attention", [0.4, 0.4])(model, x.input_ids, x.attention_mask)
    n = x.attention_mask.sum(1)
    for b in range(4):
        k = int(out["kept_counts"][b, 0]) - 2
        top = set((s[b, 1 : n[b] - 1].topk(k).indices + 1).tolist())
        assert set(out["kept_index"][0][b].tolist()) - {0, int(n[b]) - 1, -1} == top


def test_precision_at_k_against_brute_force():
    g = torch.Generator().manual_seed(0)
    scores = torch.randn(30, 12, generator=g)
    mask = torch.ones(30, 12, dtype=torch.bool)
    mask[::2, 9:] = False
    sig = torch.zeros(30, 12, dtype=torch.bool)
    for b in range(30):
        n = int(mask[b].sum())
        sig[b, 1 + torch.randperm(n - 2, generator=g)[: 1 + b % 3]] = True
    want = []
    for b in range(30):
        n = int(mask[b].sum())
        s = int(sig[b].sum())
        ranked = sorted(range(1, n - 1), key=lambda i: -float(scores[b, i]))[:s]
        want.append(sum(bool(sig[b, i]) for i in ranked) / s)
    assert precision_at_k(scores, sig, mask) == pytest.approx(sum(want) / 30)


def test_paired_bootstrap_interval_covers_the_difference():
    g = torch.Generator().manual_seed(1)
    a = torch.rand(500, generator=g) < 0.8
    b = a.clone()
    b[:40] = ~b[:40]
    diff, lo, hi = paired_bootstrap(a, b)
    assert diff == pytest.approx(100 * float((a.double() - b.double()).mean()))
    assert lo <= diff <= hi and hi - lo < 10
