"""Efficient PAC learning for realizable-statistic models (RSMs) by convex surrogate ERM
(NeurIPS 2025).

If a statistic T(P(Y|x)) lies in the class {x ↦ λ(Wx + b)} and is elicited by a strongly proper
composite loss ψ with modulus κ, plain surrogate ERM is an efficient PAC learner:
E‖ĝ − g*‖² ≤ 2ε_ψ/κ, and target regret follows through the Bayes decision.

>>> from rsmlearn import RSMClassifier
>>> from rsmlearn.datasets import make_sigmoid_linear
>>> X, y, eta = make_sigmoid_linear(4000, 5, w_norm=2.0)
>>> RSMClassifier(loss="logistic").fit(X, y).n_iter_ < 20
True

The submodules ``losses``, ``datasets``, ``bounds`` and ``ranking`` are public; the estimators
are imported on first use.
"""

import importlib
from typing import TYPE_CHECKING

from paperkit.lazy import lazy_exports

__version__ = "0.1.0"

_MODULES = ("bounds", "datasets", "losses", "ranking")

_getattr, __dir__, _names = lazy_exports(
    __name__,
    {
        "GLMTron": "glmtron",
        "MulticlassRSM": "estimators",
        "MultilabelRSM": "estimators",
        "PairwiseHingeRanker": "ranking",
        "RSMClassifier": "estimators",
        "SubsetRankingRSM": "ranking",
        "project_simplex": "estimators",
    },
)
__all__ = [*_names, *_MODULES]


def __getattr__(name: str):
    if name in _MODULES:
        return importlib.import_module(f"{__name__}.{name}")
    return _getattr(name)


if TYPE_CHECKING:  # the same names for static tools; `x as x` marks a re-export
    from rsmlearn import bounds as bounds
    from rsmlearn import datasets as datasets
    from rsmlearn import losses as losses
    from rsmlearn import ranking as ranking
    from rsmlearn.estimators import MulticlassRSM as MulticlassRSM
    from rsmlearn.estimators import MultilabelRSM as MultilabelRSM
    from rsmlearn.estimators import RSMClassifier as RSMClassifier
    from rsmlearn.estimators import project_simplex as project_simplex
    from rsmlearn.glmtron import GLMTron as GLMTron
    from rsmlearn.ranking import PairwiseHingeRanker as PairwiseHingeRanker
    from rsmlearn.ranking import SubsetRankingRSM as SubsetRankingRSM
