"""The synthetic stream and the probes (fixed before any result)."""

import math

import numpy as np
import pytest
import torch

from streamforest import (
    FIFOMemory,
    StreamForestMemory,
    evaluate_memory,
    fit_probe,
    make_event_stream,
)
from streamforest.reproduce import WINDOW


def test_stream_structure():
    frames, event_type, detail = make_event_stream(n_frames=300, seed=3, noise=0.0)
    assert frames.shape == (300, 49, 32) and frames.dtype == torch.float32
    # the detail one-hot (norm 0.3) sits in 4 tokens of the reserved channels, zero elsewhere
    reserved = frames[..., :4]
    assert torch.allclose((reserved > 0).sum(dim=(1, 2)).float(), torch.full((300,), 4.0))
    assert torch.equal(reserved.amax(dim=1).argmax(dim=1), detail)
    assert torch.allclose(reserved.amax(dim=(1, 2)), torch.full((300,), 0.3))
    changes = torch.nonzero(event_type[1:] != event_type[:-1]).flatten()
    lengths = torch.diff(torch.cat([torch.tensor([-1]), changes, torch.tensor([299])]))[:-1]
    assert int(lengths.min()) >= 5 and int(lengths.max()) <= 40
    assert len(event_type.unique()) < len(changes) + 1  # some type comes back


def test_same_types_seed_same_types():
    a = make_event_stream(n_frames=50, seed=1, noise=0.0, detail_tokens=0)
    b = make_event_stream(n_frames=50, seed=1, noise=0.0, detail_tokens=0)
    assert torch.equal(a[0], b[0])
    c = make_event_stream(n_frames=50, seed=1, types_seed=1, noise=0.0, detail_tokens=0)
    assert not torch.equal(a[0], c[0])


@pytest.fixture(scope="module")
def clean_probe():
    train = make_event_stream(n_frames=1500, seed=99, noise=0.0)
    return fit_probe(train[0], train[1], 12)


def test_probe_sanity_noise_free_unbounded(clean_probe):
    """noise = 0 and an unbounded budget: past and detail accuracy are exactly 1."""
    stream = make_event_stream(n_frames=300, seed=4, noise=0.0)
    res = evaluate_memory(
        StreamForestMemory(quota=math.inf, **WINDOW),
        stream,
        np.arange(40, 300, 20),
        centroids=clean_probe,
    )
    assert res["past_acc"] == 1.0 and res["now_detail_acc"] == 1.0
    assert all(v == 1.0 for v in res["past_acc_by_age"].values() if v is not None)


def test_fifo_cannot_answer_old_queries(clean_probe):
    stream = make_event_stream(n_frames=200, seed=5, noise=0.0)
    res = evaluate_memory(
        FIFOMemory(64, **WINDOW), stream, [199], centroids=clean_probe, age_bins=(1, 20, 100)
    )
    by_age = res["past_acc_by_age"]  # the short window holds at least 18 frames
    assert by_age["1-19"] == 1.0 and by_age["100+"] == 0.0


def test_fit_probe_is_the_type_mean():
    frames = torch.arange(24.0).reshape(4, 3, 2)
    c = fit_probe(frames, torch.tensor([0, 1, 0, 1]), 2)
    torch.testing.assert_close(c[0], frames[[0, 2]].double().mean(dim=(0, 1)))
