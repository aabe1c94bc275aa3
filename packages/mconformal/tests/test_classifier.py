import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.svm import SVC

from mconformal import (
    AGGREGATORS,
    MultiInputConformalClassifier,
    class_conditional_coverage,
    mean_set_size,
    single_view_sets,
)
from paperkit.testing import assert_close, assert_param_error

ALPHA = 0.1


def calibrate(mixture, n_per_class=50, seed=0, **kwargs):
    means, model, views = mixture(**{k: kwargs.pop(k) for k in ("levels", "spread") if k in kwargs})
    rng = np.random.default_rng(seed)
    y_cal = np.repeat(np.arange(len(means)), n_per_class)
    clf = MultiInputConformalClassifier(model, alpha=ALPHA, **kwargs)
    clf.fit(views(y_cal, 1, rng)[:, 0], y_cal)
    return clf, views, rng


@pytest.mark.parametrize("name", AGGREGATORS)
def test_m1_reduces_to_single_view_conformal(mixture, name):
    """at m = 1 every aggregator gives the class-conditional split conformal set."""
    clf, views, rng = calibrate(mixture, aggregator=name)
    y = rng.integers(5, size=300)
    X = views(y, 1, rng)
    # reference: p = (#{c < s} + 1)/(n + 1) from scratch, no ties here
    scores = clf.estimator_.predict_proba(X[:, 0])
    ref = np.empty_like(scores)
    for k, cal in enumerate(clf.calibration_):
        ref[:, k] = ((cal.scores[None, :] < scores[:, k, None]).sum(1) + 1) / (cal.n + 1)
    assert np.array_equal(clf.predict_set(X), ref > ALPHA)
    assert np.array_equal(clf.predict_set(X), single_view_sets(clf.predict_view_pvalues(X), ALPHA))


@pytest.mark.parametrize("name", AGGREGATORS)
def test_view_permutation_invariance(mixture, name):
    """Permuting the views of an instance changes neither its set nor its p-values."""
    clf, views, rng = calibrate(mixture, aggregator=name)
    X = views(rng.integers(5, size=200), 4, rng)
    shuffled = X[:, rng.permutation(4)]
    assert np.array_equal(clf.predict_set(X), clf.predict_set(shuffled))
    assert_close(clf.predict_pvalues(X), clf.predict_pvalues(shuffled), rtol=0, atol=0)


