"""Hungarian matching and the set loss (paper Sec. 3)."""

import itertools

import numpy as np
import torch

from zrdetr.criterion import ZRDETRCriterion, hungarian_match
from zrdetr.model import ZRDETR


def test_hungarian_equals_brute_force_over_permutations():
    for seed in range(3):
        cost = torch.as_tensor(np.random.default_rng(seed).normal(size=(5, 5)))
        rows, cols = hungarian_match(cost)
        best = min(
            sum(cost[p[j], j].item() for j in range(5)) for p in itertools.permutations(range(5))
        )
        assert cost[rows, cols].sum().item() == best
        assert sorted(rows.tolist()) == list(range(5))


def test_hungarian_rectangular_picks_the_cheapest_rows():
    cost = torch.tensor([[5.0, 5.0], [0.0, 9.0], [9.0, 0.0]])
    rows, cols = hungarian_match(cost)
    assert rows.tolist() == [1, 2] and cols.tolist() == [0, 1]


def _targets(B=3, K=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    boxes = torch.cat(
        [
            0.3 + 0.4 * torch.rand(B, K, 2, generator=g),
            0.1 + 0.1 * torch.rand(B, K, 2, generator=g),
        ],
        -1,
    )
    present = torch.rand(B, K, generator=g) < 0.8
    present[:, 0] = True
    return {
        "boxes": boxes,
        "present": present,
        "truncated": torch.zeros(B, K, dtype=torch.bool),
        "zoom": torch.ones(B),
    }


def test_class_queries_only_take_their_own_class():
    torch.manual_seed(0)
    K = 4
    model = ZRDETR(K, d_model=16, use_zoom=False, head="mlp").eval()
    t = _targets(K=K)
    out = model(torch.rand(3, 1, 32, 32))
    for (rows, classes), pres in zip(ZRDETRCriterion(K).match(out, t), t["present"], strict=True):
        assert sorted(classes.tolist()) == torch.nonzero(pres).squeeze(1).tolist()
        for r, c in zip(rows.tolist(), classes.tolist(), strict=True):
            assert r >= K or r == c


def test_loss_is_zero_part_for_perfect_boxes_and_decreases_when_trained():
    torch.manual_seed(0)
    K = 3
    model = ZRDETR(K, d_model=16, head="gp", use_relation=False, enc_layers=1, dec_layers=2)
    t = _targets(B=4, K=K)
    images = torch.rand(4, 1, 16, 16)
    crit = ZRDETRCriterion(K, n_train=4)
    opt = torch.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(15):
        loss, parts = crit(model(images, t["zoom"]), t)
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert set(parts) >= {"ce", "l1", "giou", "nll", "kl", "zoom", "total"}
    assert losses[-1] < 0.7 * losses[0]
    # the box terms vanish when the matched boxes equal the targets
    out = {"logits": torch.zeros(1, K + 1, K + 1), "boxes": torch.rand(1, K + 1, 4) * 0.1 + 0.1}
    tt = {"boxes": out["boxes"][:, :K].clone(), "present": torch.ones(1, K, dtype=torch.bool)}
    _, parts = ZRDETRCriterion(K, deep_supervision=False)(out, tt)
    assert parts["l1"] < 1e-6 and parts["giou"] < 1e-6
