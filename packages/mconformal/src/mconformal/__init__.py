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

The public names are imported on first use (importing ``mconformal`` imports no scikit-learn).
"""

from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

__getattr__, __dir__, __all__ = lazy_exports(
    __name__,
    {
        "AGGREGATORS": "aggregators",
        "Aggregator": "aggregators",
        "BASELINES": "baselines",
        "ClassCalibration": "pvalues",
        "GaussianMixture": "data",
        "MultiInputConformalClassifier": "classifier",
        "PlantNetStyle": "data",
        "SCORES": "classifier",
        "TIE_BREAKS": "pvalues",
        "aggregated_pvalues": "aggregators",
        "baseline_sets": "baselines",
        "bonferroni_sets": "baselines",
        "class_conditional_coverage": "metrics",
        "clear_null_cache": "aggregators",
        "conformal_counts": "pvalues",
        "conformal_pvalues": "pvalues",
        "digits_split": "data",
        "enumerate_null": "nulls",
        "get_aggregator": "aggregators",
        "majority_order": "aggregators",
        "mean_set_size": "metrics",
        "monte_carlo_pvalue": "aggregators",
        "naive_majority_sets": "baselines",
        "null_order_stat_cdf": "nulls",
        "null_order_stat_pmf": "nulls",
        "null_size": "nulls",
        "null_sum_cdf": "nulls",
        "null_sum_pmf": "nulls",
        "same_class_views": "data",
        "sample_null": "nulls",
        "score_average_sets": "baselines",
        "single_view_sets": "baselines",
        "singleton_rate": "metrics",
    },
)

if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from mconformal.aggregators import AGGREGATORS as AGGREGATORS
    from mconformal.aggregators import Aggregator as Aggregator
    from mconformal.aggregators import aggregated_pvalues as aggregated_pvalues
    from mconformal.aggregators import clear_null_cache as clear_null_cache
    from mconformal.aggregators import get_aggregator as get_aggregator
    from mconformal.aggregators import majority_order as majority_order
    from mconformal.aggregators import monte_carlo_pvalue as monte_carlo_pvalue
    from mconformal.baselines import BASELINES as BASELINES
    from mconformal.baselines import baseline_sets as baseline_sets
    from mconformal.baselines import bonferroni_sets as bonferroni_sets
    from mconformal.baselines import naive_majority_sets as naive_majority_sets
    from mconformal.baselines import score_average_sets as score_average_sets
    from mconformal.baselines import single_view_sets as single_view_sets
    from mconformal.classifier import SCORES as SCORES
    from mconformal.classifier import MultiInputConformalClassifier as MultiInputConformalClassifier
    from mconformal.data import GaussianMixture as GaussianMixture
    from mconformal.data import PlantNetStyle as PlantNetStyle
    from mconformal.data import digits_split as digits_split
    from mconformal.data import same_class_views as same_class_views
    from mconformal.metrics import class_conditional_coverage as class_conditional_coverage
    from mconformal.metrics import mean_set_size as mean_set_size
    from mconformal.metrics import singleton_rate as singleton_rate
    from mconformal.nulls import enumerate_null as enumerate_null
    from mconformal.nulls import null_order_stat_cdf as null_order_stat_cdf
    from mconformal.nulls import null_order_stat_pmf as null_order_stat_pmf
    from mconformal.nulls import null_size as null_size
    from mconformal.nulls import null_sum_cdf as null_sum_cdf
    from mconformal.nulls import null_sum_pmf as null_sum_pmf
    from mconformal.nulls import sample_null as sample_null
    from mconformal.pvalues import TIE_BREAKS as TIE_BREAKS
    from mconformal.pvalues import ClassCalibration as ClassCalibration
    from mconformal.pvalues import conformal_counts as conformal_counts
    from mconformal.pvalues import conformal_pvalues as conformal_pvalues
