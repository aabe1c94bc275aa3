import math

import pytest
import torch

from paperkit.testing import gradcheck64
from syncl.contrastive import instance_contrastive_loss


@pytest.mark.parametrize("kernel", ["cosine", "rbf"])
def test_identical_embeddings_give_log_ratio(kernel):
    e = torch.randn(1, 8)
    track = e.repeat(3, 1)
    obj = e.repeat(5, 1)
    tid = torch.tensor([0, 1, 2])
    oid = torch.tensor([0, 0, 1, 2, 2])
    loss = instance_contrastive_loss(track, tid, obj, oid, tau=0.1, kernel=kernel)
    # track i: |P| positives, |N| = (5 - |P|) other objects + 2 other tracks (closed form)
    expected = [math.log(7) - math.log(p) for p in (2, 1, 2)]
    assert float(loss) == pytest.approx(sum(expected) / 3, rel=1e-6)


def test_loss_vanishes_for_perfect_separation():
    e = torch.tensor([[1.0, 0.0]])
    loss = instance_contrastive_loss(
        e,
        torch.tensor([0]),
        torch.tensor([[1.0, 0.0], [-1.0, 0.0]]),
        torch.tensor([0, 1]),
        tau=0.01,
    )
    assert float(loss) < 1e-60 or float(loss) == pytest.approx(0.0, abs=1e-12)


def test_tracks_without_positives_are_skipped():
    track = torch.randn(2, 4)
    obj = torch.randn(3, 4)
    only_first = instance_contrastive_loss(
        track, torch.tensor([0, 9]), obj, torch.tensor([0, 1, 1])
    )
    alone = instance_contrastive_loss(
        track[:1], torch.tensor([0]), torch.cat([obj, track[1:]]), torch.tensor([0, 1, 1, 9])
    )
    torch.testing.assert_close(only_first, alone)  # track 1 only acts as a negative
    none = instance_contrastive_loss(track, torch.tensor([5, 6]), obj, torch.tensor([0, 1, 1]))
    assert float(none) == 0.0


@pytest.mark.parametrize("kernel", ["cosine", "rbf"])
def test_gradcheck(kernel):
    g = torch.Generator().manual_seed(0)
    track = torch.randn(3, 4, generator=g)
    obj = torch.randn(5, 4, generator=g)
    tid, oid = torch.tensor([0, 1, 2]), torch.tensor([0, 1, 1, 2, 3])
    assert gradcheck64(
        lambda a, b: instance_contrastive_loss(a, tid, b, oid, tau=0.5, kernel=kernel), track, obj
    )
