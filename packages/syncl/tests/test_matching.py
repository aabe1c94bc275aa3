import itertools

import numpy as np
import pytest
import torch

from syncl.matching import (
    DynamicQueryFilter,
    hungarian_one_to_one,
    hybrid_match,
    matching_cost,
    topk_one_to_many,
)


def _brute_force(cost):
    """Minimum total cost over all injective maps of the smaller side (exhaustive)."""
    Q, G = cost.shape
    if Q >= G:
        return min(
            sum(cost[p[g], g] for g in range(G)) for p in itertools.permutations(range(Q), G)
        )
    return min(sum(cost[q, p[q]] for q in range(Q)) for p in itertools.permutations(range(G), Q))


@pytest.mark.parametrize("shape", [(6, 6), (4, 7), (7, 4)])
def test_hungarian_equals_brute_force(shape):
    rng = np.random.default_rng(sum(shape))
    for _ in range(5):
        cost = rng.random(shape)
        q, g = hungarian_one_to_one(cost)
        assert len(set(q.tolist())) == len(q) == min(shape) and len(set(g.tolist())) == len(g)
        np.testing.assert_allclose(cost[q, g].sum(), _brute_force(cost), rtol=1e-12)


def test_topk_one_to_many_properties():
    rng = np.random.default_rng(0)
    for k in (1, 2, 4):
        cost = rng.random((16, 5))
        q, g = topk_one_to_many(cost, k)
        assert len(set(q.tolist())) == len(q)  # a query serves one target
        load = np.bincount(g, minlength=5)
        assert load.max() <= k and len(q) == min(16, 5 * k)
        owner = dict(zip(q.tolist(), g.tolist(), strict=True))
        for target in range(5):
            mine = q[g == target]
            worst = cost[mine, target].max()
            for other in set(range(16)) - set(mine.tolist()):
                if cost[other, target] < worst:  # cheaper but not taken: claimed more cheaply
                    assert other in owner and cost[other, owner[other]] <= cost[other, target]
    with pytest.raises(ValueError, match="'k'"):
        topk_one_to_many(np.zeros((3, 2)), 0)


def test_topk_conflict_goes_to_lowest_cost():
    cost = np.array([[0.1, 0.2], [0.9, 0.3], [0.95, 0.8]])
    q, g = topk_one_to_many(cost, 2)
    pairs = set(zip(q.tolist(), g.tolist(), strict=True))
    assert (0, 0) in pairs and (1, 1) in pairs and (0, 1) not in pairs


def _groups(n_targets, per):
    return np.repeat(np.arange(n_targets), per)


def test_filter_keeps_exactly_the_low_cluster():
    rng = np.random.default_rng(1)
    # 20 targets x 4 candidates: 2 near 0.1 and 2 near 0.9 each (40 + 40 costs)
    costs = np.stack(
        [
            rng.normal(0.1, 0.01, 20),
            rng.normal(0.1, 0.01, 20),
            rng.normal(0.9, 0.01, 20),
            rng.normal(0.9, 0.01, 20),
        ],
        1,
    ).ravel()
    keep = DynamicQueryFilter().select(costs, _groups(20, 4))
    np.testing.assert_array_equal(keep, costs < 0.5)


def test_filter_keeps_only_the_best_on_unimodal_costs():
    rng = np.random.default_rng(2)
    costs = rng.normal(0.8, 0.01, 80)
    group = _groups(20, 4)
    f = DynamicQueryFilter()
    keep = f.select(costs, group)
    best = np.zeros(80, bool)
    for t in range(20):
        idx = np.flatnonzero(group == t)
        best[idx[np.argmin(costs[idx])]] = True
    np.testing.assert_array_equal(keep, best)
    assert not f.last_open_ and keep.sum() == 20


