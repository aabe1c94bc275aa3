import math

import numpy as np
import torch

from dictpfl import PrMEMask
from paperkit.testing import assert_param_error


def _history(P, rounds, seed=3):
    rng = np.random.default_rng(seed)
    return [torch.from_numpy(rng.standard_normal(P)) for _ in range(rounds)]


def test_masks_agree_across_clients_and_follow_history():
    # same seed and history -> the same mask, without any communication
    P, s, beta = 1000, 0.7, 0.2
    a, b = PrMEMask(P, s, beta, seed=5), PrMEMask(P, s, beta, seed=5)
    assert a.mask(0).all()  # round 0 keeps everything
    for t, delta in enumerate(_history(P, 6), start=1):
        a.update(delta)
        b.update(delta)
        assert torch.equal(a.mask(t), b.mask(t))
    # with β = 0 the mask is exactly the top ⌈(1-s)P⌉ of the importance
    c = PrMEMask(P, s, 0.0, decay=0.0)
    delta = _history(P, 1)[0]
    c.update(delta)
    top = torch.topk(delta.abs(), math.ceil(0.3 * P)).indices
    m = c.mask(1)
    assert int(m.sum()) == 300 and m[top].all()


def test_reactivation_count_is_binomial():
    # kept = ⌈(1-s)P⌉ + reactivated, reactivated ~ Binomial(⌊sP⌋, β): 3σ over 20 rounds
    P, s, beta = 2000, 0.7, 0.2
    mask = PrMEMask(P, s, beta, seed=0)
    mask.update(_history(P, 1)[0])
    n_pruned = P - math.ceil((1 - s) * P)
    extra = [int(mask.mask(t).sum()) - math.ceil((1 - s) * P) for t in range(1, 21)]
    mean, sd = n_pruned * beta, math.sqrt(n_pruned * beta * (1 - beta))
    assert all(abs(e - mean) < 3 * sd for e in extra)
    assert abs(np.mean(extra) - mean) < 3 * sd / math.sqrt(len(extra))
    assert len({tuple(mask.mask(t).nonzero().flatten().tolist()) for t in (1, 2)}) == 2


def test_zero_pruning_keeps_all_and_high_pruning_keeps_one():
    # the extremes of the prune ratio
    m = PrMEMask(50, prune_ratio=0.0, reactivation=0.9)
    m.update(torch.randn(50))
    assert m.mask(3).all()
    m = PrMEMask(50, prune_ratio=0.999, reactivation=0.0)
    m.update(torch.randn(50))
    assert int(m.mask(3).sum()) == 1


def test_bad_arguments_raise():
    assert_param_error(PrMEMask, 10, prune_ratio=1.0, param="prune_ratio")
    assert_param_error(PrMEMask, 10, prune_ratio=-0.1, param="prune_ratio")
    assert_param_error(PrMEMask, 10, reactivation=1.5, param="reactivation")
    assert_param_error(PrMEMask, 0, param="n_params")
    assert_param_error(PrMEMask(10).update, torch.zeros(9), param="global_delta")
    assert_param_error(PrMEMask(10).mask, -1, param="round")
