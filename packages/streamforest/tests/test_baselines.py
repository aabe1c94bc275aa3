"""The baseline memories: FIFO, uniform subsampling and global ToMe under a token budget."""

import math

import torch

from streamforest import FIFOMemory, GlobalToMeMemory, StreamForestMemory, UniformMemory

SMALL = dict(now_frames=1, short_frames=4, split_window=3, short_tokens=8, tokens_per_frame=4)


def _frames(n=120, seed=0):
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 16, 6, generator=g)


def _long_spans(mem):
    return mem._long()[1]


def test_fifo_keeps_the_newest_frames_within_budget():
    mem = FIFOMemory(20, **SMALL)
    for f in _frames():
        mem.update(f)
        long = _long_spans(mem)
        assert long.shape[0] <= 20
    times = long[::4, 0].tolist()
    assert times == list(range(times[0], times[0] + 5))  # 5 consecutive frames of 4 tokens
    assert times[-1] + 1 == int(mem.window.short_window_tokens()[1][0, 0])


def test_uniform_keeps_a_doubling_stride_and_covers_the_past():
    mem = UniformMemory(20, **SMALL)
    for f in _frames():
        mem.update(f)
        assert _long_spans(mem).shape[0] <= 20
    long = _long_spans(mem)
    kept = [t for t, _ in mem._frames]
    assert all(t % mem.stride == 0 for t in kept) and mem.stride >= 16
    # the spans tile [0, newest long-term frame] without gaps
    starts, ends = long[::4, 0].tolist(), long[::4, 1].tolist()
    assert starts[0] == 0 and all(s == e + 1 for s, e in zip(starts[1:], ends[:-1], strict=True))


def test_global_tome_merges_to_budget_with_span_unions():
    mem = GlobalToMeMemory(24, **SMALL)
    for f in _frames():
        mem.update(f)
    tokens, spans = mem._long()
    assert tokens.shape[0] == 24 and bool((spans[:, 0] <= spans[:, 1]).all())
    assert bool((spans[1:, 0] >= spans[:-1, 0]).all())
    assert int((spans[:, 1] - spans[:, 0]).max()) > 0  # tokens merged across frames


def test_unbounded_baselines_hold_the_same_tokens():
    outs = []
    for cls in (FIFOMemory, UniformMemory, GlobalToMeMemory):
        mem = cls(math.inf, **SMALL)
        for f in _frames(60):
            mem.update(f)
        outs.append(mem.memory())
    for tokens, spans in outs[1:]:
        assert torch.equal(tokens, outs[0][0]) and torch.equal(spans, outs[0][1])


def test_same_window_as_streamforest():
    a, b = FIFOMemory(20, **SMALL), StreamForestMemory(quota=20, **SMALL)
    for f in _frames(60):
        a.update(f)
        b.update(f)
    assert torch.equal(a.window.short_window_tokens()[0], b.window.short_window_tokens()[0])
