"""The baselines against the front: fairlearn's ExponentiatedGradient and ThresholdOptimizer and
the DP-penalised logistic model, trained on one half of calibrated synthetic data and placed
against the front of the other half's true scores."""

import numpy as np
import pytest
from fairlearn.metrics import demographic_parity_difference
from sklearn.metrics import accuracy_score

from fairpareto import MIFPO, bin_scores, synthetic_scores
from fairpareto.baselines import fit_baselines
from fairpareto.lp import lp_error
from fairpareto.reproduce import baseline_points

EPS = 0.05  # ExponentiatedGradient's difference bound
# pandas 3 deprecations raised inside fairlearn 0.15's own code
pytestmark = [
    pytest.mark.filterwarnings("ignore:Setting a value on a Series via .at"),
    pytest.mark.filterwarnings("ignore:Setting an item of incompatible dtype"),
]


@pytest.fixture(scope="module")
def placed():
    """Every baseline's point on the evaluation half, the binned front (the LP, which equals
    the MIFPO error front) and the LP front of the unbinned scores at the point's gap."""
    X, y, A, c = synthetic_scores(4000, seed=1)
    train, test = np.arange(2000), np.arange(2000, 4000)
    baselines = fit_baselines(X[train], y[train], A[train], [0.0, 10.0], [EPS], True)
    front = MIFPO(solver="lp", n_bins=10).fit(c[test], A[test])
    exact = bin_scores(c[test], A[test], 2, "exact")
    rows = []
    for base in baselines:
        p = base.positive(X[test], A[test])
        row = baseline_points(p, y[test], A[test], front, n_boot=100, seed=0)
        row["exact front"] = 1.0 - lp_error(exact, np.array([row["gap"]]))[0]
        row["expected acc"] = np.mean(p * c[test] + (1 - p) * (1 - c[test]))
        p_train = base.positive(X[train], A[train])
        row["train gap"] = abs(p_train[A[train] == 1].mean() - p_train[A[train] == 0].mean())
        rows.append((base, p, row))
    return rows, (y[test], A[test]), float(A[train].mean())


def test_every_baseline_is_fitted_once_per_level(placed):
    rows, _, _ = placed
    names = [(base.method, base.level) for base, _, _ in rows]
    assert names == [
        ("DP-penalised LR", "lambda=0"),
        ("DP-penalised LR", "lambda=10"),
        ("ExponentiatedGradient", "eps=0.05"),
        ("ThresholdOptimizer", "DP"),
    ]
    for base, p, _ in rows:
        assert base.cpu_seconds >= 0 and p.min() >= 0 and p.max() <= 1


def test_no_baseline_expects_more_than_the_unbinned_front(placed):
    # the LP over the exact scores ranges over every randomised group-aware rule on them, and
    # X = (logit c, A) holds nothing more: the accuracy a point's predictions expect given the
    # scores is at most that front at its gap (up to the LP's tolerance)
    rows, _, _ = placed
    for base, _, row in rows:
        assert row["expected acc"] <= row["exact front"] + 1e-6, base


def test_no_baseline_lies_above_the_front_beyond_its_standard_error(placed):
    # the reproduction flags a point when its realised excess over the binned front exceeds
    # the bootstrap SE of that excess
    rows, _, _ = placed
    for base, _, row in rows:
        assert row["SE"] > 0
        assert row["excess"] <= row["SE"], (base.method, base.level, row)


def test_the_unconstrained_model_reaches_the_front(placed):
    # lambda = 0 is a well-specified logistic model of logit(c): the Bayes rule, which the
    # front attains at its gap (so the front is tight, not only an upper bound)
    rows, _, _ = placed
    row = rows[0][2]
    assert row["expected acc"] >= row["exact front"] - 2e-3
    assert rows[1][2]["gap"] < 0.25 * row["gap"]  # the parity penalty closes the gap


def test_fairlearn_keeps_its_parity_constraints_on_the_training_half(placed):
    rows, _, alpha = placed
    eg, to = rows[2][2], rows[3][2]
    # DemographicParity bounds |P(Yhat=1 | A=a) - P(Yhat=1)| <= eps for both groups, hence the
    # gap between the groups by eps / max(alpha, 1 - alpha); slack for EG's approximate solve
    assert eg["train gap"] <= EPS / max(alpha, 1 - alpha) + 5e-3
    assert to["train gap"] <= 1e-3  # exact parity on its own training data


def test_points_agree_with_fairlearn_and_sklearn_metrics(placed):
    rows, (y, A), _ = placed
    _, p, row = rows[1]  # hard 0/1 predictions
    assert row["accuracy"] == pytest.approx(accuracy_score(y, p), abs=1e-12)
    assert row["gap"] == pytest.approx(
        demographic_parity_difference(y, p, sensitive_features=A), abs=1e-12
    )
