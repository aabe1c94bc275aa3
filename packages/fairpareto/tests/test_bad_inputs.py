"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``)."""

import numpy as np
from sklearn.linear_model import LogisticRegression

import fairpareto
from fairpareto import (
    MIFPO,
    bin_scores,
    expected_calibration_error,
    fair_classification_front_lp,
    lower_convex_envelope,
    parity_gap,
    synthetic_scores,
)
from paperkit.testing import BadInputs, Call

RNG = np.random.default_rng(0)
A = np.array([0, 1] * 20)
SCORES = RNG.uniform(size=40)
Y = (RNG.random(40) < SCORES).astype(int)
X = np.column_stack([SCORES, RNG.standard_normal(40)])
GAMMAS = np.array([0.0, 0.5, 1.0])
UNIT_BAD = [np.array([0.2, 1.5]), np.array([-0.1, 0.3])]
SMALL = {"solver": "lp", "n_bins": 2}


def _fit_lp(mf):
    mf.fit(SCORES, A)


def _fit_lr(mf):
    mf.fit_from_estimator(X, Y, A, estimator=LogisticRegression())


SUITE = BadInputs(
    fairpareto,
    [
        Call(
            MIFPO,
            performance="error",
            n_bins=3,
            binning="uniform",
            k=2,
            gammas=GAMMAS,
            solver="lp",
            n_restarts=2,
            random_state=0,
            method="fit",
            call={"scores": SCORES, "A": A, "sample_weight": np.ones(40)},
            shapes={"scores": "N", "A": "N", "sample_weight": "N"},
            bad={
                "gammas": UNIT_BAD,
                "n_bins": [1],
                "k": [0],
                "n_restarts": [0],
                "random_state": [-1],
                "performance": [3.0],
                "scores": [SCORES + 1.0],
                "A": [A + 1, np.zeros(40, int)],
                "sample_weight": [-np.ones(40)],
            },
        ),
        Call(
            MIFPO,
            name="MIFPO.fit_bins",
            method="fit_bins",
            call={
                "u": np.array([0.2, 0.7]),
                "U": np.array([0.5, 0.5]),
                "v": np.array([0.4, 0.6, 0.9]),
                "V": np.array([0.2, 0.3, 0.5]),
                "alpha": 0.4,
            },
            shapes={"u": "n", "U": "n", "v": "m", "V": "m"},
            bad={"alpha": [0.0, 1.0], "U": [np.array([-0.5, 1.5])], "u": UNIT_BAD},
            **SMALL,
        ),
        Call(
            MIFPO,
            name="MIFPO.fit_from_estimator",
            method="fit_from_estimator",
            call={"X": X, "y": Y, "A": A, "estimator": LogisticRegression(), "cv": 3},
            shapes={"X": "N d", "y": "N", "A": "N"},
            bad={"cv": [1], "estimator": [object()], "y": [Y + 2]},
            **SMALL,
        ),
        Call(
            MIFPO,
            name="MIFPO.predict_scores",
            method="predict_scores",
            prepare=_fit_lr,
            call={"X": X, "A": A},
            shapes={"X": "N 2", "A": "N"},
            **SMALL,
        ),
        Call(
            MIFPO,
            name="MIFPO.representation",
            method="representation",
            prepare=_fit_lp,
            call={"gamma": 1.0},
            bad={"gamma": [-0.1, 1.5]},
            solver="lp",
            n_bins=2,
            n_restarts=1,
        ),
        Call(
            fair_classification_front_lp,
            scores=SCORES,
            A=A,
            gammas=GAMMAS,
            n_bins=3,
            binning="quantile",
            shapes={"scores": "N", "A": "N"},
            bad={"gammas": UNIT_BAD, "n_bins": [1], "scores": [SCORES - 1.0]},
        ),
        Call(
            bin_scores,
            scores=SCORES,
            A=A,
            n_bins=3,
            binning="uniform",
            sample_weight=np.ones(40),
            shapes={"scores": "N", "A": "N", "sample_weight": "N"},
            bad={"n_bins": [1], "sample_weight": [-np.ones(40)]},
        ),
        Call(
            parity_gap,
            y_pred=Y,
            A=A,
            shapes={"y_pred": "N", "A": "N"},
            bad={"y_pred": [Y + 1]},
        ),
        Call(
            expected_calibration_error,
            scores=SCORES,
            y=Y,
            n_bins=10,
            shapes={"scores": "N", "y": "N"},
            bad={"n_bins": [0], "y": [Y + 2]},
        ),
        Call(
            lower_convex_envelope,
            gammas=GAMMAS,
            values=np.array([0.3, 0.2, 0.1]),
            shapes={"gammas": "G", "values": "G"},
            bad={"gammas": [GAMMAS[::-1]]},
            accepts={"values": {"nan"}},  # NaN marks a failed solve (documented)
        ),
        Call(
            synthetic_scores,
            n=50,
            alpha=0.3,
            seed=0,
            concentration=4.0,
            bad={"n": [1, 10**12], "alpha": [0.0, 1.0], "seed": [-1], "concentration": [0.0]},
        ),
    ],
    exempt={"GroupBins": "a plain record of levels and masses; MIFPO.fit_bins checks them"},
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
