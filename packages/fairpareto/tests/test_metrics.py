import numpy as np
from scipy.special import expit
from sklearn.linear_model import LogisticRegression

from fairpareto import MIFPO, expected_calibration_error, parity_gap


def test_parity_gap_matches_a_manual_computation():
    y = np.array([1, 0, 1, 1, 0, 1, 0])
    A = np.array([1, 1, 1, 0, 0, 0, 0])
    assert abs(parity_gap(y, A) - abs(2 / 3 - 2 / 4)) < 1e-15
    proba = np.array([0.9, 0.1, 0.5, 0.2, 0.2, 0.4, 0.6])
    assert abs(parity_gap(proba, A) - abs(0.5 - 0.35)) < 1e-12
    assert parity_gap(y, A.astype(bool)) == parity_gap(y, A)


def _logistic(n, rng):
    X = rng.standard_normal((n, 3))
    A = (rng.random(n) < 0.4).astype(int)
    logit = X @ np.array([1.0, -0.5, 0.8]) + 0.7 * A - 0.2
    y = (rng.random(n) < expit(logit)).astype(int)
    return X, y, A


def test_fit_from_estimator_gives_calibrated_held_out_scores():
    rng = np.random.default_rng(0)
    X, y, A = _logistic(6000, rng)
    mf = MIFPO(solver="lp", gammas=[0.0, 1.0]).fit_from_estimator(
        X, y, A, estimator=LogisticRegression()
    )
    Xt, yt, At = _logistic(6000, rng)
    scores = mf.predict_scores(Xt, At)
    assert expected_calibration_error(scores, yt, n_bins=10) < 0.05
    assert set(mf.estimators_) == {0, 1}
    assert mf.accuracy_[1] >= mf.accuracy_[0]  # fairness costs accuracy
