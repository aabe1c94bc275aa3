"""Layerwise distillation: a teacher whose kernel is exactly representable is recovered, and
the runs are seeded."""

import torch
from torch import nn

from doflinattn import (
    HedgehogFeatureMap,
    LayerCache,
    LinearAttention,
    layerwise_distill,
    relative_output_error,
)


def _toy_cache(S=16, H=2, N=32, d=8, seed=0):
    """Teacher: LinearAttention with one fixed random HedgehogFeatureMap(d=8, m=16)."""
    g = torch.Generator().manual_seed(seed)
    q, k, v = (torch.randn(S, H, N, d, generator=g) for _ in range(3))
    torch.manual_seed(123)
    teacher = HedgehogFeatureMap(d, 16)
    with torch.no_grad():
        o = LinearAttention(teacher)(q, k, v)
    return LayerCache(q, k, v, o)


def test_distillation_recovers_a_representable_teacher():
    cache = _toy_cache()
    init = layerwise_distill([cache], [16], steps=0, seed=1)[0]
    before = float(relative_output_error(init, cache).mean())
    maps = layerwise_distill([cache], [16], seed=1)[0]  # the default 300 steps
    after = float(relative_output_error(maps, cache).mean())
    assert after < 1e-2 and after < before / 10, (before, after)


def test_mse_ce_and_mlp_options_also_learn():
    # a softmax teacher (the cross-entropy targets are its weights): every option halves the error
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(8, 2, 16, 8, generator=g) for _ in range(3))
    cache = LayerCache(q, k, v, torch.softmax(q @ k.transpose(-1, -2) / 8**0.5, -1) @ v)
    init = float(relative_output_error(layerwise_distill([cache], [16], steps=0)[0], cache).mean())
    for kwargs in ({"loss": "mse+ce"}, {"feature_map": "mlp"}):
        maps = layerwise_distill([cache], [16], steps=60, **kwargs)[0]
        assert float(relative_output_error(maps, cache).mean()) < init / 1.8, kwargs


def _flat(maps):
    return torch.cat([p.detach().flatten() for p in maps.parameters()])


def test_seeded_determinism():
    cache = _toy_cache(S=4, N=8)
    a = layerwise_distill([cache, cache], [4, 6], steps=5, seed=3)
    b = layerwise_distill([cache, cache], [4, 6], steps=5, seed=3)
    c = layerwise_distill([cache, cache], [4, 6], steps=5, seed=4)
    assert all(torch.equal(_flat(x), _flat(y)) for x, y in zip(a, b, strict=True))
    assert not torch.equal(_flat(a[0]), _flat(c[0]))
    assert [len(x) for x in a] == [2, 2] and [x[0].feature_dim for x in a] == [4, 6]
    assert all(isinstance(x, nn.ModuleList) for x in a)


def test_padding_is_excluded_from_the_loss():
    cache = _toy_cache(S=4, N=8)
    mask = torch.zeros(4, 8, dtype=torch.bool)
    mask[:, 6:] = True
    o = cache.o.clone()
    o[:, :, 6:] = 1e6  # garbage at padded queries must not count
    masked = LayerCache(cache.q, cache.k, cache.v, o, mask)
    maps = layerwise_distill([cache], [8], steps=0)[0]
    err = relative_output_error(maps, masked)
    assert bool(torch.isfinite(err).all()) and float(err.max()) < 10
