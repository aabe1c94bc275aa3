"""Per-view class-conditional conformal p-values, with ties broken at random or conservatively.

For a class :math:`y` with calibration scores :math:`C_y` (:math:`n = |C_y|`, higher score = more
typical of :math:`y`) and a test score :math:`s`,

.. math:: K = \\#\\{c \\in C_y : c < s\\}, \\qquad p = \\frac{K + 1}{n + 1}.

Ties. ``tie_break="random"`` orders tied scores uniformly at random: every calibration score gets a
uniform key :math:`u_c` at calibration, every test score a fresh uniform key :math:`u`, and
:math:`(s, u)` pairs are compared lexicographically. All keys are i.i.d., so all :math:`n + m`
scores of the null are in a uniformly random order within ties, which keeps the exact law of
:mod:`mconformal.nulls` (and :math:`p` uniform on :math:`\\{1/(n+1), \\dots, 1\\}`).
``tie_break="conservative"`` counts every tied calibration score as smaller (:math:`c \\le s`),
which makes each :math:`p` (and every nondecreasing aggregate) stochastically larger: valid, with
larger sets.

NaN policy: NaN scores are refused; :math:`\\pm\\infty` are ordinary extreme scores (a
``log_proba`` score is :math:`-\\infty` where the probability is 0).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from paperkit import check_array, check_choice, check_int, describe, param_error

__all__ = ["TIE_BREAKS", "ClassCalibration", "conformal_counts", "conformal_pvalues"]

#: The tie-breaking rules.
TIE_BREAKS = ("random", "conservative")


@dataclass(frozen=True)
class ClassCalibration:
    """The calibration scores of one class, sorted, with their random tie-breaking keys.

    Attributes:
        scores: the :math:`n` scores sorted by (score, key).
        keys: ``dense_rank(score) + u``, sorted; a tied test score :math:`s` with dense rank
            :math:`g` and key :math:`u` has exactly ``searchsorted(keys, g + u)`` smaller pairs.
        uniques: the distinct calibration scores, sorted.
    """

    scores: np.ndarray
    keys: np.ndarray
    uniques: np.ndarray

    @classmethod
    def from_scores(cls, scores: np.ndarray, rng: np.random.Generator) -> ClassCalibration:
        """Sort one class's calibration scores and draw their tie-breaking keys."""
        scores = np.asarray(scores, dtype=np.float64)
        u = rng.random(scores.shape[0])
        order = np.lexsort((u, scores))
        sorted_scores = scores[order]
        uniques, dense = np.unique(sorted_scores, return_inverse=True)
        return cls(sorted_scores, dense.reshape(-1) + u[order], uniques)

    @property
    def n(self) -> int:
        """The number :math:`n_y` of calibration scores."""
        return int(self.scores.shape[0])

    def counts(
        self, test_scores: np.ndarray, tie_break: str, rng: np.random.Generator
    ) -> np.ndarray:
        """:math:`K = \\#\\{c < s\\}` for every test score (any shape), ties as ``tie_break`` says.

        ``rng`` draws one key per test score when ``tie_break="random"`` (always, so the draws do
        not depend on whether ties occur).
        """
        left = np.searchsorted(self.scores, test_scores, side="left")
        right = np.searchsorted(self.scores, test_scores, side="right")
        if tie_break == "conservative":
            return right
        u = rng.random(np.shape(test_scores))
        tied = right > left
        if not tied.any():
            return left
        rank = np.searchsorted(self.uniques, test_scores, side="left")
        return np.where(tied, np.searchsorted(self.keys, rank + u, side="left"), left)


def as_rng(name: str, owner: str, rng: object) -> np.random.Generator:
    """``rng`` as a Generator: None (fresh entropy), a seed (an integer >= 0) or a Generator."""
    if rng is None or isinstance(rng, np.random.Generator):
        return np.random.default_rng(rng)
    if isinstance(rng, (int, np.integer)) and not isinstance(rng, bool):
        return np.random.default_rng(check_int(name, owner, rng, low=0))
    expected = "None, a seed (an integer >= 0) or a numpy Generator"
    raise param_error(name, owner, expected, describe(rng), cls=TypeError)


def check_scores(name: str, owner: str, scores: object, **shape: object) -> np.ndarray:
    """Real scores as float64, NaN refused, :math:`\\pm\\infty` kept (see the module doc)."""
    array = check_array(name, owner, scores, finite=False, **shape).astype(np.float64)
    if np.isnan(array).any():
        raise param_error(name, owner, "free of NaN", describe(array))
    return array


def _prepare(
    cal_scores_y: object, test_scores: object, tie_break: str, rng: object, owner: str
) -> tuple[np.ndarray, np.ndarray, np.random.Generator]:
    cal = check_scores("cal_scores_y", owner, cal_scores_y, ndim=1)
    test = check_scores("test_scores", owner, test_scores, nonempty=False)
    check_choice("tie_break", owner, tie_break, TIE_BREAKS)
    return cal, test, as_rng("rng", owner, rng)


def conformal_counts(
    cal_scores_y: np.ndarray,
    test_scores: np.ndarray,
    tie_break: str = "random",
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """The conformal counts :math:`K = \\#\\{c \\in C_y : c < s\\}` of ``test_scores`` (any
    shape, e.g. ``(..., m)``) against one class's calibration scores ``cal_scores_y`` (1-D).

    With ``tie_break="random"`` the counts of the views of one instance are jointly distributed as
    the ranks of a uniformly random order of all tied scores (see the module docstring). ``rng``:
    None, a seed or a Generator. NaN scores are refused.

    >>> conformal_counts(np.array([0.1, 0.5, 0.9]), np.array([[0.0, 0.6], [1.0, 0.3]]))
    array([[0, 2],
           [3, 1]])
    """
    cal, test, rng = _prepare(cal_scores_y, test_scores, tie_break, rng, "conformal_counts")
    return ClassCalibration.from_scores(cal, rng).counts(test, tie_break, rng)


def conformal_pvalues(
    cal_scores_y: np.ndarray,
    test_scores: np.ndarray,
    tie_break: str = "random",
    rng: np.random.Generator | int | None = None,
) -> np.ndarray:
    """Per-view conformal p-values :math:`p = (K + 1)/(n + 1)`, same shape as ``test_scores``.

    Under the null (test score exchangeable with the :math:`n` calibration scores, random
    tie-breaking), each :math:`p` is uniform on :math:`\\{1/(n+1), \\dots, 1\\}`. NaN scores are
    refused.

    >>> conformal_pvalues(np.array([0.1, 0.5, 0.9]), np.array([0.0, 0.6, 1.0]))
    array([0.25, 0.75, 1.  ])
    """
    cal, test, rng = _prepare(cal_scores_y, test_scores, tie_break, rng, "conformal_pvalues")
    counts = ClassCalibration.from_scores(cal, rng).counts(test, tie_break, rng)
    return (counts + 1.0) / (cal.shape[0] + 1.0)
