"""The Fine-grained Spatiotemporal Window (paper, Sec. 3.2): event cut at the similarity minimum."""

import pytest
import torch

from streamforest import FineGrainedWindow

SPLIT = 4


def _two_segments(k, n=20):
    g = torch.Generator().manual_seed(0)
    a, b = torch.randn(8, 3, generator=g), torch.randn(8, 3, generator=g)
    return [a if t < k else b for t in range(n)]


@pytest.mark.parametrize("k", range(1, SPLIT))
def test_first_event_ends_at_the_change(k):
    """Constant segments, change at frame k inside the first split window: frames 0..k-1 are
    the first event (the only transition with similarity < 1 is k-1 -> k)."""
    w = FineGrainedWindow(now_frames=1, short_frames=3, split_window=SPLIT, short_tokens=4)
    events = [e for f in _two_segments(k) for e in w.push(f)]
    tokens, t_start, t_end = events[0]
    assert (t_start, t_end) == (0, k - 1) and tokens.shape == (k, 4, 3)


def test_cut_waits_for_short_plus_split_frames():
    w = FineGrainedWindow(now_frames=2, short_frames=3, split_window=SPLIT, short_tokens=4)
    frames = [torch.randn(8, 3) for _ in range(12)]
    firsts = [t for t, f in enumerate(frames) if w.push(f)]
    # the short window reaches 3 + 4 frames when frame 2 + 7 - 1 = 8 arrives (2 in the now window)
    assert firsts[0] == 8


def test_windows_hold_their_sizes():
    w = FineGrainedWindow(now_frames=1, short_frames=5, split_window=3, short_tokens=4)
    for t in range(30):
        w.push(torch.randn(8, 3))
        now, now_spans = w.now_tokens()
        short, short_spans = w.short_window_tokens()
        assert now.shape == (8, 3) and bool((now_spans == t).all())
        assert short.shape[0] // 4 < 5 + 3 and short.shape[1] == 3
        if short.shape[0]:
            assert int(short_spans[-1, 0]) == t - 1  # the newest short frame came from now


def test_without_now_window_the_current_frame_is_in_the_short_window():
    w = FineGrainedWindow(now_frames=0, short_frames=5, split_window=3, short_tokens=4)
    for _ in range(4):
        w.push(torch.randn(8, 3))
    assert w.now_tokens()[0].shape[0] == 0
    assert int(w.short_window_tokens()[1][-1, 0]) == 3
