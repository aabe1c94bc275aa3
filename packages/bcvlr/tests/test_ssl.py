"""Correctness checks 2 and 3: the contrastive loss of stage 1a and the random shift (Sec. 3.1)."""

import torch

from bcvlr import contrastive_loss, random_shift
from paperkit.testing import assert_close


def test_contrastive_loss_equals_a_hand_computation():
    g = torch.Generator().manual_seed(0)
    z, zt = torch.randn(4, 3, generator=g), torch.randn(4, 3, generator=g)
    W = torch.randn(3, 3, generator=g)
    pred = torch.nn.Linear(3, 3)
    got = contrastive_loss(z, zt, pred, lambda v: v @ W.T)
    with torch.no_grad():
        q, k = pred(z), zt @ W.T
        loss = 0.0
        for b in range(4):
            s = [float(q[b] @ k[j]) for j in range(4)]
            m = max(s)
            lse = m + torch.log(torch.tensor([sum(torch.exp(torch.tensor(x - m)) for x in s)]))
            loss += -(s[b] - float(lse))
    assert_close(got, torch.tensor(loss / 4), rtol=1e-5, atol=1e-6)


def test_contrastive_loss_vanishes_for_identical_large_orthogonal_codes():
    z = 30.0 * torch.eye(8)
    assert float(contrastive_loss(z, z, lambda v: v, lambda v: v)) < 1e-6
    # and a wrong pairing is heavily penalised
    assert float(contrastive_loss(z, z.roll(1, 0), lambda v: v, lambda v: v)) > 100


def test_random_shift_keeps_shape_moves_at_most_pad_and_is_seeded():
    o = torch.zeros(6, 3, 12, 12)
    o[:, :, 5, 7] = 1.0  # one bright pixel
    a = random_shift(o, pad=2, generator=torch.Generator().manual_seed(3))
    b = random_shift(o, pad=2, generator=torch.Generator().manual_seed(3))
    assert a.shape == o.shape and torch.equal(a, b)
    moved = set()
    for img in a[:, 0]:
        r, c = (img == 1).nonzero()[0].tolist()
        assert abs(r - 5) <= 2 and abs(c - 7) <= 2
        moved.add((r, c))
    assert len(moved) > 1  # the shift is random across the batch
    assert torch.equal(random_shift(o, pad=0), o)
