"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import numpy as np

import mconformal
from mconformal import GaussianMixture, MultiInputConformalClassifier, PlantNetStyle
from paperkit.testing import BadInputs, Call, fresh

K, d = 3, 2
MEANS = 2.0 * np.random.default_rng(0).standard_normal((K, d))
MIXTURE = GaussianMixture(MEANS)


class Posterior:
    """A fixed classifier: the Bayes posterior softmax(-|x - mu_y|^2 / 2) of the mixture."""

    classes_ = np.arange(K)

    def predict_proba(self, X):
        logits = -0.5 * ((np.asarray(X)[:, None, :] - MEANS[None]) ** 2).sum(-1)
        proba = np.exp(logits - logits.max(axis=1, keepdims=True))
        return proba / proba.sum(axis=1, keepdims=True)


ESTIMATOR = Posterior()
X_CAL, Y_CAL = MIXTURE.single(4, np.random.default_rng(1))  # 4 calibration views per class
X_MULTI, Y_MULTI = MIXTURE.multi(5, 2, np.random.default_rng(2))  # 5 instances, 2 views
SCORES = ESTIMATOR.predict_proba(X_MULTI.reshape(-1, d)).reshape(5, 2, K)
CAL_SCORES = ESTIMATOR.predict_proba(X_CAL)
HUGE = 10**12  # a size whose arrays would need terabytes


def Aggregator(law, fn=None):  # noqa: N802 - stands for the class in the suite's coverage
    """``Aggregator("mean", law, fn)``: the suite's Call reserves the keyword ``name``."""
    return mconformal.Aggregator("mean", law, fn)


def baseline_sets(clf, X_multi, alpha):
    """``baseline_sets("bonferroni", ...)``: the suite's Call reserves the keyword ``method``."""
    return mconformal.baseline_sets("bonferroni", clf, X_multi, alpha)


def _rng():
    return fresh(lambda: np.random.default_rng(0))


def _fitted(clf):
    clf.fit(X_CAL, Y_CAL)


def _fitted_scores(clf):
    clf.fit_scores(CAL_SCORES, Y_CAL)


CLASSIFIER = {
    "estimator": ESTIMATOR,
    "alpha": 0.2,
    "aggregator": "quantile",
    "score": "proba",
    "tie_break": "random",
    "n_null": 50,
    "prefit": True,
    "random_state": 0,
    "exact_limit": 100,
}
CLASSIFIER_BAD = {
    "alpha": [0.0, 1.0, 1.5],
    "n_null": [0, HUGE],
    "exact_limit": [0, HUGE],
    "random_state": [-1],
}
# scores may be -inf or +inf by design (log_proba of a zero probability): only NaN is refused
SCORE_INF = {"inf"}


def _method(method, prepare, call, shapes, accepts=None):
    return Call(
        MultiInputConformalClassifier,
        name=f"MultiInputConformalClassifier.{method}",
        method=method,
        prepare=prepare,
        call=call,
        shapes=shapes,
        accepts=accepts or {},
        **CLASSIFIER,
    )


