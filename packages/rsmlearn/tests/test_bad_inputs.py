"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import numpy as np

import rsmlearn
from paperkit.testing import BadInputs, Call
from rsmlearn import bounds, datasets, losses, ranking

HUGE = 10**12
X, Y01, _ = datasets.make_sigmoid_linear(40, 3, seed=0)
XM, YM, _ = datasets.make_softmax_linear(60, 3, K=3, seed=0)
XL, YL, _ = datasets.make_multilabel_logistic(40, 3, L=2, seed=0)
XQ, RQ, _ = datasets.make_subset_ranking(30, L=4, d=3, seed=0)
RQ[:, 1] = 1  # graded relevances so that pairs exist in every query
LINEAR = {"fit_intercept": True, "ridge": 1e-6, "max_iter": 50, "tol": 1e-8, "solver": "auto"}
LINEAR_BAD = {"ridge": [-1.0], "max_iter": [0, HUGE], "tol": [0.0, -1.0]}


def _fit(X, y):
    return lambda est: est.fit(X, y)


def _estimator(cls, X, y, yname, shapes, loss, extra_bad=None, **extra):
    bad_y = {yname: [y + 2]}
    calls = [
        Call(
            cls,
            name=f"{cls.__name__}.fit",
            method="fit",
            call={"X": X, yname: y},
            shapes={"X": "n d", yname: shapes},
            bad={**LINEAR_BAD, **bad_y, **(extra_bad or {})},
            loss=loss,
            **LINEAR,
            **extra,
        )
    ]
    for method in ("predict", "predict_statistic"):
        calls.append(
            Call(
                cls,
                name=f"{cls.__name__}.{method}",
                method=method,
                prepare=_fit(X, y),
                call={"X": X},
                shapes={"X": "n 3"},
                loss=loss,
            )
        )
    return calls


RANKING = {"Xq": "q L d", "R": "q L"}

