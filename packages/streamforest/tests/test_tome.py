"""ToMe bipartite soft matching and size-weighted merging (Bolya et al. 2023, as used in the
paper's Sec. 3.2-3.3)."""

import math

import pytest
import torch

from streamforest import (
    bipartite_soft_matching,
    cross_event_similarity,
    event_similarity,
    merge_to,
    merge_wavg,
)


@pytest.mark.parametrize(("n", "target"), [(49, 16), (49, 8), (128, 64), (7, 1), (10, 10)])
def test_merge_to_exact_count_and_preserved_mass(n, target):
    x = torch.randn(3, n, 5, dtype=torch.float64, generator=torch.Generator().manual_seed(n))
    size = torch.rand(3, n, 1, dtype=torch.float64) + 0.5
    y, s = merge_to(x, target, size)
    assert y.shape == (3, target, 5) and s.shape == (3, target, 1)
    # size-weighted mass and total size are invariants of every merge (closed form, module doc)
    torch.testing.assert_close((s * y).sum(1), (size * x).sum(1), rtol=0, atol=1e-12)
    torch.testing.assert_close(s.sum(1), size.sum(1), rtol=0, atol=1e-12)


def test_merge_to_identical_tokens_returns_the_token():
    token = torch.randn(1, 1, 6, dtype=torch.float64)
    y, s = merge_to(token.expand(1, 33, 6).clone(), 1)
    torch.testing.assert_close(y, token, rtol=0, atol=1e-14)
    assert s.item() == 33


@pytest.mark.parametrize("r", [0, 1, 5, 12, 100])
def test_bipartite_never_merges_more_than_half(r):
    x = torch.randn(2, 25, 4)
    out = bipartite_soft_matching(x, r)(x)
    assert out.shape[1] == 25 - min(r, 25 // 2)


def test_bipartite_r0_is_identity():
    x = torch.randn(2, 9, 4)
    assert torch.equal(bipartite_soft_matching(x, 0)(x), x)


def test_merge_follows_best_match():
    # tokens 0 (even) and 1 (odd) are parallel, token 2 (even) matches token 3 (odd) less well
    x = torch.tensor([[[1.0, 0.0], [2.0, 0.0], [0.0, 1.0], [1.0, 1.0]]])
    y, s = merge_wavg(bipartite_soft_matching(x, 1), x)
    # unmerged A token 2 first, then B tokens: (0 + 1) averaged, token 3 kept
    torch.testing.assert_close(y, torch.tensor([[[0.0, 1.0], [1.5, 0.0], [1.0, 1.0]]]))
    assert s.flatten().tolist() == [1.0, 2.0, 1.0]


def test_event_similarity_reference():
    """Brute force: the mean of the r largest max-cosines of even tokens against odd tokens."""
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(3, 4, 5, generator=g), torch.randn(2, 4, 5, generator=g)
    tokens = torch.cat([a, b]).reshape(-1, 5)
    r = 20 - math.ceil(5 / 2) * 4  # total - ceil((Ta + Tb)/2) n_long
    best = []
    for i in range(0, 20, 2):
        best.append(
            max(
                float(torch.cosine_similarity(tokens[i], tokens[j], dim=0)) for j in range(1, 20, 2)
            )
        )
    expected = sum(sorted(best, reverse=True)[:r]) / r
    assert event_similarity(a, b, 4) == pytest.approx(expected, abs=1e-6)


def test_event_similarity_in_range():
    a, b = torch.randn(2, 3, 4), torch.randn(1, 3, 4)
    assert -1 <= event_similarity(a, b, 3) <= 1
    assert -1 <= cross_event_similarity(a, b, 3) <= 1


def test_cross_similarity_sees_the_neighbour_only():
    a = torch.randn(2, 4, 5)
    assert cross_event_similarity(a, a, 4) == pytest.approx(1.0)
    assert cross_event_similarity(a, -a, 4) < 1.0


def test_paper_similarity_is_blind_to_the_neighbour_when_events_are_redundant():
    """Each event repeats its tokens in pairs: every even token finds its twin among the odd
    tokens of the concatenation, so the paper's score is 1 even for an orthogonal neighbour."""
    e = torch.eye(4)
    a = torch.stack([e[0], e[0], e[1], e[1]])[None]  # (1, 4, 4)
    b = torch.stack([e[2], e[2], e[3], e[3]])[None]  # orthogonal to a
    assert event_similarity(a, b, 4) == pytest.approx(1.0)
    assert cross_event_similarity(a, b, 4) == pytest.approx(0.0)
