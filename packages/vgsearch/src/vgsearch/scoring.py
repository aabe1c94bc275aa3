"""Reducing per-step PRM scores to one score per solution, and choosing an answer.

``aggregate_scores`` (the released code's ``agg_strategy``): ``last`` (default)
``s_T``, ``min`` ``min_j s_j``, ``prod`` ``prod_j s_j``. Answers: the best-scored completion,
the majority vote, and the PRM-weighted majority vote ``argmax_a sum_{i: a_i = a} score_i``;
ties go to the answer that occurs first.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence

import numpy as np

from paperkit import check_array, check_choice, param_error

__all__ = ["AGGREGATIONS", "aggregate_scores", "majority_vote", "weighted_majority"]

AGGREGATIONS = ("last", "min", "prod")


def aggregate_scores(scores: Sequence[float], agg: str = "last") -> float:
    """One score from the per-step scores ``s_1..s_T``: ``last`` = s_T, ``min`` = min_j s_j,
    ``prod`` = prod_j s_j. NaN policy: refused (ValueError), as is an empty list.

    >>> aggregate_scores([0.9, 0.5, 0.8]), aggregate_scores([0.9, 0.5, 0.8], "min")
    (0.8, 0.5)
    >>> round(aggregate_scores([0.9, 0.5, 0.8], "prod"), 6)
    0.36
    """
    check_choice("agg", "aggregate_scores", agg, AGGREGATIONS)
    s = check_array("scores", "aggregate_scores", scores, ndim=1)
    if agg == "last":
        return float(s[-1])
    if agg == "min":
        return float(s.min())
    return float(np.prod(s))


def _check_answers(owner: str, answers: Sequence[Hashable]) -> list[Hashable]:
    if isinstance(answers, (str, bytes)) or not isinstance(answers, Sequence):
        raise param_error(
            "answers", owner, "a sequence of answers", type(answers).__name__, cls=TypeError
        )
    if len(answers) == 0:
        raise param_error("answers", owner, "non-empty", "an empty sequence")
    for a in answers:
        if isinstance(a, float) and math.isnan(a):
            raise param_error("answers", owner, "answers without NaN", a)
        if not isinstance(a, Hashable):
            raise param_error("answers", owner, "hashable answers", type(a).__name__, cls=TypeError)
    return list(answers)


def majority_vote(answers: Sequence[Hashable]) -> Hashable:
    """The most frequent answer, ties to the first occurring. NaN answers are refused.

    >>> majority_vote([3, 5, 5, 3, 7])
    3
    """
    answers = _check_answers("majority_vote", answers)
    counts: dict[Hashable, int] = {}
    for a in answers:
        counts[a] = counts.get(a, 0) + 1
    return max(counts, key=counts.__getitem__)  # max keeps the first of equal counts


def weighted_majority(answers: Sequence[Hashable], scores: Sequence[float]) -> Hashable:
    """``argmax_a sum_{i: answers_i = a} scores_i``, ties to the first occurring answer.
    NaN policy: NaN scores and NaN answers are refused.

    >>> weighted_majority([1, 2, 2, 1], [0.9, 0.3, 0.3, 0.1])
    1
    """
    answers = _check_answers("weighted_majority", answers)
    s = check_array("scores", "weighted_majority", scores, shape=(len(answers),))
    totals: dict[Hashable, float] = {}
    for a, w in zip(answers, s, strict=True):
        totals[a] = totals.get(a, 0.0) + float(w)
    return max(totals, key=totals.__getitem__)
