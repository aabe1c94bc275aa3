"""AUROC, average precision and FPR@TPR against scikit-learn and hand-made cases."""

import numpy as np
from sklearn.metrics import average_precision_score, roc_auc_score

from idenergy.metrics import auroc, average_precision, fpr_at_tpr


def test_auroc_matches_sklearn_with_ties_and_flips():
    rng = np.random.default_rng(0)
    for _ in range(5):
        s = rng.integers(0, 6, 200).astype(float)  # many ties
        y = rng.integers(0, 2, 200)
        assert abs(auroc(s, y) - roc_auc_score(y, s)) < 1e-12
        assert abs(auroc(s, 1 - y) - (1 - auroc(s, y))) < 1e-12
        assert abs(average_precision(s, y) - average_precision_score(y, s)) < 1e-12
        c = rng.standard_normal(200)
        assert abs(average_precision(c, y) - average_precision_score(y, c)) < 1e-12


def test_fpr_at_tpr_hand_example():
    # positives 5, 4, 3 and negatives 3.5, 2, 1: TPR 1/3 @5 (FPR 0), 2/3 @4 (0), 1 @3 (1/3)
    s = [5, 4, 3, 3.5, 2, 1]
    y = [1, 1, 1, 0, 0, 0]
    assert fpr_at_tpr(s, y, 0.95) == 1 / 3
    assert fpr_at_tpr(s, y, 0.6) == 0.0
    assert fpr_at_tpr([1, 2, 3, 4, 5, 6], [0, 0, 0, 1, 1, 1]) == 0.0
    assert fpr_at_tpr([6, 5, 4, 3, 2, 1], [0, 0, 0, 1, 1, 1]) == 1.0


def test_label_scores_are_perfect():
    y = np.r_[np.zeros(10), np.ones(7)]
    assert auroc(y, y) == 1.0 and average_precision(y, y) == 1.0 and fpr_at_tpr(y, y) == 0.0