def test_filter_small_pool_keeps_min_keep_and_is_deterministic():
    costs = np.r_[np.full(5, 0.1), np.full(5, 0.9)] + np.linspace(0, 0.01, 10)
    group = np.r_[np.arange(5), np.arange(5)]
    keep = DynamicQueryFilter().select(costs, group)  # 10 < min_pool=20: the gate stays shut
    np.testing.assert_array_equal(keep, np.r_[np.ones(5, bool), np.zeros(5, bool)])
    rng = np.random.default_rng(3)
    c = np.r_[rng.normal(0.2, 0.05, 30), rng.normal(0.7, 0.05, 30)]
    g = rng.integers(0, 10, 60)
    f = DynamicQueryFilter(min_keep=2)
    first = f.select(c, g)
    np.testing.assert_array_equal(first, f.select(c.copy(), g.copy()))
    for t in np.unique(g):  # min_keep per target always survives
        assert first[g == t].sum() >= min(2, (g == t).sum())


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")  # 10 iterations
def test_filter_em_agrees_with_scikit_learn():
    """Our 10-iteration EM against sklearn's GaussianMixture from the same start."""
    from sklearn.mixture import GaussianMixture

    rng = np.random.default_rng(4)
    c = np.r_[rng.normal(0.3, 0.05, 40), rng.normal(0.8, 0.1, 60)]
    f = DynamicQueryFilter()
    post = f._bimodal_low(c)
    lo, hi = np.quantile(c, [0.1, 0.9])
    gm = GaussianMixture(
        2,
        max_iter=10,
        tol=0.0,
        reg_covar=0.0,
        means_init=[[lo], [hi]],
        weights_init=[0.5, 0.5],
        precisions_init=np.full((2, 1, 1), 1 / c.var()),
    ).fit(c[:, None])
    ref = gm.predict_proba(c[:, None])[:, int(np.argmin(gm.means_[:, 0]))]
    np.testing.assert_allclose(post, ref, atol=1e-6)
    one = GaussianMixture(1, reg_covar=0.0).fit(c[:, None])
    assert gm.bic(c[:, None]) + 10 < one.bic(c[:, None])  # the gate opens in both


def test_matching_cost_formula():
    logits = torch.tensor([[0.0], [2.0]])
    boxes = torch.tensor([[0.0, 0.0], [1.0, 1.0]])
    cost = matching_cost(logits, boxes, torch.tensor([0]), torch.tensor([[1.0, 3.0]]))
    p = torch.sigmoid(logits[:, 0])
    focal = 0.25 * (1 - p) ** 2 * -p.log() - 0.75 * p**2 * -(1 - p).log()
    l1 = torch.tensor([4.0, 2.0])
    torch.testing.assert_close(cost[:, 0], 2.0 * focal + 0.25 * l1, rtol=1e-5, atol=1e-6)


def test_hybrid_match_assignments():
    torch.manual_seed(0)
    B, n_t, n_o = 1, 2, 10
    Q = n_t + n_o
    out = {"logits": torch.randn(B, Q, 1), "boxes": torch.rand(B, Q, 6) * 10}
    targets = [
        {
            "labels": torch.zeros(3, dtype=torch.long),
            "boxes": torch.rand(3, 6) * 10,
            "ids": torch.tensor([7, 3, 5]),
        }
    ]
    track_ids = torch.tensor([[3, 9]])  # slot 0 holds id 3 (target 1); slot 1's id is absent
    m = hybrid_match(out, out, targets, track_ids, k=4, use_filter=False)
    qs, gs = m["S"][0]
    pairs = dict(zip(qs.tolist(), gs.tolist(), strict=True))
    assert pairs[0] == 1 and 1 not in pairs  # fixed identity; absent identity -> background
    newborn = {g for q, g in pairs.items() if q >= n_t}
    assert newborn == {0, 2}  # one-to-one to the targets not held by a track query
    qc, gc = m["C"][0]
    obj = qc >= n_t
    assert set(gc[obj].tolist()) == {0, 1, 2}  # one-to-many to ALL targets, incl. tracked
    assert np.bincount(gc[obj].numpy()).max() <= 4 and len(set(qc.tolist())) == len(qc)
    assert m["n_candidates"] == m["n_kept"] == 10  # 3 targets x 4 > 10 object queries
    filtered = hybrid_match(out, out, targets, track_ids, k=4, use_filter=True)
    assert filtered["n_kept"] <= filtered["n_candidates"] and filtered["n_kept"] >= 3
    base = hybrid_match(out, None, targets, track_ids)
    assert base["C"] == [] and torch.equal(base["S"][0][0], qs)
