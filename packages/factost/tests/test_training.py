"""Pre-training, few-shot adaptation and evaluation on tiny domains."""

import copy

import numpy as np
import pytest
import torch

from factost import (
    FactoST,
    ReplayBuffer,
    STAdapter,
    TemporalBackbone,
    adapt,
    evaluate,
    make_st_domain,
    pretrain_backbone,
)


@pytest.fixture(scope="module")
def pretrained():
    torch.manual_seed(0)
    t = np.arange(24 * 20, dtype=np.float32)
    rng = np.random.default_rng(0)
    daily = [
        (np.sin(2 * np.pi * t / 4) + 0.1 * rng.standard_normal(t.size).astype(np.float32), 0)
        for _ in range(4)
    ]
    trend = [(np.cumsum(rng.standard_normal(t.size)).astype(np.float32), 1) for _ in range(4)]
    f = TemporalBackbone(12, 6, 2, d_model=16, layers=1, heads=2, n_domains=2)
    buf = ReplayBuffer(64, seed=0)
    pretrain_backbone(
        f, daily + trend, epochs=4, batch_size=64, lr=3e-3, stride=2, key_weight=1.0, replay=buf
    )
    return f, buf, daily, trend


def test_pretraining_fills_bank_and_replay_and_learns_keys(pretrained):
    f, buf, daily, trend = pretrained
    assert f.latent_bank.ndim == 2 and f.latent_bank.shape[1] == 16 and len(f.latent_bank) > 100
    assert len(buf) == 64
    x = torch.stack([torch.from_numpy(s[i : i + 12]) for s, _ in daily for i in range(0, 200, 10)])
    y = torch.stack([torch.from_numpy(s[i : i + 12]) for s, _ in trend for i in range(0, 200, 10)])
    with torch.no_grad():
        a_daily, a_trend = f(x)["weights"][:, 0].mean(), f(y)["weights"][:, 1].mean()
    assert a_daily > 0.5 and a_trend > 0.5  # the keys match each series to its own domain


def test_adaptation_lowers_the_error_and_feeds_the_replay(pretrained):
    f, buf, _, _ = pretrained
    domain = make_st_domain("solar", 8, 24 * 12, seed=0)
    torch.manual_seed(0)
    model = FactoST(copy.deepcopy(f), STAdapter(16, n_nodes=8, topk=3))
    before = evaluate(model, domain, "val")["mae"]
    replay = copy.deepcopy(buf)
    seen = replay.seen
    adapt(model, domain, shots=0.3, epochs=8, replay=replay, lr=3e-3)
    after = evaluate(model, domain, "val")["mae"]
    assert after < before
    assert replay.seen > seen
    for name, p in model.backbone.named_parameters():
        assert torch.equal(p, dict(f.named_parameters())[name])  # frozen backbone untouched


def test_evaluate_metrics_match_a_direct_computation(pretrained):
    f, _, _, _ = pretrained
    domain = make_st_domain("air", 6, 24 * 10, seed=0)
    model = FactoST(f, STAdapter(16, n_nodes=6, topk=2))
    scores = evaluate(model, domain, "test", batch_size=7)
    x, y, tf = domain.windows(12, 6, "test")
    with torch.no_grad():
        pred = model(x, torch.from_numpy(domain.coords), tf, domain.edge_index)
    assert scores["mae"] == pytest.approx(float((pred - y).abs().mean()), rel=1e-5)
    assert scores["rmse"] == pytest.approx(float((pred - y).pow(2).mean().sqrt()), rel=1e-5)
    assert scores["infer_ms"] > 0


def test_errors_named_by_the_paper_api():
    with pytest.raises(TypeError, match="'series'"):
        pretrain_backbone(TemporalBackbone(12, 4, 2, d_model=8, heads=2), [(np.arange(40), 0)], 1)
    with pytest.raises(ValueError, match="'input_len'"):
        TemporalBackbone(10, 4, 4)
    with pytest.raises(ValueError, match="'horizon'"):
        TemporalBackbone(12, 0, 2)
    f = TemporalBackbone(12, 4, 2, d_model=8, heads=2)
    model = FactoST(f, STAdapter(8, n_nodes=5))
    with pytest.raises(ValueError, match="'coords'"):
        model(torch.randn(1, 5, 12), torch.rand(6, 2))
    domain = make_st_domain("air", 5, 24 * 8, seed=0)
    for shots in (0.0, 1.5):
        with pytest.raises(ValueError, match="'shots'"):
            adapt(model, domain, shots=shots)
