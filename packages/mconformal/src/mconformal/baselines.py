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

NaN policy: NaN or inf p-values (and NaN scores) are refused; p-values must lie in [0, 1].
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from mconformal.classifier import MultiInputConformalClassifier, check_alpha
from paperkit import check_array, check_choice, describe, param_error

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


def _views(view_pvalues: object, owner: str) -> np.ndarray:
    p = check_array("view_pvalues", owner, view_pvalues, shape=("N", "m", "K")).astype(np.float64)
    if p.min() < 0 or p.max() > 1:
        raise param_error("view_pvalues", owner, "p-values in [0, 1]", describe(p))
    return p


def single_view_sets(view_pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`\\{y : p_y^1 > \\alpha\\}` (the first view only)."""
    alpha = check_alpha("single_view_sets", alpha)
    return _views(view_pvalues, "single_view_sets")[:, 0, :] > alpha


def naive_majority_sets(view_pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`\\{y : \\#\\{j : p_y^j > \\alpha\\} > m/2\\}`; coverage only
    :math:`\\ge 1 - 2\\alpha`."""
    alpha = check_alpha("naive_majority_sets", alpha)
    p = _views(view_pvalues, "naive_majority_sets")
    return 2 * (p > alpha).sum(axis=1) > p.shape[1]


def bonferroni_sets(view_pvalues: np.ndarray, alpha: float) -> np.ndarray:
    """:math:`\\{y : p_y^j > \\alpha/m \\text{ for all } j\\}`."""
    alpha = check_alpha("bonferroni_sets", alpha)
    p = _views(view_pvalues, "bonferroni_sets")
    return (p > alpha / p.shape[1]).all(axis=1)


def score_average_sets(
    clf: MultiInputConformalClassifier, X_multi: np.ndarray, alpha: float | None = None
) -> np.ndarray:
    """Sets from the view-averaged scores :math:`\\bar s_y = \\frac1m \\sum_j s(x^j, y)` calibrated
    as one view: :math:`\\{y : (\\#\\{c \\in C_y : c < \\bar s_y\\} + 1)/(n_y + 1) > \\alpha\\}`.
    ``alpha`` defaults to ``clf.alpha``."""
    owner = "score_average_sets"
    _check_fitted(owner, clf)
    alpha = check_alpha(owner, clf.alpha if alpha is None else alpha)
    groups, n_instances, ragged = clf._grouped_scores(X_multi, owner, False)
    if ragged:
        raise param_error("X_multi", owner, "a 3-D array (N, m, d)", describe(X_multi))
    scores = np.asarray(clf._ungroup(groups, n_instances, False, lambda s: s))
    return clf.single_view_pvalues(scores.mean(axis=1)) > alpha


def _check_fitted(owner: str, clf: object) -> None:
    if not isinstance(clf, MultiInputConformalClassifier) or not hasattr(clf, "calibration_"):
        raise param_error(
            "clf", owner, "a fitted MultiInputConformalClassifier", describe(clf), cls=TypeError
        )


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
    owner = "baseline_sets"
    check_choice("method", owner, method, BASELINES)
    _check_fitted(owner, clf)
    alpha = check_alpha(owner, clf.alpha if alpha is None else alpha)
    blocks, _ = clf._view_blocks(X_multi, owner, from_scores=False)  # the classifier's checks
    lengths = np.array([len(b) for b in blocks])
    groups = [
        (idx, np.stack([blocks[i] for i in idx]))
        for idx in (np.flatnonzero(lengths == m) for m in np.unique(lengths))
    ]
    out = np.zeros((sum(len(idx) for idx, _ in groups), len(clf.classes_)), dtype=bool)
    for idx, X in groups:
        if method == "score_average":
            out[idx] = score_average_sets(clf, X, alpha)
        else:
            out[idx] = _FROM_PVALUES[method](clf.predict_view_pvalues(X), alpha)
    return out
