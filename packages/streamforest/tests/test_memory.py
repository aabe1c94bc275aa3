"""StreamForestMemory: FSTW + PEMF updated frame by frame (paper, Sec. 3.2-3.3)."""

import math

import torch

from streamforest import StreamForestMemory, make_event_stream

SMALL = dict(now_frames=1, short_frames=6, split_window=4, short_tokens=8, tokens_per_frame=4)


def _stream(n=150):
    return make_event_stream(n_frames=n, tokens=16, dim=8, event_len=(3, 12), seed=2)[0]


def test_quota_holds_after_every_update():
    mem = StreamForestMemory(quota=40, **SMALL)
    for frame in _stream():
        mem.update(frame)
        forest = mem.forest
        assert forest.num_tokens <= 40 or len(forest.roots) == 1
    assert mem.forest.merges > 10


def test_memory_is_in_temporal_order_and_merged_spans_cover_children():
    mem = StreamForestMemory(quota=40, **SMALL)
    for t, frame in enumerate(_stream()):
        mem.update(frame)
        tokens, spans = mem.memory()
        assert tokens.shape == (spans.shape[0], 8) and int(spans[-1, 0]) == t
        assert bool((spans[1:, 0] >= spans[:-1, 0]).all())
    for root in mem.forest.roots:
        for child in root.children:
            assert root.t_start <= child.t_start <= child.t_end <= root.t_end


def test_streaming_equals_replay():
    frames = _stream()
    outs = []
    for _ in range(2):
        mem = StreamForestMemory(quota=40, **SMALL)
        for f in frames:
            mem.update(f)
        outs.append(mem.memory())
    assert torch.equal(outs[0][0], outs[1][0]) and torch.equal(outs[0][1], outs[1][1])


def test_unbounded_quota_never_merges():
    mem = StreamForestMemory(quota=math.inf, **SMALL)
    for f in _stream(80):
        mem.update(f)
    assert mem.forest.merges == 0
    leaves = mem.forest.roots
    assert mem.forest.num_tokens == 4 * sum(r.t_end - r.t_start + 1 for r in leaves)