def coverage_study(mixture, m, reps, *, aggregators, levels=0, tie_break="random", n_test=200):
    """Class coverage averaged over repetitions, each with a fresh calibration set, fresh test
    instances and (with ties) fresh tie-breaking draws: the guarantee averages over all three."""
    means, model, views = mixture(n_classes=5, dim=4, spread=1.0, levels=levels)
    covers = {name: [] for name in aggregators}
    for r in range(reps):
        rng = np.random.default_rng([7, m, r])
        y_cal = np.repeat(np.arange(5), 50)
        seed = r if levels else 0  # continuous scores: fixed seed keeps the MC draws cached
        clf = MultiInputConformalClassifier(
            model, alpha=ALPHA, tie_break=tie_break, random_state=seed
        )
        clf.fit(views(y_cal, 1, rng)[:, 0], y_cal)
        y = np.repeat(np.arange(5), n_test // 5)
        X = views(y, m, rng)
        for name in aggregators:
            covers[name].append(
                class_conditional_coverage(clf.set_params(aggregator=name).predict_set(X), y)
            )
    out = {}
    for name, cov in covers.items():
        cov = np.array(cov)
        out[name] = (cov.mean(0), cov.std(0, ddof=1) / np.sqrt(reps))
    return out


@pytest.mark.parametrize("m", [2, 5])
def test_class_conditional_coverage_monte_carlo(mixture, m):
    """K = 5, n_y = 50, alpha = 0.1; R = 200 fresh calibration sets with 200 fresh
    test instances each: every class's repetition-averaged coverage >= 0.9 - 3 SE."""
    result = coverage_study(mixture, m, 200, aggregators=AGGREGATORS)
    for name, (mean, se) in result.items():
        assert (mean >= 1 - ALPHA - 3 * se).all(), (name, mean, se)
        assert (mean <= 1 - ALPHA + 0.06).all(), (name, mean)  # valid, not trivially conservative


@pytest.mark.parametrize("name", ["mean", "quantile", "fisher", "majority", "min", "stouffer"])
def test_monotone_in_alpha(mixture, name):
    """a larger alpha gives nested (smaller or equal) sets."""
    clf, views, rng = calibrate(mixture, aggregator=name)
    X = views(rng.integers(5, size=300), 3, rng)
    previous = None
    for alpha in (0.02, 0.05, 0.1, 0.2, 0.4):
        sets = clf.set_params(alpha=alpha).predict_set(X)
        if previous is not None:
            assert not (sets & ~previous).any()
        previous = sets


@pytest.mark.parametrize("name", ["mean", "quantile", "fisher"])
def test_more_views_give_smaller_sets(mixture, name):
    """on the same data, the mean set size at m = 5 is below that at m = 1."""
    clf, views, rng = calibrate(mixture, aggregator=name, spread=0.6)
    y = rng.integers(5, size=400)
    X = views(y, 5, rng)
    size1, size5 = mean_set_size(clf.predict_set(X[:, :1])), mean_set_size(clf.predict_set(X))
    assert size1 > 1.5 and size5 < 0.75 * size1


def test_ties_random_breaking_keeps_coverage(mixture):
    """probabilities on 3 values only; fresh calibration per repetition."""
    aggs = ("mean", "quantile", "fisher", "majority", "min")
    rand = coverage_study(mixture, 3, 150, aggregators=aggs, levels=3)
    cons = coverage_study(mixture, 3, 150, aggregators=aggs, levels=3, tie_break="conservative")
    for name in aggs:
        mean, se = rand[name]
        assert (mean >= 1 - ALPHA - 3 * se).all(), (name, mean, se)
        if name in ("mean", "quantile", "fisher"):  # fine-grained laws: ties do not over-cover
            assert (mean <= 1 - ALPHA + 0.05).all(), (name, mean)
        assert (cons[name][0] >= mean - 1e-12).all()  # conservative covers at least as often


def test_determinism_under_random_state(mixture):
    """Determinism: ties and Monte Carlo draws both follow random_state."""
    means, model, views = mixture(levels=4)
    rng = np.random.default_rng(0)
    y_cal = np.repeat(np.arange(5), 60)
    X_cal = views(y_cal, 1, rng)[:, 0]
    X = views(rng.integers(5, size=100), 6, rng)

    def run(seed):
        clf = MultiInputConformalClassifier(model, aggregator="quantile", random_state=seed)
        return clf.fit(X_cal, y_cal).predict_pvalues(X)

    first = run(3)
    assert np.array_equal(first, run(3))
    assert np.array_equal(
        first,
        MultiInputConformalClassifier(model, random_state=3).fit(X_cal, y_cal).predict_pvalues(X),
    )
    assert not np.array_equal(first, run(4))


def test_ragged_lists_match_grouped_arrays(mixture):
    clf, views, rng = calibrate(mixture, aggregator="fisher")
    X2, X5 = views(rng.integers(5, size=30), 2, rng), views(rng.integers(5, size=20), 5, rng)
    ragged = [X2[i] for i in range(10)] + list(X5) + [X2[i] for i in range(10, 30)]
    sets = clf.predict_set(ragged)
    assert isinstance(sets, list) and len(sets) == 50 and sets[0].shape == (5,)
    expected = np.concatenate(
        [clf.predict_set(X2[:10]), clf.predict_set(X5), clf.predict_set(X2[10:])]
    )
    assert np.array_equal(np.array(sets), expected)
    view_p = clf.predict_view_pvalues(ragged)
    assert [v.shape for v in view_p[9:11]] == [(2, 5), (5, 5)]


def test_fit_scores_path_equals_estimator_path(mixture):
    clf, views, rng = calibrate(mixture, aggregator="mean")
    y_cal = np.repeat(np.arange(5), 50)
    X_cal = views(y_cal, 1, np.random.default_rng(0))[:, 0]
    by_scores = MultiInputConformalClassifier(aggregator="mean").fit_scores(
        clf.estimator_.predict_proba(X_cal), y_cal
    )
    X = views(rng.integers(5, size=50), 3, rng)
    scores = np.asarray(clf.view_scores(X))
    assert np.array_equal(by_scores.predict_set_from_scores(scores), clf.predict_set(X))
    assert_close(
        by_scores.predict_pvalues_from_scores(scores), clf.predict_pvalues(X), rtol=0, atol=0
    )


def test_prefit_false_fits_a_clone_on_half():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 3)) + np.repeat(np.eye(3) * 2, [134, 133, 133], axis=0)
    y = np.repeat(np.arange(3), [134, 133, 133])
    base = LogisticRegression()
    clf = MultiInputConformalClassifier(base, prefit=False).fit(X, y)
    assert clf.estimator_ is not base and not hasattr(base, "coef_")
    assert clf.n_calibration_.sum() == 200
    assert clf.predict_set(X[:6].reshape(2, 3, 3)).shape == (2, 3)