SUITE = BadInputs(
    rsmlearn,
    [
        *_estimator(
            rsmlearn.RSMClassifier,
            X,
            Y01,
            "y",
            "n",
            "logistic",
            {"norm_bound": [0.0, -1.0]},
            norm_bound=5.0,
        ),
        Call(
            rsmlearn.RSMClassifier,
            name="RSMClassifier.predict_proba",
            method="predict_proba",
            prepare=_fit(X, Y01),
            call={"X": X},
            shapes={"X": "n 3"},
        ),
        *_estimator(
            rsmlearn.MulticlassRSM, XM, YM, "y", "n", "squared", {"n_classes": [1]}, n_classes=3
        ),
        *_estimator(rsmlearn.MultilabelRSM, XL, YL, "Y", "n L", "logistic"),
        Call(
            rsmlearn.GLMTron,
            name="GLMTron.fit",
            method="fit",
            call={"X": X, "y": Y01},
            shapes={"X": "n d", "y": "n"},
            n_iter=20,
            val_fraction=0.2,
            random_state=0,
            bad={
                "n_iter": [0, HUGE],
                "val_fraction": [-0.1, 1.0],
                "random_state": [-1],
                "y": [Y01 + 1],
            },
        ),
        Call(
            rsmlearn.GLMTron,
            name="GLMTron.predict",
            method="predict",
            prepare=_fit(X, Y01),
            call={"X": X},
            shapes={"X": "n 3"},
        ),
        Call(
            rsmlearn.SubsetRankingRSM,
            name="SubsetRankingRSM.fit",
            method="fit",
            call={"Xq": XQ, "R": RQ},
            shapes=RANKING,
            loss="squared",
            gain="exp2",
            bad={**LINEAR_BAD, "R": [RQ + 40, RQ + 0.5]},
            **LINEAR,
        ),
        Call(
            rsmlearn.SubsetRankingRSM,
            name="SubsetRankingRSM.ndcg",
            method="ndcg",
            prepare=_fit(XQ, RQ),
            call={"Xq": XQ, "R": RQ},
            shapes={"Xq": "q L 3", "R": "q L"},
        ),
        Call(
            rsmlearn.SubsetRankingRSM,
            name="SubsetRankingRSM.predict_scores",
            method="predict_scores",
            prepare=_fit(XQ, RQ),
            call={"Xq": XQ},
            shapes={"Xq": "q L 3"},
        ),
        Call(
            rsmlearn.PairwiseHingeRanker,
            name="PairwiseHingeRanker.fit",
            method="fit",
            call={"Xq": XQ, "R": RQ},
            shapes=RANKING,
            alpha=1e-4,
            n_iter=20,
            step=1.0,
            bad={"alpha": [-1.0], "n_iter": [0, HUGE], "step": [0.0], "R": [RQ - 5]},
        ),
        Call(
            rsmlearn.PairwiseHingeRanker,
            name="PairwiseHingeRanker.ndcg",
            method="ndcg",
            prepare=_fit(XQ, RQ),
            call={"Xq": XQ, "R": RQ},
            shapes={"Xq": "q L 3", "R": "q L"},
        ),
        Call(
            rsmlearn.PairwiseHingeRanker,
            name="PairwiseHingeRanker.predict_scores",
            method="predict_scores",
            prepare=_fit(XQ, RQ),
            call={"Xq": XQ},
            shapes={"Xq": "q L 3"},
        ),
        Call(rsmlearn.project_simplex, V=np.array([[0.2, 0.9], [1.0, -0.5]])),
        Call(losses.get, name="losses.get", loss="logistic"),
        Call(
            losses.get("softmax_ce").kappa_numeric,
            name="Loss.kappa_numeric",
            grid=20,
            K=3,
            seed=0,
            bad={"grid": [1, HUGE], "K": [1, HUGE]},
        ),
        Call(
            bounds.l2_from_surrogate, excess=0.1, kappa=4.0, bad={"excess": [-1.0], "kappa": [0.0]}
        ),
        Call(
            bounds.binary01_from_surrogate,
            excess=0.1,
            kappa=4.0,
            bad={"excess": [-1.0], "kappa": [-2.0]},
        ),
        Call(
            datasets.make_sigmoid_linear,
            n=10,
            d=3,
            w_norm=3.0,
            seed=0,
            w_seed=0,
            bad={"n": [0, HUGE], "d": [0, HUGE], "w_norm": [-1.0], "seed": [-1], "w_seed": [-1]},
        ),
        Call(
            datasets.make_softmax_linear,
            n=10,
            d=3,
            K=3,
            w_norm=3.0,
            seed=0,
            w_seed=0,
            bad={"n": [0, HUGE], "K": [1, HUGE], "w_norm": [-1.0], "seed": [-1]},
        ),
        Call(
            datasets.make_multilabel_logistic,
            n=10,
            d=3,
            L=2,
            w_norm=3.0,
            seed=0,
            w_seed=0,
            bad={"n": [0, HUGE], "L": [0, HUGE], "d": [0]},
        ),
        Call(
            datasets.make_subset_ranking,
            n_queries=10,
            L=4,
            d=3,
            seed=0,
            w_seed=0,
            bad={"n_queries": [0, HUGE], "L": [0, HUGE], "d": [0], "seed": [-1]},
        ),
        Call(
            datasets.make_misspecified_ranking,
            n_queries=10,
            L=4,
            d=3,
            seed=0,
            w_seed=0,
            bad={"n_queries": [0, HUGE], "L": [0], "d": [HUGE]},
        ),
        Call(
            datasets.true_weights,
            d=3,
            k=2,
            w_norm=1.0,
            w_seed=0,
            bad={"d": [0, HUGE], "k": [0, HUGE], "w_norm": [-1.0], "w_seed": [-1]},
        ),
        Call(ranking.discounts, L=4, bad={"L": [0, HUGE]}),
        Call(ranking.normalised_gains, R=RQ, bad={"R": [RQ - 3]}),
        Call(
            ranking.ndcg_per_query,
            scores=np.random.default_rng(0).random(RQ.shape),
            R=RQ,
            shapes={"scores": "q L", "R": "q L"},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
