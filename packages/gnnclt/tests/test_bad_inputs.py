"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range and resource-sized values listed in ``bad``)."""

import numpy as np

import gnnclt
from gnnclt import CSBMParams, GaussianMixtureSpec, PolyGNNClassifier
from paperkit.testing import BadInputs, Call

PI = np.array([0.4, 0.35, 0.25])
B = np.array([[3.0, 1.0, 1.0], [1.0, 2.5, 1.0], [1.0, 1.0, 2.0]])
U = np.array([[2.0, 0.0], [-1.0, 1.7], [-1.0, -1.7]])
SIGMA = 0.5 * np.eye(2)
P = CSBMParams(PI, B, U, SIGMA)
A6, X6, Z6 = gnnclt.sample_csbm(P, 60, 10.0, seed=0)
DENSE = A6.toarray()
MASK = np.arange(60) % 2 == 0
HUGE = 10**12  # a size whose arrays would need terabytes
NOT_PARAMS = [object(), {"pi": PI}]


def _fitted(clf):
    clf.fit(DENSE, X6, Z6, MASK)


SUITE = BadInputs(
    gnnclt,
    [
        Call(
            CSBMParams,
            pi=PI,
            B=B,
            U=U,
            Sigma=SIGMA,
            shapes={"pi": "K", "B": "K K", "U": "K d", "Sigma": "d d"},
            bad={
                "pi": [np.array([0.5, 0.6, 0.1]), np.array([1.2, -0.1, -0.1])],
                "B": [B + np.triu(np.ones((3, 3)), 1), -B, np.zeros((3, 3))],
                "U": [U[:2]],
                "Sigma": [np.array([[1.0, 0.0], [0.0, -0.5]]), np.array([[1.0, 0.5], [0.0, 1.0]])],
            },
        ),
        Call(
            gnnclt.sample_csbm,
            params=P,
            n=500,
            nu=10.0,
            seed=0,
            bad={"params": NOT_PARAMS, "n": [1, HUGE], "nu": [-1.0, 0.0, 200.0], "seed": [-1]},
        ),
        Call(
            gnnclt.poly_gnn_embed,
            A=DENSE,
            X=X6,
            coeffs=[0.0, 1.0, 2.0],
            shapes={"A": "n n", "X": "n d"},
            bad={"A": [DENSE[:, :5]], "coeffs": [[1.0, 0.0], "abc", 3.0]},
        ),
        Call(
            PolyGNNClassifier,
            k=2,
            C=1.0,
            normalize="nu",
            method="predict",
            prepare=_fitted,
            call={"A": DENSE, "X": X6},
            shapes={"A": "n n", "X": "n d"},
            bad={"k": [0], "C": [0.0, -1.0]},
        ),
        Call(
            PolyGNNClassifier,
            name="PolyGNNClassifier.fit",
            coeffs=[0.5, 0.0, 1.0],
            method="fit",
            call={"A": DENSE, "X": X6, "y": Z6, "train_mask": MASK},
            shapes={"A": "n n", "X": "n d", "y": "n", "train_mask": "n"},
            bad={"coeffs": [[1.0, 0.0]], "y": [np.zeros(60, dtype=int)]},
            accepts={"y": {"negative", "dtype"}},  # labels may be any values
        ),
        Call(
            PolyGNNClassifier,
            name="PolyGNNClassifier.predict_proba",
            method="predict_proba",
            prepare=_fitted,
            call={"A": DENSE, "X": X6},
            shapes={"A": "n n", "X": "n d"},
            bad={"A": [np.zeros((0, 0))]},
        ),
        Call(gnnclt.limit_means, params=P, k=2, bad={"params": NOT_PARAMS, "k": [0, -1]}),
        Call(gnnclt.limit_covariances, params=P, k=2, bad={"params": NOT_PARAMS, "k": [0]}),
        Call(
            gnnclt.limit_mixture,
            params=P,
            k=2,
            nu=50.0,
            centered=False,
            bad={"params": NOT_PARAMS, "k": [0], "nu": [-1.0, 0.0, None]},
        ),
        Call(gnnclt.predicted_collapse, params=P, k=3, bad={"params": NOT_PARAMS, "k": [0]}),
        Call(gnnclt.spectral_gap_ratio, params=P, bad={"params": NOT_PARAMS}),
        Call(
            gnnclt.collapse_ratio,
            means=U,
            bad={"means": [U[:1], np.ones((3, 2))]},
        ),
        Call(
            gnnclt.w1_distance,
            P=np.random.default_rng(0).standard_normal((20, 2)),
            Q=np.random.default_rng(1).standard_normal((30, 2)),
            method="exact",
            n_proj=50,
            seed=0,
            shapes={"P": "n d", "Q": "m d"},
            bad={"P": [np.zeros((3001, 2))], "n_proj": [0, HUGE], "seed": [-1]},
        ),
        Call(
            GaussianMixtureSpec,
            weights=PI,
            means=U,
            covs=np.stack([SIGMA] * 3),
            method="sample",
            call={"n": 10, "rng": 0},
            shapes={"weights": "K", "means": "K d", "covs": "K d d"},
            bad={
                "weights": [np.array([0.5, 0.6, 0.1])],
                "covs": [np.stack([-SIGMA] * 3)],
                "n": [0, HUGE],
                "rng": [-1, "seed"],
            },
        ),
        Call(
            GaussianMixtureSpec,
            name="GaussianMixtureSpec.sample-labels",
            weights=PI,
            means=U,
            covs=np.stack([SIGMA] * 3),
            method="sample",
            call={"n": 4, "rng": 0, "labels": np.array([0, 1, 2, 0])},
            bad={"labels": [np.array([0, 1, 3, 0]), np.array([0, 1])]},
        ),
        Call(
            gnnclt.clt_experiment,
            params=P,
            n=300,
            nus=[5.0],
            ks=[1],
            seeds=1,
            n_points=50,
            n_train=50,
            method="sliced",
            seed=0,
            show_progress=False,
            bad={
                "params": NOT_PARAMS,
                "n": [5, HUGE],
                "nus": [[-1.0], [1000.0], "abc"],
                "ks": [[0], [1.5], "abc"],
                "seeds": [0],
                "n_points": [5],
                "n_train": [1],
                "seed": [-1],
            },
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