def test_log_proba_score_gives_the_same_sets(mixture):
    clf, views, rng = calibrate(mixture, aggregator="quantile")
    log_clf, _, _ = calibrate(mixture, aggregator="quantile", score="log_proba")
    X = views(rng.integers(5, size=100), 3, rng)
    assert np.array_equal(clf.predict_set(X), log_clf.predict_set(X))


def test_bad_inputs(mixture):
    """Bad inputs, worded as paperkit.param_error."""
    clf, views, rng = calibrate(mixture)
    means, model, _ = mixture()
    for alpha in (0.0, 1.0, 1.5, -0.1):
        assert_param_error(MultiInputConformalClassifier, model, alpha=alpha, param="alpha")
    assert_param_error(
        MultiInputConformalClassifier, model, alpha="0.1", param="alpha", exc=TypeError
    )
    assert_param_error(
        MultiInputConformalClassifier, model, aggregator="median", param="aggregator"
    )
    assert_param_error(MultiInputConformalClassifier, model, tie_break="up", param="tie_break")
    clf.set_params(alpha=2.0)
    assert_param_error(clf.predict_set, views(np.zeros(2, int), 2, rng), param="alpha")
    clf.set_params(alpha=ALPHA)
    # a class without calibration points: the message names it
    y_cal = np.repeat([0, 1, 2, 4], 10)
    X_cal = views(y_cal, 1, rng)[:, 0]
    err = assert_param_error(MultiInputConformalClassifier(model).fit, X_cal, y_cal, param="y_cal")
    assert "class 3" in str(err)
    assert_param_error(MultiInputConformalClassifier(model).fit, X_cal, y_cal[:-1], param="y_cal")
    # feature dimension, m = 0, empty list, wrong rank
    assert_param_error(clf.predict_set, np.zeros((3, 2, 7)), param="X_multi")
    assert_param_error(clf.predict_set, np.zeros((3, 0, 4)), param="X_multi")
    assert_param_error(clf.predict_set, [np.zeros((2, 4)), np.zeros((0, 4))], param="X_multi")
    assert_param_error(clf.predict_set, [], param="X_multi")
    assert_param_error(clf.predict_set, np.zeros((3, 4)), param="X_multi")
    # mismatched score shapes
    by_scores = MultiInputConformalClassifier().fit_scores(
        np.random.default_rng(0).random((20, 5)), np.arange(20) % 5
    )
    assert_param_error(by_scores.predict_set_from_scores, np.zeros((3, 2, 4)), param="scores")
    assert_param_error(by_scores.predict_set, np.zeros((3, 2, 4)), param="X_multi")
    assert_param_error(by_scores.single_view_pvalues, np.zeros((3, 4)), param="scores")
    # an estimator without predict_proba
    X = np.random.default_rng(0).random((20, 2))
    no_proba = SVC().fit(X, np.arange(20) % 2)
    assert_param_error(
        MultiInputConformalClassifier(no_proba).fit,
        X,
        np.arange(20) % 2,
        param="estimator",
        exc=TypeError,
    )
