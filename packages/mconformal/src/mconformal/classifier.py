"""``MultiInputConformalClassifier``: class-conditional conformal sets for instances seen through
several views, calibrated on single views.

Calibration: for each class :math:`y`, :math:`C_y = \\{s(X_i, y) : Y_i = y\\}`, with
:math:`s(x, y) = \\hat p(y \\mid x)` (``score="proba"``) or :math:`\\log \\hat p(y \\mid x)`
(``score="log_proba"``). Prediction for :math:`x^{1:m}`: per-view counts
:math:`K_y^j = \\#\\{c \\in C_y : c < s(x^j, y)\\}`, the aggregated p-value :math:`P_{agg}(y)` of
:mod:`mconformal.aggregators`, and the set
:math:`\\Gamma(x^{1:m}) = \\{y : P_{agg}(y) > \\alpha\\}`.
Guarantee: :math:`P(Y \\notin \\Gamma \\mid Y = y) \\le \\alpha` for every class :math:`y` and every
:math:`m`, when, given :math:`Y = y`, the views and the class-:math:`y` calibration points are
exchangeable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from sklearn.base import BaseEstimator, clone
from sklearn.utils.validation import check_is_fitted

from mconformal.aggregators import AGGREGATORS, aggregated_pvalues, get_aggregator
from mconformal.pvalues import TIE_BREAKS, ClassCalibration, check_scores
from paperkit import (
    Described,
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_memory,
    check_real,
    describe,
    param_error,
)

__all__ = ["SCORES", "MultiInputConformalClassifier"]

#: Conformity scores built from ``predict_proba``.
SCORES = ("proba", "log_proba")
_NAME = "MultiInputConformalClassifier"

MultiInput = np.ndarray | Sequence[np.ndarray]


def check_alpha(owner: str, alpha: object) -> float:
    """The miscoverage level, a finite real in the open interval (0, 1)."""
    return check_real("alpha", owner, alpha, low=0, high=1, low_open=True, high_open=True)


class MultiInputConformalClassifier(BaseEstimator):
    """Class-conditional conformal prediction for multi-input instances by p-value aggregation.

    Args:
        estimator: a probabilistic classifier exposing ``predict_proba`` (fitted when
            ``prefit=True``). May be None when calibrating from scores with :meth:`fit_scores`.
        alpha: miscoverage level in (0, 1); the sets cover every class with probability
            :math:`\\ge 1 - \\alpha`.
        aggregator: one of ``"mean"``, ``"fisher"``, ``"stouffer"``, ``"min"``, ``"quantile"``,
            ``"majority"``, ``"distance"`` (see :class:`mconformal.aggregators.Aggregator`), or a
            callable :math:`F`: p-values ``(B, m)`` to ``(B,)``, symmetric and nondecreasing.
        score: ``"proba"`` (:math:`\\hat p(y|x)`) or ``"log_proba"``.
        tie_break: ``"random"`` (exact law) or ``"conservative"`` (ties counted as smaller).
        n_null: Monte Carlo size :math:`B` when the null law is neither closed-form nor enumerable.
        prefit: use ``estimator`` as fitted; otherwise fit a clone on a random half of the data
            passed to :meth:`fit` and calibrate on the other half.
        random_state: seed of the tie-breaking keys, the Monte Carlo draws and the split; each
            prediction call restarts its tie-breaking stream, so equal inputs give equal outputs.
        exact_limit: enumerate :math:`A_{n,m}` when :math:`\\binom{n+m}{m}` is at most this.

    NaN policy: NaN or inf features are refused; NaN scores are refused, while :math:`\\pm\\infty`
    scores (``log_proba`` of a zero probability) are ordinary extreme scores.

    Attributes (after fitting):
        classes_: the labels, in the column order of the outputs.
        n_calibration_: ``(K,)`` number :math:`n_y` of calibration points per class.
        estimator_: the fitted classifier (None after :meth:`fit_scores`).
        n_features_in_: the feature dimension :math:`d` (after :meth:`fit`).
    """

    def __init__(
        self,
        estimator: object = None,
        alpha: float = 0.1,
        aggregator: str | Callable[[np.ndarray], np.ndarray] = "quantile",
        score: str = "proba",
        tie_break: str = "random",
        n_null: int = 20_000,
        prefit: bool = True,
        random_state: int | None = 0,
        exact_limit: int = 2_000_000,
    ) -> None:
        self.estimator = estimator
        self.alpha = alpha
        self.aggregator = aggregator
        self.score = score
        self.tie_break = tie_break
        self.n_null = n_null
        self.prefit = prefit
        self.random_state = random_state
        self.exact_limit = exact_limit
        self._check_params(_NAME)

    def _check_params(self, owner: str) -> None:
        check_alpha(owner, self.alpha)
        if not callable(self.aggregator):
            check_choice("aggregator", owner, self.aggregator, AGGREGATORS)
        check_choice("score", owner, self.score, SCORES)
        check_choice("tie_break", owner, self.tie_break, TIE_BREAKS)
        # the Monte Carlo draws and the enumerated null hold at least 4 int64 arrays of these rows
        for name in ("n_null", "exact_limit"):
            value = check_int(name, owner, getattr(self, name), low=1)
            check_memory(name, owner, value, 4 * 8 * value)
        check_bool("prefit", owner, self.prefit)
        if self.random_state is not None:
            check_int("random_state", owner, self.random_state, low=0)

    # ------------------------------------------------------------------ calibration
    def fit(self, X_cal: np.ndarray, y_cal: np.ndarray) -> MultiInputConformalClassifier:
        """Calibrate on single views ``X_cal`` ``(n, d)`` with labels ``y_cal`` ``(n,)``.

        With ``prefit=False`` a clone of the estimator is first fitted on a random half.
        """
        owner = f"{_NAME}.fit"
        self._check_params(owner)
        if not hasattr(self.estimator, "predict_proba"):
            raise param_error(
                "estimator",
                owner,
                "a classifier with a predict_proba method",
                Described(type(self.estimator).__name__),
                cls=TypeError,
            )
        dims: dict = {}
        X = check_array("X_cal", owner, X_cal, shape=("n", "d"), dims=dims).astype(np.float64)
        y = check_array("y_cal", owner, y_cal, shape=("n",), dims=dims, kind=None)
        self.seed_ = self._seed()
        if self.prefit:
            self.estimator_ = self.estimator
        else:
            order = np.random.default_rng([self.seed_, 3]).permutation(X.shape[0])
            train, cal = order[: X.shape[0] // 2], order[X.shape[0] // 2 :]
            self.estimator_ = clone(self.estimator).fit(X[train], y[train])
            X, y = X[cal], y[cal]
        self.n_features_in_ = X.shape[1]
        try:
            scores = self._scores_of(X)
        except ValueError as exc:  # e.g. a feature count the estimator was not trained on
            raise param_error(
                "X_cal", owner, "features the estimator accepts", describe(X)
            ) from exc
        classes = getattr(self.estimator_, "classes_", np.arange(scores.shape[1]))
        self._calibrate(scores, y, np.asarray(classes), owner)
        return self

    def fit_scores(self, scores: np.ndarray, y_cal: np.ndarray) -> MultiInputConformalClassifier:
        """Calibrate from precomputed conformity scores ``(n, K)`` (higher = more typical of the
        column's class; e.g. probabilities) and labels ``y_cal`` in ``[0, K)``."""
        owner = f"{_NAME}.fit_scores"
        self._check_params(owner)
        dims: dict = {}
        scores = check_scores("scores", owner, scores, shape=("n", "K"), dims=dims)
        y = check_array("y_cal", owner, y_cal, shape=("n",), dims=dims, kind="int")
        self.seed_ = self._seed()
        self.estimator_ = None
        self._calibrate(scores, y, np.arange(scores.shape[1]), owner)
        return self

    def _seed(self) -> int:
        if self.random_state is None:
            return int(np.random.default_rng().integers(2**31))
        return int(self.random_state)

    def _calibrate(
        self, scores: np.ndarray, y: np.ndarray, classes: np.ndarray, owner: str
    ) -> None:
        index = np.searchsorted(classes, y)
        index = np.minimum(index, len(classes) - 1)
        unknown = classes[index] != y
        if unknown.any():
            raise param_error(
                "y_cal",
                owner,
                f"labels among the classes {classes.tolist()}",
                Described(f"label {y[unknown][0].item()!r}"),
            )
        counts = np.bincount(index, minlength=len(classes))
        if (counts == 0).any():
            missing = classes[np.flatnonzero(counts == 0)[0]].item()
            raise param_error(
                "y_cal",
                owner,
                "labels with at least one calibration point for every class",
                Described(f"no calibration point for class {missing!r}"),
            )
        rng = np.random.default_rng([self.seed_, 1])
        self.classes_ = classes
        self.n_calibration_ = counts
        self.calibration_ = [
            ClassCalibration.from_scores(scores[index == k, k], rng) for k in range(len(classes))
        ]

    def _scores_of(self, X: np.ndarray) -> np.ndarray:
        proba = np.asarray(self.estimator_.predict_proba(X), dtype=np.float64)
        if self.score == "log_proba":
            with np.errstate(divide="ignore"):
                return np.log(proba)
        return proba

    # ------------------------------------------------------------------ inputs
    def _view_blocks(
        self, X_multi: MultiInput, owner: str, *, from_scores: bool
    ) -> tuple[list[np.ndarray], bool]:
        """Split the input into per-instance (m_i, width) blocks; ``width`` is d or K."""
        check_is_fitted(self, "calibration_")
        param = "scores" if from_scores else "X_multi"
        if from_scores:
            width, what = len(self.classes_), "classes"
        else:
            if self.estimator_ is None:
                raise param_error(
                    "X_multi", owner, "scores (calibrated with fit_scores)", Described("features")
                )
            width, what = self.n_features_in_, "features"
        ragged = isinstance(X_multi, (list, tuple))
        if ragged:
            if len(X_multi) == 0:
                raise param_error(param, owner, "a non-empty list of instances", X_multi)
            blocks = [check_array(param, owner, x, finite=False, nonempty=False) for x in X_multi]
        else:
            array = check_array(param, owner, X_multi, finite=False, nonempty=False)
            if array.ndim != 3 or array.shape[0] == 0:
                raise param_error(
                    param,
                    owner,
                    f"a 3-D array (N, m, {width}), N >= 1, or a list of 2-D arrays (m_i, {width})",
                    describe(array),
                )
            blocks = list(array)
        for i, block in enumerate(blocks):
            if block.ndim != 2 or block.shape[0] == 0 or block.shape[1] != width:
                raise param_error(
                    param,
                    owner,
                    f"instances with m >= 1 views of {width} {what} each",
                    Described(f"instance {i} of shape {block.shape}"),
                )
            bad = np.isnan(block) if from_scores else ~np.isfinite(block)
            if bad.any():
                raise param_error(
                    param,
                    owner,
                    "free of NaN" if from_scores else "finite",
                    Described(f"{'NaN' if from_scores else 'non-finite'} values in instance {i}"),
                )
        blocks = [b.astype(np.float64) for b in blocks]
        return blocks, ragged

    def _grouped_scores(
        self, X_multi: MultiInput, owner: str, from_scores: bool
    ) -> tuple[list[tuple[np.ndarray, np.ndarray]], int, bool]:
        """Conformity scores grouped by number of views: [(instance indices, (N_m, m, K))]."""
        blocks, ragged = self._view_blocks(X_multi, owner, from_scores=from_scores)
        lengths = np.array([b.shape[0] for b in blocks])
        flat = np.concatenate(blocks)
        scores = flat if from_scores else self._scores_of(flat)
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        groups = []
        for m in np.unique(lengths):
            idx = np.flatnonzero(lengths == m)
            rows = starts[idx, None] + np.arange(m)
            groups.append((idx, scores[rows]))
        return groups, len(blocks), ragged

    def _counts(self, scores: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        counts = np.empty(scores.shape, dtype=np.int64)
        for k, cal in enumerate(self.calibration_):
            counts[..., k] = cal.counts(scores[..., k], self.tie_break, rng)
        return counts

    def _tie_rng(self) -> np.random.Generator:
        return np.random.default_rng([self.seed_, 2])

    def _aggregate(self, groups: list, n_instances: int) -> np.ndarray:
        agg = get_aggregator(self.aggregator)
        out = np.empty((n_instances, len(self.classes_)))
        rng = self._tie_rng()
        for idx, scores in groups:
            counts = self._counts(scores, rng)
            for k, n in enumerate(self.n_calibration_):
                out[idx, k] = aggregated_pvalues(
                    counts[:, :, k],
                    int(n),
                    agg,
                    n_null=self.n_null,
                    exact_limit=self.exact_limit,
                    seed=self.seed_,
                )
        return out

    # ------------------------------------------------------------------ prediction
    def predict_pvalues(self, X_multi: MultiInput) -> np.ndarray | list[np.ndarray]:
        """Aggregated p-values :math:`P_{agg}(y)`: ``(N, K)`` for a 3-D array ``(N, m, d)``; a
        list of ``(K,)`` arrays for a list of ``(m_i, d)`` arrays (ragged numbers of views)."""
        groups, n_instances, ragged = self._grouped_scores(
            X_multi, f"{_NAME}.predict_pvalues", False
        )
        out = self._aggregate(groups, n_instances)
        return list(out) if ragged else out

    def predict_set(self, X_multi: MultiInput) -> np.ndarray | list[np.ndarray]:
        """Prediction sets :math:`\\{y : P_{agg}(y) > \\alpha\\}` as booleans over ``classes_``:
        ``(N, K)`` for a 3-D array, a list of ``(K,)`` arrays for a list input."""
        alpha = check_alpha(f"{_NAME}.predict_set", self.alpha)
        groups, n_instances, ragged = self._grouped_scores(X_multi, f"{_NAME}.predict_set", False)
        sets = self._aggregate(groups, n_instances) > alpha
        return list(sets) if ragged else sets

    def predict_pvalues_from_scores(self, scores: MultiInput) -> np.ndarray | list[np.ndarray]:
        """:meth:`predict_pvalues` from precomputed per-view scores ``(N, m, K)`` or a list of
        ``(m_i, K)`` arrays."""
        groups, n_instances, ragged = self._grouped_scores(
            scores, f"{_NAME}.predict_pvalues_from_scores", True
        )
        out = self._aggregate(groups, n_instances)
        return list(out) if ragged else out

    def predict_set_from_scores(self, scores: MultiInput) -> np.ndarray | list[np.ndarray]:
        """:meth:`predict_set` from precomputed per-view scores ``(N, m, K)`` or a list."""
        owner = f"{_NAME}.predict_set_from_scores"
        alpha = check_alpha(owner, self.alpha)
        groups, n_instances, ragged = self._grouped_scores(scores, owner, True)
        sets = self._aggregate(groups, n_instances) > alpha
        return list(sets) if ragged else sets

    def view_scores(self, X_multi: MultiInput) -> np.ndarray | list[np.ndarray]:
        """Per-view conformity scores :math:`s(x^j, y)`: ``(N, m, K)`` or a list of ``(m_i, K)``."""
        groups, n_instances, ragged = self._grouped_scores(X_multi, f"{_NAME}.view_scores", False)
        return self._ungroup(groups, n_instances, ragged, lambda s: s)

    def predict_view_pvalues(self, X_multi: MultiInput) -> np.ndarray | list[np.ndarray]:
        """Per-view p-values :math:`p_y^j = (K_y^j + 1)/(n_y + 1)` with the same tie-breaking draws
        as :meth:`predict_pvalues`: ``(N, m, K)`` or a list of ``(m_i, K)`` arrays."""
        groups, n_instances, ragged = self._grouped_scores(
            X_multi, f"{_NAME}.predict_view_pvalues", False
        )
        rng = self._tie_rng()
        denom = self.n_calibration_ + 1.0
        return self._ungroup(
            groups, n_instances, ragged, lambda s: (self._counts(s, rng) + 1.0) / denom
        )

    def single_view_pvalues(self, scores: np.ndarray) -> np.ndarray:
        """Single-view p-values of arbitrary scores ``(..., K)`` against the calibration scores,
        :math:`(\\#\\{c \\in C_y : c < s_y\\} + 1)/(n_y + 1)` (e.g. for averaged scores)."""
        check_is_fitted(self, "calibration_")
        owner = f"{_NAME}.single_view_pvalues"
        scores = check_scores("scores", owner, scores, ndim=(1, 2, 3, 4))
        if scores.shape[-1] != len(self.classes_):
            raise param_error(
                "scores",
                owner,
                f"an array whose last axis has the {len(self.classes_)} classes",
                describe(scores),
            )
        return (self._counts(scores, self._tie_rng()) + 1.0) / (self.n_calibration_ + 1.0)

    @staticmethod
    def _ungroup(
        groups: list, n_instances: int, ragged: bool, fn: Callable[[np.ndarray], np.ndarray]
    ) -> np.ndarray | list[np.ndarray]:
        pieces: list[np.ndarray | None] = [None] * n_instances
        for idx, scores in groups:
            for i, value in zip(idx, fn(scores), strict=True):
                pieces[i] = value
        return pieces if ragged else np.stack(pieces)
