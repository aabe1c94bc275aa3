"""The Persistent Event Memory Forest (paper, Sec. 3.3): penalty, argmin merge, node updates and
the local similarity update."""

import math

import pytest
import torch

from streamforest import PersistentEventMemoryForest, event_similarity

N_LONG = 2


def _forest(n_events=6, quota=math.inf, frames=(2, 1, 3, 2, 2, 1), seed=0, **weights):
    g = torch.Generator().manual_seed(seed)
    forest = PersistentEventMemoryForest(tokens_per_frame=N_LONG, quota=quota, **weights)
    t = 0
    for i in range(n_events):
        T = frames[i % len(frames)]
        forest.add_event(torch.randn(T, 4, 3, generator=g), t, t + T - 1)
        t += T
    return forest, t


def test_penalty_hand_computed():
    """P_i = w_s (1 - sim_i) + w_t tc_i / t_now + w_m mc_i / max mc + 1e-6, with
    sims (0.9, 0.5), centres (2, 10, 20), counts (1, 3, 2), t_now = 40:
    P_0 = 0.4 * 0.1 + 0.2 * 6/40 + 0.4 * 2/2.5 + 1e-6 = 0.390001,
    P_1 = 0.4 * 0.5 + 0.2 * 15/40 + 0.4 * 2.5/2.5 + 1e-6 = 0.675001."""
    forest, _ = _forest(n_events=3)
    for node, c, m in zip(forest.roots, (2.0, 10.0, 20.0), (1, 3, 2), strict=True):
        node.t_center, node.merge_count = c, m
    forest._sims = [0.9, 0.5]
    p = forest.penalties(40)
    assert p.dtype == torch.float64
    torch.testing.assert_close(p, torch.tensor([0.390001, 0.675001], dtype=torch.float64))


def test_leaf_fields():
    forest, _ = _forest(n_events=2)
    first = forest.roots[0]
    assert first.t_center == 0.5 and first.merge_count == 1 and first.tokens.shape == (2, 2, 3)
    assert forest.num_tokens == (2 + 1) * N_LONG
    assert forest.similarities == [
        pytest.approx(event_similarity(forest.roots[0].tokens, forest.roots[1].tokens, N_LONG))
    ]


@pytest.mark.parametrize("weights", [{}, {"w_sim": 1.0, "w_time": 0.0, "w_merge": 0.0}])
def test_merge_is_argmin_and_updates_the_node(weights):
    forest, t_now = _forest(**weights)
    roots, p = forest.roots, forest.penalties(t_now)
    i = int(torch.argmin(p))
    if weights:  # w_s = 1: the most similar adjacent pair
        assert i == max(range(len(p)), key=lambda j: forest.similarities[j])
    a, b = roots[i], roots[i + 1]
    fa, fb, ca, cb = a.frames, b.frames, a.t_center, b.t_center
    forest.quota = forest.num_tokens - 1  # exactly one merge
    (parent,) = forest.consolidate(t_now)
    assert parent.children == (a, b) and forest.roots[i] is parent
    assert parent.merge_count == a.merge_count + b.merge_count == 2
    assert parent.t_center == pytest.approx((ca * fa + cb * fb) / (fa + fb))
    assert parent.frames == math.ceil((fa + fb) / 2) == parent.tokens.shape[0]
    assert (parent.t_start, parent.t_end) == (a.t_start, b.t_end)
    assert a.tokens is None and b.tokens is None and parent.leaves() == [a, b]


def test_consolidation_reaches_the_quota():
    forest, t_now = _forest(n_events=12, quota=6)
    parents = forest.consolidate(t_now)
    assert forest.num_tokens <= 6 and len(parents) == forest.merges
    assert forest.num_tokens == sum(r.num_tokens for r in forest.roots)
    assert sum(len(r.leaves()) for r in forest.roots) == 12  # the forest keeps every leaf


def test_one_event_is_never_merged_below_quota():
    forest, t_now = _forest(n_events=1, frames=(5,), quota=N_LONG)
    assert forest.consolidate(t_now) == [] and forest.num_tokens == 5 * N_LONG


class _CheckedForest(PersistentEventMemoryForest):
    """After every merge, the locally updated similarities equal a full recomputation."""

    checks = 0

    def _merge(self, i):
        parent = super()._merge(i)
        roots = self.roots
        full = [
            event_similarity(roots[j].tokens, roots[j + 1].tokens, self.tokens_per_frame)
            for j in range(len(roots) - 1)
        ]
        assert self.similarities == full
        _CheckedForest.checks += 1
        return parent


def test_local_similarity_update_equals_full_recompute():
    g = torch.Generator().manual_seed(5)
    forest = _CheckedForest(tokens_per_frame=N_LONG, quota=8)
    t = 0
    for _ in range(30):
        T = int(torch.randint(1, 4, (1,), generator=g))
        forest.add_event(torch.randn(T, 4, 3, generator=g), t, t + T - 1)
        t += T
        forest.consolidate(t)
    assert _CheckedForest.checks >= 20


def test_spans_follow_the_roots():
    forest, t_now = _forest(n_events=8, quota=10)
    forest.consolidate(t_now)
    spans, tokens = forest.token_spans(), forest.tokens()
    assert spans.shape == (tokens.shape[0], 2)
    assert bool((spans[1:, 0] >= spans[:-1, 0]).all())
    starts = [r.t_start for r in forest.roots]
    assert starts[0] == 0 and all(
        b.t_start == a.t_end + 1 for a, b in zip(forest.roots, forest.roots[1:], strict=False)
    )
