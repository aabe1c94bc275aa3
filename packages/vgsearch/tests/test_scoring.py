"""Aggregation of per-step scores and the votes, on hand examples (check 7)."""

import math

import pytest

from vgsearch import aggregate_scores, majority_vote, weighted_majority


def test_aggregations_by_hand():
    s = [0.9, 0.4, 0.7]
    assert aggregate_scores(s) == 0.7  # last is the default
    assert aggregate_scores(s, "min") == 0.4
    assert aggregate_scores(s, "prod") == pytest.approx(0.9 * 0.4 * 0.7, rel=1e-15)
    assert aggregate_scores([0.3], "prod") == 0.3


def test_weighted_majority_by_hand():
    # totals: 5 -> 0.2 + 0.3 = 0.5, 7 -> 0.45, 9 -> 0.5: a tie between 5 and 9 goes to 5 (first)
    assert weighted_majority([5, 7, 5, 9], [0.2, 0.45, 0.3, 0.5]) == 5
    assert weighted_majority([9, 5, 7, 5], [0.5, 0.2, 0.45, 0.3]) == 9
    # the weights can overturn the plain majority
    assert weighted_majority([1, 1, 2], [0.1, 0.1, 0.9]) == 2
    assert majority_vote([1, 1, 2]) == 1


def test_majority_ties_to_first():
    assert majority_vote([4, 3, 3, 4]) == 4
    assert majority_vote(["b", "a"]) == "b"


def test_nan_refused():
    with pytest.raises(ValueError, match="'scores'"):
        aggregate_scores([0.5, math.nan])
    with pytest.raises(ValueError, match="'answers'"):
        weighted_majority([math.nan, 1.0], [0.5, 0.5])
    with pytest.raises(ValueError, match="'scores'"):
        weighted_majority([1, 2], [0.5])
