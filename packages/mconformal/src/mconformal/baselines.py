"""Baselines: single-view conformal, naive and Bonferroni votes, and score averaging.

All take per-view class-conditional p-values :math:`p_y^j` (``(N, m, K)`` arrays, e.g. from
:meth:`MultiInputConformalClassifier.predict_view_pvalues`) and return boolean sets ``(N, K)``.

- ``single``: :math:`\\{y : p_y^1 > \\alpha\\}`, standard class-conditional split conformal on the
  first view. Valid (coverage :math:`\\ge 1 - \\alpha` per class).
- ``naive_majority``: :math:`y` is kept when it lies in more than half of the per-view
  :math:`\\alpha`-level sets, :math:`\\#\\{j : p_y^j > \\alpha\\} > m/2`. Guarantees only
  :math:`1 - 2\\alpha`.
- ``bonferroni``: :math:`\\{y : \\min_j p_y^j > \\alpha/m\\}`. Valid by the union bound.
- ``score_average``: average the scores :math:`\\hat p(y|x^j)` over the views, then single-view
  class-conditional calibration (:func:`score_average_sets`). Not valid in general: the average
  of :math:`m` views is not exchangeable with one calibration view.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from mconformal.classifier import MultiInputConformalClassifier, _check_alpha
from paperkit import Described, check_choice, param_error

__all__ = [
    "BASELINES",
    "baseline_sets",
    "bonferroni_sets",
    "naive_majority_sets",
    "score_average_sets",
    "single_view_sets",
]

#: The baseline names.
BASELINES = ("single", "naive_majority", "bonferroni", "score_average")


def _views(view_pvalues: np.ndarray, owner: str) -> np.ndarray:
    p = np.asarray(view_pvalues, dtype=np.float64)
    if p.ndim != 3 or p.shape[1] == 0:
        raise param_error(
            "view_pvalues",
            owner,
            "an array of per-view p-values of shape (N, m, K) with m >= 1",
            Described(f"an array of shape {p.shape}"),
        )
    return p


def single_view_sets(view_pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`\\{y : p_y^1 > \\alpha\\}` (the first view only)."""
    alpha = _check_alpha(alpha, "single_view_sets")
    return _views(view_pvalues, "single_view_sets")[:, 0, :] > alpha


def naive_majority_sets(view_pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`\\{y : \\#\\{j : p_y^j > \\alpha\\} > m/2\\}`; coverage only
    :math:`\\ge 1 - 2\\alpha`."""
    alpha = _check_alpha(alpha, "naive_majority_sets")
    p = _views(view_pvalues, "naive_majority_sets")
    return 2 * (p > alpha).sum(axis=1) > p.shape[1]


def bonferroni_sets(view_pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`\\{y : p_y^j > \\alpha/m \\text{ for all } j\\}`."""
    alpha = _check_alpha(alpha, "bonferroni_sets")
    p = _views(view_pvalues, "bonferroni_sets")
    return (p > alpha / p.shape[1]).all(axis=1)


def score_average_sets(
    clf: MultiInputConformalClassifier, X_multi: np.ndarray, alpha: float | None = None
) -> np.ndarray:
    """Sets from the view-averaged scores :math:`\\bar s_y = \\frac1m \\sum_j s(x^j, y)` calibrated
    as one view: :math:`\\{y : (\\#\\{c \\in C_y : c < \\bar s_y\\} + 1)/(n_y + 1) > \\alpha\\}`.
    ``alpha`` defaults to ``clf.alpha``."""
    alpha = _check_alpha(clf.alpha if alpha is None else alpha, "score_average_sets")
    scores = np.asarray(clf.view_scores(X_multi))
    return clf.single_view_pvalues(scores.mean(axis=1)) > alpha


_FROM_PVALUES: dict[str, Callable[[np.ndarray, float], np.ndarray]] = {
    "single": single_view_sets,
    "naive_majority": naive_majority_sets,
    "bonferroni": bonferroni_sets,
}


def baseline_sets(
    method: str,
    clf: MultiInputConformalClassifier,
    X_multi: np.ndarray | Sequence[np.ndarray],
    alpha: float | None = None,
) -> np.ndarray:
    """The sets ``(N, K)`` of a baseline of :data:`BASELINES` for a fitted classifier, on a 3-D
    array ``(N, m, d)`` or a list of ``(m_i, d)`` arrays (grouped by :math:`m` internally)."""
    check_choice("method", "baseline_sets", method, BASELINES)
    alpha = clf.alpha if alpha is None else alpha
    if isinstance(X_multi, np.ndarray):
        groups = [(np.arange(len(X_multi)), X_multi)]
    else:
        lengths = np.array([len(x) for x in X_multi])
        groups = [
            (idx, np.stack([X_multi[i] for i in idx]))
            for idx in (np.flatnonzero(lengths == m) for m in np.unique(lengths))
        ]
    out = np.zeros((sum(len(idx) for idx, _ in groups), len(clf.classes_)), dtype=bool)
    for idx, X in groups:
        if method == "score_average":
            out[idx] = score_average_sets(clf, X, alpha)
        else:
            out[idx] = _FROM_PVALUES[method](clf.predict_view_pvalues(X), alpha)
    return out