SUITE = BadInputs(
    mconformal,
    [
        Call(
            MultiInputConformalClassifier,
            method="predict_set",
            prepare=_fitted,
            call={"X_multi": X_MULTI},
            shapes={"X_multi": "N m 2"},
            bad={**CLASSIFIER_BAD, "estimator": [object()]},
            **CLASSIFIER,
        ),
        _method("fit", None, {"X_cal": X_CAL, "y_cal": Y_CAL}, {"X_cal": "n 2", "y_cal": "n"}),
        _method(
            "fit_scores",
            None,
            {"scores": CAL_SCORES, "y_cal": Y_CAL},
            {"scores": "n K", "y_cal": "n"},
            {"scores": SCORE_INF},
        ),
        _method("predict_pvalues", _fitted, {"X_multi": X_MULTI}, {"X_multi": "N m 2"}),
        _method("view_scores", _fitted, {"X_multi": X_MULTI}, {"X_multi": "N m 2"}),
        _method("predict_view_pvalues", _fitted, {"X_multi": X_MULTI}, {"X_multi": "N m 2"}),
        _method(
            "predict_set_from_scores",
            _fitted_scores,
            {"scores": SCORES},
            {"scores": "N m 3"},
            {"scores": SCORE_INF},
        ),
        _method(
            "predict_pvalues_from_scores",
            _fitted_scores,
            {"scores": SCORES},
            {"scores": "N m 3"},
            {"scores": SCORE_INF},
        ),
        _method(
            "single_view_pvalues",
            _fitted_scores,
            {"scores": SCORES[:, 0]},
            {"scores": "N 3"},
            # any number of leading axes (documented: scores (..., K))
            {"scores": SCORE_INF | {"rank"}},
        ),
        Call(
            mconformal.conformal_pvalues,
            cal_scores_y=np.array([0.1, 0.5, 0.9, 0.3]),
            test_scores=np.array([[0.2, 0.6], [0.95, 0.0]]),
            tie_break="random",
            rng=0,
            bad={"rng": [-1, "seed"]},
            # test scores of any shape, an empty one gives an empty answer (documented)
            accepts={"test_scores": {"rank", "empty"} | SCORE_INF, "cal_scores_y": SCORE_INF},
        ),
        Call(
            mconformal.conformal_counts,
            cal_scores_y=np.array([0.1, 0.5, 0.9, 0.3]),
            test_scores=np.array([0.2, 0.6]),
            tie_break="conservative",
            rng=0,
            bad={"rng": [-1]},
            accepts={"test_scores": {"rank", "empty"} | SCORE_INF, "cal_scores_y": SCORE_INF},
        ),
        Call(
            mconformal.aggregated_pvalues,
            counts=np.array([[0, 3], [2, 4]]),
            n=4,
            aggregator="fisher",
            n_null=50,
            exact_limit=100,
            seed=0,
            shapes={"counts": "B m"},
            bad={"counts": [np.array([[0, 5]])], "n": [-1], "n_null": [0], "seed": [-1]},
        ),
        Call(
            mconformal.aggregated_pvalues,
            name="aggregated_pvalues-huge",
            counts=np.array([[0, 3]]),
            n=10**6,
            aggregator="min",
            n_null=HUGE,
            exact_limit=HUGE,
            # the order statistic's exact counts for n = 10**9, the draws, the enumeration
            bad={"n": [10**9]},
        ),
        Call(mconformal.get_aggregator, aggregator="stouffer"),
        Call(Aggregator, law="sum"),
        Call(
            mconformal.monte_carlo_pvalue,
            f_obs=np.array([0.5, 0.2]),
            f_null=np.array([0.1, 0.4, 0.6, 0.9]),
            # any shape; +-inf compare as usual; no observation gives no p-value (documented)
            accepts={"f_obs": {"rank", "inf", "empty"}, "f_null": {"rank", "inf"}},
        ),
        Call(mconformal.majority_order, m=5, bad={"m": [0]}),
        Call(
            mconformal.single_view_sets,
            view_pvalues=np.full((4, 2, K), 0.5),
            alpha=0.1,
            shapes={"view_pvalues": "N m K"},
            bad={"view_pvalues": [np.full((4, 2, K), 1.5)], "alpha": [0.0, 1.0]},
        ),
        Call(
            mconformal.naive_majority_sets,
            view_pvalues=np.full((4, 2, K), 0.5),
            alpha=0.1,
            bad={"alpha": [-0.1]},
        ),
        Call(
            mconformal.bonferroni_sets,
            view_pvalues=np.full((4, 2, K), 0.5),
            alpha=0.1,
            bad={"alpha": [2.0]},
        ),
        Call(
            mconformal.score_average_sets,
            clf=fresh(lambda: MultiInputConformalClassifier(ESTIMATOR).fit(X_CAL, Y_CAL)),
            X_multi=X_MULTI,
            alpha=0.2,
            shapes={"X_multi": "N m 2"},
            bad={"clf": [MultiInputConformalClassifier(ESTIMATOR)], "alpha": [0.0]},
        ),
        Call(
            baseline_sets,
            clf=fresh(lambda: MultiInputConformalClassifier(ESTIMATOR).fit(X_CAL, Y_CAL)),
            X_multi=X_MULTI,
            alpha=0.2,
            shapes={"X_multi": "N m 2"},
            bad={"clf": [object()], "alpha": [1.0]},
        ),
        Call(
            mconformal.class_conditional_coverage,
            sets=np.ones((5, K), dtype=bool),
            y=Y_MULTI,
            shapes={"sets": "N K", "y": "N"},
            bad={"y": [np.full(5, K)]},
        ),
        Call(mconformal.mean_set_size, sets=np.ones((5, K), dtype=bool)),
        Call(mconformal.singleton_rate, sets=np.eye(K, dtype=bool)),
        Call(
            mconformal.sample_null,
            n=5,
            m=3,
            size=10,
            rng=0,
            bad={"n": [-1], "m": [0], "size": [-1, HUGE], "rng": [-2]},
        ),
        Call(mconformal.enumerate_null, n=5, m=3, bad={"n": [-1, 10**6], "m": [0]}),
        Call(mconformal.null_size, n=5, m=3, bad={"n": [-1], "m": [0]}),
        Call(
            mconformal.null_order_stat_pmf,
            n=8,
            m=4,
            i=2,
            exact=True,
            bad={"i": [0, 5], "n": [-1, 10**10]},
        ),
        Call(mconformal.null_order_stat_cdf, n=8, m=4, i=4, bad={"i": [0, 5], "m": [0]}),
        Call(mconformal.null_sum_pmf, n=10, m=3, bad={"n": [-1, 10**7], "m": [0, 10**4]}),
        Call(mconformal.null_sum_cdf, n=10, m=3, bad={"n": [10**7], "m": [0]}),
        Call(
            GaussianMixture,
            means=MEANS,
            method="multi",
            call={"n": 4, "m": 2, "rng": _rng()},
            shapes={"means": "K d"},
            bad={"means": [MEANS[:1]]},
        ),
        Call(
            GaussianMixture.make,
            name="GaussianMixture.make",
            n_classes=3,
            dim=2,
            spread=1.0,
            seed=0,
            bad={"n_classes": [1], "dim": [0, HUGE], "spread": [-1.0], "seed": [-1]},
        ),
        Call(
            GaussianMixture,
            name="GaussianMixture.multi",
            means=MEANS,
            method="multi",
            call={"n": 4, "m": 2, "rng": _rng()},
            bad={"n": [0, HUGE], "m": [0]},
        ),
        Call(
            GaussianMixture,
            name="GaussianMixture.single",
            means=MEANS,
            method="single",
            call={"n_per_class": 3, "rng": _rng()},
            bad={"n_per_class": [-1, HUGE, np.array([1, 2])], "rng": ["seed"]},
        ),
        Call(
            GaussianMixture,
            name="GaussianMixture.views",
            means=MEANS,
            method="views",
            call={"y": np.array([0, 2, 1]), "m": 2, "rng": _rng()},
            bad={"y": [np.array([0, 3])], "m": [0]},
            accepts={"y": {"empty"}},  # no labels give no views
        ),
        Call(
            PlantNetStyle,
            mixture=MIXTURE,
            tail=1.0,
            n_cal=30,
            n_min=2,
            p_more=0.5,
            m_max=3,
            method="observations",
            call={"n": 4, "rng": _rng()},
            bad={
                "mixture": [MEANS],
                "tail": [-1.0],
                "n_cal": [0, HUGE],
                "p_more": [0.0, 1.5],
                "m_max": [0],
                "n": [0, HUGE],
            },
        ),
        Call(
            mconformal.digits_split,
            seed=0,
            train=0.4,
            calibration=0.3,
            bad={"seed": [-1], "train": [0.0, 1.0], "calibration": [0.0, 0.6]},
        ),
        Call(
            mconformal.same_class_views,
            X_pool=X_CAL,
            y_pool=Y_CAL,
            m=2,
            n=3,
            rng=_rng(),
            shapes={"X_pool": "P d", "y_pool": "P"},
            bad={"m": [0, 5], "n": [0, HUGE]},
            accepts={"y_pool": {"negative", "dtype"}},  # labels may be any values
        ),
    ],
    exempt={
        "ClassCalibration": "a frozen record built by MultiInputConformalClassifier.fit from "
        "checked scores; its from_scores is called with those",
        "clear_null_cache": "takes no argument",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
