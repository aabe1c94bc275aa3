"""Surrogate ERM recovers the statistic (paper, Sec. 4-6)."""

import time

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from paperkit import loglog_slope
from rsmlearn import GLMTron, MulticlassRSM, MultilabelRSM, RSMClassifier, datasets


def test_consistency_logistic_erm():
    """Check 5: n = 50 000, d = 5, ‖w*‖ = 2: ‖ŵ − w*‖ ≤ 0.1 and E(η̂ − η)² ≤ 2e-4."""
    X, y, eta = datasets.make_sigmoid_linear(50_000, 5, w_norm=2.0, seed=1)
    clf = RSMClassifier().fit(X, y)
    w = datasets.true_weights(5, 1, 2.0)[:, 0]
    assert np.linalg.norm(clf.coef_[0] - w) <= 0.1
    assert abs(clf.intercept_[0]) <= 0.1
    assert np.mean((clf.predict_statistic(X) - eta) ** 2) <= 2e-4
    assert clf.converged_ and clf.n_iter_ < 10


def _l2(make_est, n, seed, d=5):
    X, y, _ = datasets.make_sigmoid_linear(n, d, w_norm=2.0, seed=seed)
    Xt, _, eta = datasets.make_sigmoid_linear(20_000, d, w_norm=2.0, seed=10_000 + seed)
    est = make_est().fit(X, y)
    return np.mean((est.predict_statistic(Xt) - eta) ** 2)


@pytest.mark.parametrize("make", [RSMClassifier, GLMTron], ids=["logistic", "glmtron"])
def test_parametric_rate(make):
    """Check 6: slope of log L2 error against log n over {250, ..., 16000}, 5 seeds, in
    [-1.3, -0.7]."""
    ns = [250, 1000, 4000, 16000]
    errs = [np.mean([_l2(make, n, s) for s in range(5)]) for n in ns]
    slope = loglog_slope(ns, errs)
    assert -1.3 <= slope <= -0.7, (slope, errs)


def test_logistic_vs_glmtron():
    """Check 7: n = 4000, d = 10, 5 seeds: error ratio GLM-tron / logistic in [0.5, 2.5]; the
    median of 3 wall times of logistic ≤ 0.5 × GLM-tron's."""
    ratios = [_l2(GLMTron, 4000, s, d=10) / _l2(RSMClassifier, 4000, s, d=10) for s in range(5)]
    assert 0.5 <= np.mean(ratios) <= 2.5, ratios
    X, y, _ = datasets.make_sigmoid_linear(4000, 10, seed=0)
    times = {}
    for name, est in (("erm", RSMClassifier()), ("tron", GLMTron())):
        runs = []
        for _ in range(3):
            t = time.perf_counter()
            est.fit(X, y)
            runs.append(time.perf_counter() - t)
        times[name] = np.median(runs)
    assert times["erm"] <= 0.5 * times["tron"], times


def test_multiclass_recovers_softmax_probabilities():
    """Check 9: E‖p̂ − p‖² ≤ 1e-3 at n = 20 000, K = 4, d = 5, ‖W*‖_F = 3."""
    X, y, P = datasets.make_softmax_linear(20_000, 5, K=4, w_norm=3.0, seed=0)
    mc = MulticlassRSM().fit(X, y)
    assert np.mean(((mc.predict_statistic(X) - P) ** 2).sum(1)) <= 1e-3
    assert mc.predict(X[:5]).shape == (5,)


def test_multiclass_squared_gives_simplex_points():
    X, y, P = datasets.make_softmax_linear(5000, 5, K=4, w_norm=1.0, seed=0)
    Q = MulticlassRSM(loss="squared").fit(X, y).predict_statistic(X)
    assert np.all(Q >= 0) and np.allclose(Q.sum(1), 1.0)
    assert np.mean(((Q - P) ** 2).sum(1)) <= 5e-3  # misspecified (linear link), near-linear P


def test_multilabel_recovers_marginals():
    X, Y, M = datasets.make_multilabel_logistic(20_000, 5, L=3, seed=0)
    ml = MultilabelRSM().fit(X, Y)
    assert np.mean((ml.predict_statistic(X) - M) ** 2) <= 1e-3
    assert ml.predict(X).shape == (20_000, 3)


def test_norm_bound_is_enforced():
    X, y, _ = datasets.make_sigmoid_linear(2000, 5, w_norm=3.0, seed=0)
    clf = RSMClassifier(norm_bound=1.0).fit(X, y)
    assert np.linalg.norm(clf.coef_) <= 1.0 + 1e-6
    free = RSMClassifier().fit(X, y)
    assert np.linalg.norm(free.coef_) > 2.0


def test_newton_and_lbfgs_agree():
    X, y, _ = datasets.make_sigmoid_linear(3000, 5, seed=3)
    a = RSMClassifier(solver="newton").fit(X, y)
    b = RSMClassifier(solver="lbfgs").fit(X, y)
    np.testing.assert_allclose(a.coef_, b.coef_, atol=1e-5)
    X, y, _ = datasets.make_softmax_linear(3000, 4, K=3, seed=3)  # the coupled Hessian
    a = MulticlassRSM(solver="newton").fit(X, y)
    b = MulticlassRSM(solver="lbfgs").fit(X, y)
    assert a.converged_ and a.n_iter_ < 15
    np.testing.assert_allclose(a.predict_statistic(X), b.predict_statistic(X), atol=1e-5)


def test_not_fitted_and_bad_labels():
    X, y, _ = datasets.make_sigmoid_linear(100, 3)
    for est in (RSMClassifier(), MulticlassRSM(), MultilabelRSM(), GLMTron()):
        with pytest.raises(NotFittedError):
            est.predict(X)
    with pytest.raises(ValueError, match="'y'"):
        RSMClassifier().fit(X, y + 1)
    with pytest.raises(ValueError, match="'loss'"):
        RSMClassifier(loss="hinge").fit(X, y)
    X[0, 0] = np.nan
    with pytest.raises(ValueError, match="'X'"):
        RSMClassifier().fit(X, y)


def test_clone_and_params():
    clf = RSMClassifier(loss="exponential", ridge=1e-3)
    c2 = clone(clf)
    assert c2.get_params() == clf.get_params()
    assert c2.set_params(loss="squared").loss == "squared"
