import numpy as np

from mconformal import (
    MultiInputConformalClassifier,
    baseline_sets,
    bonferroni_sets,
    naive_majority_sets,
    score_average_sets,
    single_view_sets,
)
from paperkit.testing import assert_param_error


def test_vote_rules_on_hand_made_pvalues():
    # one instance, m = 3 views, K = 2 classes
    p = np.array([[[0.5, 0.05], [0.02, 0.2], [0.3, 0.04]]])
    assert single_view_sets(p, 0.1).tolist() == [[True, False]]
    assert naive_majority_sets(p, 0.1).tolist() == [[True, False]]  # 2 of 3 vs 1 of 3
    assert bonferroni_sets(p, 0.1).tolist() == [[False, True]]  # min p > 0.1/3 = 0.0333
    assert naive_majority_sets(p[:, :2], 0.1).tolist() == [[False, False]]  # needs > m/2 = 1


def test_baselines_reduce_to_single_at_m1(mixture):
    means, model, views = mixture()
    rng = np.random.default_rng(0)
    y_cal = np.repeat(np.arange(5), 40)
    clf = MultiInputConformalClassifier(model).fit(views(y_cal, 1, rng)[:, 0], y_cal)
    X = views(rng.integers(5, size=200), 1, rng)
    reference = clf.predict_set(X)
    for method in ("single", "naive_majority", "bonferroni", "score_average"):
        assert np.array_equal(baseline_sets(method, clf, X), reference), method


def test_score_average_uses_the_averaged_probability(mixture):
    means, model, views = mixture()
    rng = np.random.default_rng(1)
    y_cal = np.repeat(np.arange(5), 40)
    clf = MultiInputConformalClassifier(model).fit(views(y_cal, 1, rng)[:, 0], y_cal)
    X = views(rng.integers(5, size=50), 4, rng)
    avg = model.predict_proba(X.reshape(-1, 4)).reshape(50, 4, 5).mean(1)
    ref = np.stack(
        [
            ((c.scores[None, :] < avg[:, k, None]).sum(1) + 1) / (c.n + 1)
            for k, c in enumerate(clf.calibration_)
        ],
        axis=1,
    )
    assert np.array_equal(score_average_sets(clf, X), ref > 0.1)


def test_ragged_baselines(mixture):
    means, model, views = mixture()
    rng = np.random.default_rng(2)
    y_cal = np.repeat(np.arange(5), 40)
    clf = MultiInputConformalClassifier(model).fit(views(y_cal, 1, rng)[:, 0], y_cal)
    X2, X3 = views(rng.integers(5, size=6), 2, rng), views(rng.integers(5, size=4), 3, rng)
    ragged = [*X2[:3], *X3, *X2[3:]]
    out = baseline_sets("bonferroni", clf, ragged)
    expected = np.concatenate(
        [
            baseline_sets("bonferroni", clf, X2[:3]),
            baseline_sets("bonferroni", clf, X3),
            baseline_sets("bonferroni", clf, X2[3:]),
        ]
    )
    assert np.array_equal(out, expected)


def test_bad_inputs():
    assert_param_error(single_view_sets, np.ones((3, 2)), 0.1, param="view_pvalues")
    assert_param_error(bonferroni_sets, np.ones((3, 2, 2)), 1.2, param="alpha")
    assert_param_error(baseline_sets, "vote", None, np.ones((1, 1, 1)), param="method")
