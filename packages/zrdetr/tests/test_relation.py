"""The anatomical relation prior and bias (paper Sec. 3, relation constraints)."""

import numpy as np
import pytest
import torch

from paperkit.testing import assert_close
from zrdetr.relation import AnatomicalRelationPrior, RelationBias, relative_geometry


def _pairs_from_offsets(n, mean, std, seed):
    """Boxes of classes 0 and 1 whose relative geometry r_01 is N(mean, diag(std^2)): class 0 at
    a random place and size, class 1 placed by inverting r_01 (paper Sec. 3 definition)."""
    rng = np.random.default_rng(seed)
    r = mean + std * rng.normal(size=(n, 4))
    c0 = rng.uniform(0.3, 0.7, (n, 2))
    wh0 = rng.uniform(0.05, 0.2, (n, 2))
    s0 = np.sqrt(wh0.prod(1, keepdims=True))
    c1 = c0 + r[:, :2] * s0
    wh1 = wh0 * np.exp(r[:, 2:])
    boxes = [
        np.stack([np.r_[a, b], np.r_[c, d]]) for a, b, c, d in zip(c0, wh0, c1, wh1, strict=True)
    ]
    return boxes, [np.array([0, 1])] * n


def test_fit_recovers_the_mean_to_0_02():
    mean = np.array([1.5, -0.8, 0.3, -0.2])
    std = np.array([0.25, 0.25, 0.2, 0.2])  # standard error 0.25 / sqrt(5000) = 0.0035: 0.02 > 5 SE
    boxes, labels = _pairs_from_offsets(5000, mean, std, seed=0)
    prior = AnatomicalRelationPrior(3).fit(boxes, labels)
    assert np.abs(prior.mean[0, 1].numpy() - mean).max() < 0.02
    assert_close(np.sqrt(np.diag(prior.cov[0, 1].numpy()) - 1e-3), std, rtol=0.05, atol=0)
    assert prior.valid[0, 1] and prior.valid[1, 0] and not prior.valid[0, 2]


def _fitted(seed=0):
    rng = np.random.default_rng(seed)
    K = 4
    base = np.array(
        [
            [0.3, 0.3, 0.1, 0.12],
            [0.6, 0.35, 0.15, 0.1],
            [0.45, 0.6, 0.2, 0.2],
            [0.7, 0.7, 0.08, 0.1],
        ]
    )
    boxes = [base * np.exp(0.05 * rng.normal(size=(K, 4))) for _ in range(200)]
    return AnatomicalRelationPrior(K).fit(boxes, [np.arange(K)] * 200), base


def test_nll_invariant_to_translation_and_scaling_about_any_point():
    prior, base = _fitted()
    g = torch.Generator().manual_seed(0)
    boxes = torch.as_tensor(base)[None] * torch.exp(
        0.1 * torch.randn(3, 4, 4, generator=g, dtype=torch.float64)
    )
    present = torch.tensor([[True] * 4, [True, False, True, True], [True, True, False, False]])
    ref = prior.nll(boxes, present)
    moved = boxes.clone()
    moved[..., :2] += torch.tensor([0.37, -0.21], dtype=torch.float64)
    assert_close(prior.nll(moved, present), ref, rtol=1e-9, atol=0)
    for point, a in (((0.1, 0.9), 2.7), ((5.0, -3.0), 0.31)):
        p = torch.tensor(point, dtype=torch.float64)
        scaled = boxes.clone()
        scaled[..., :2] = p + a * (boxes[..., :2] - p)
        scaled[..., 2:] = a * boxes[..., 2:]
        assert_close(prior.nll(scaled, present), ref, rtol=1e-9, atol=0)
    # and it does react to a structure moved alone
    broken = boxes.clone()
    broken[0, 1, :2] += 0.3
    assert prior.nll(broken, present)[0] > ref[0] + 1


def test_nll_zero_without_pairs_and_save_load(tmp_path):
    prior, base = _fitted()
    boxes = torch.as_tensor(base)[None]
    assert prior.nll(boxes, torch.tensor([[True, False, False, False]])).item() == 0.0
    path = prior.save(tmp_path / "prior.pt")
    again = AnatomicalRelationPrior.load(path)
    pres = torch.ones(1, 4, dtype=torch.bool)
    assert torch.equal(again.nll(boxes, pres), prior.nll(boxes, pres))


def test_relative_geometry_definition():
    b = torch.tensor([[0.2, 0.3, 0.1, 0.4], [0.5, 0.1, 0.3, 0.2]], dtype=torch.float64)
    r = relative_geometry(b)
    s0 = (0.1 * 0.4) ** 0.5
    expected = torch.tensor([0.3 / s0, -0.2 / s0, np.log(3.0), np.log(0.5)], dtype=torch.float64)
    assert_close(r[0, 1], expected, rtol=1e-12, atol=1e-12)
    assert_close(r[0, 0], torch.zeros(4, dtype=torch.float64), rtol=0, atol=0)


def test_fit_refuses_nonpositive_width_and_out_of_range_class():
    prior = AnatomicalRelationPrior(3)
    good = np.array([[0.5, 0.5, 0.1, 0.1], [0.6, 0.6, 0.1, 0.1]])
    with pytest.raises(ValueError, match="'boxes'"):
        prior.fit([good * np.array([1, 1, 0, 1])], [np.array([0, 1])])
    with pytest.raises(ValueError, match="'labels'"):
        prior.fit([good], [np.array([0, 3])])


def test_relation_bias_is_zero_init_and_padded():
    rb = RelationBias(3)
    mask = rb(5)
    assert mask.shape == (5, 5) and torch.equal(mask, torch.zeros(5, 5))
    with torch.no_grad():
        rb.bias.fill_(1.0)
    mask = rb(5)
    assert mask[:3, :3].eq(1).all() and mask[3:].eq(0).all() and mask[:, 3:].eq(0).all()
