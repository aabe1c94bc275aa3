"""Class-conditional conformal prediction for multiple inputs by p-value aggregation
(Fermanian, Hebiri, Salmon, NeurIPS 2025, arXiv 2507.07150).

Calibrate on single views; for an instance seen through m views, aggregate the m per-view
class-conditional conformal p-values with a score F whose null law is exact (the sorted counts are
uniform on A_{n,m}), and keep the classes whose aggregated p-value exceeds alpha.

>>> from sklearn.linear_model import LogisticRegression
>>> import numpy as np
>>> from mconformal import GaussianMixture, MultiInputConformalClassifier
>>> rng = np.random.default_rng(0)
>>> data = GaussianMixture.make(n_classes=5, dim=10)
>>> model = LogisticRegression(max_iter=1000).fit(*data.single(100, rng))
>>> clf = MultiInputConformalClassifier(model, alpha=0.1).fit(*data.single(50, rng))
>>> X, y = data.multi(4, 3, rng)
>>> clf.predict_set(X).shape
(4, 5)
"""

from mconformal.aggregators import (
    AGGREGATORS,
    Aggregator,
    aggregated_pvalues,
    clear_null_cache,
    get_aggregator,
    majority_order,
    monte_carlo_pvalue,
)
from mconformal.baselines import (
    BASELINES,
    baseline_sets,
    bonferroni_sets,
    naive_majority_sets,
    score_average_sets,
    single_view_sets,
)
from mconformal.classifier import SCORES, MultiInputConformalClassifier
from mconformal.data import GaussianMixture, PlantNetStyle, digits_split, same_class_views
from mconformal.metrics import class_conditional_coverage, mean_set_size, singleton_rate
from mconformal.nulls import (
    enumerate_null,
    null_order_stat_cdf,
    null_order_stat_pmf,
    null_size,
    null_sum_cdf,
    null_sum_pmf,
    sample_null,
)
from mconformal.pvalues import TIE_BREAKS, ClassCalibration, conformal_counts, conformal_pvalues

__all__ = [
    "AGGREGATORS",
    "BASELINES",
    "SCORES",
    "TIE_BREAKS",
    "Aggregator",
    "ClassCalibration",
    "GaussianMixture",
    "MultiInputConformalClassifier",
    "PlantNetStyle",
    "aggregated_pvalues",
    "baseline_sets",
    "bonferroni_sets",
    "class_conditional_coverage",
    "clear_null_cache",
    "conformal_counts",
    "conformal_pvalues",
    "digits_split",
    "enumerate_null",
    "get_aggregator",
    "majority_order",
    "mean_set_size",
    "monte_carlo_pvalue",
    "naive_majority_sets",
    "null_order_stat_cdf",
    "null_order_stat_pmf",
    "null_size",
    "null_sum_cdf",
    "null_sum_pmf",
    "same_class_views",
    "sample_null",
    "score_average_sets",
    "single_view_sets",
    "singleton_rate",
]
