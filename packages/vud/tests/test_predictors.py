import itertools

import torch

from vud import TransformerICL, probe_bound
from vud.info import entropy_


def test_non_positional_transformer_is_permutation_invariant():
    torch.manual_seed(0)
    model = TransformerICL(1, "classification")
    cx, cy, qx = torch.randn(3, 12, 1), torch.randint(0, 2, (3, 12)).float(), torch.randn(3, 4, 1)
    base = model.predict(cx, cy, qx)
    for seed in range(5):
        perm = torch.randperm(12, generator=torch.Generator().manual_seed(seed))
        assert (model.predict(cx[:, perm], cy[:, perm], qx) - base).abs().max() < 1e-5


def test_queries_do_not_see_each_other_and_empty_context_is_defined():
    torch.manual_seed(1)
    model = TransformerICL(1, "regression")
    cx, cy = torch.randn(1, 5, 1), torch.randn(1, 5)
    q = torch.randn(1, 3, 1)
    mean, var = model.predict(cx, cy, q)
    alone, _ = model.predict(cx, cy, q[:, 1:2])
    assert abs(float(mean[0, 1] - alone[0, 0])) < 1e-5
    m0, v0 = model.predict(torch.zeros(1, 0, 1), torch.zeros(1, 0), q)
    assert torch.isfinite(m0).all() and (v0 > 0).all()


def test_positional_all_permutations_equals_manual_average(logistic_context):
    torch.manual_seed(2)
    model = TransformerICL(1, "classification", positional=True).double()
    cx, cy, xs = logistic_context(3, seed=5)
    z = torch.tensor([[[0.3]]], dtype=torch.float64)
    bound = probe_bound(model, cx, cy, xs, z, "all")
    # reference: average over all 3! orders of D, and all 4! orders of D ∪ (z, u)
    p0 = torch.stack(
        [
            model.predict(cx[list(p)][None], cy[list(p)][None], xs[None, None])[0, 0]
            for p in itertools.permutations(range(3))
        ]
    ).mean(0)
    assert (bound.predictive - p0).abs().max() < 1e-12
    pu = torch.stack(
        [
            model.predict(cx[list(p)][None], cy[list(p)][None], z[:, 0][None])[0, 0]
            for p in itertools.permutations(range(3))
        ]
    ).mean(0)
    va = 0.0
    for u in range(2):
        ax, ay = (
            torch.cat([cx, z[0]]),
            torch.cat([cy, torch.tensor([float(u)], dtype=torch.float64)]),
        )
        q = torch.stack(
            [
                model.predict(ax[list(p)][None], ay[list(p)][None], xs[None, None])[0, 0]
                for p in itertools.permutations(range(4))
            ]
        ).mean(0)
        va += pu[u] * entropy_(q)
    assert abs(float(bound.va[0]) - float(va)) < 1e-12
    # a positional model is order-sensitive: one random order differs from the average
    assert (model.predict(cx[None], cy[None], xs[None, None])[0, 0] - p0).abs().max() > 1e-6


class Spy:
    """A predictor that records the contexts it sees and answers from the last context label."""

    task, n_classes = "classification", 2

    def __init__(self):
        self.calls = []

    def predict(self, ctx_x, ctx_y, query_x):
        self.calls.append((ctx_x.clone(), ctx_y.clone()))
        p1 = torch.full(query_x.shape[:2], 0.5, dtype=ctx_x.dtype)
        hits = ctx_x[:, :, None, 0] == query_x[:, None, :, 0]  # a context point at the query
        lab = (ctx_y[:, :, None] * hits).sum(1) / hits.sum(1).clamp_min(1)
        p1 = torch.where(hits.any(1), 0.01 + 0.98 * lab, p1)
        return torch.stack([1 - p1, p1], dim=-1)


def test_probe_pair_enters_the_context(logistic_context):
    spy = Spy()
    cx, cy, xs = logistic_context(4, seed=0)
    z = xs[None, None]  # probe at the query itself: a confident model copies u
    bound = probe_bound(spy, cx, cy, xs, z, 3)
    final_x, final_y = spy.calls[-1]
    assert final_x.shape == (2 * 3, 5, 1)  # C labels x P permutations, n + 1 points
    for ctx_x in final_x:
        at_z = ctx_x[:, 0] == xs[0]
        assert at_z.sum() == 1  # the probe is inserted exactly once, somewhere in the order
    assert set(final_y[final_x[..., 0] == xs[0]].tolist()) == {0.0, 1.0}
    # with u copied confidently, V_a collapses from H[0.5] to H[0.01]
    assert float(bound.va[0]) < 0.1 < bound.total
