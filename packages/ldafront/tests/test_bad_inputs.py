"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``)."""

import copy

import numpy as np

import ldafront
from ldafront import FrontierLaw, PenalizedModel, SyntheticLDA
from paperkit.testing import BadInputs, Call, fresh

POP = SyntheticLDA.make(0)
X, Y, A, ETA = POP.sample(120, 3)
DELTAS = np.array([0.0, 0.05, 0.1])
HUGE = 10**12
FITTED = ldafront.ScalingLawLDA(
    n_small_unconstrained=3, n_small_penalized=2, epochs=3, n_boot=20
).fit(X, Y, A, scales=[30, 50, 70], model="logistic")
MODEL, _ = ldafront.train_dp_penalized(X, Y, A, 0.0, model="logistic", epochs=3)


def ScalingLawLDA():  # noqa: N802 - stands for the class: a copy of one fitted auditor
    """A fitted auditor (fitting it again for every bad call of a method would be slow)."""
    return copy.deepcopy(FITTED)


def _law(law):
    law.fit(ETA, Y, A)


THREE = {"scores": "n", "y": "n", "A": "n"}
SUITE = BadInputs(
    ldafront,
    [
        Call(
            ldafront.bce,
            scores=ETA,
            y=Y,
            clip=False,
            shapes={"scores": "n", "y": "n"},
            bad={"y": [np.full(120, 2.0)], "scores": [np.full(120, 1.5)]},
        ),
        Call(
            ldafront.dp_gap,
            scores=ETA,
            A=A,
            signed=True,
            shapes={"scores": "n", "A": "n"},
            bad={"A": [np.zeros(120, dtype=int), np.full(120, 2)]},
        ),
        Call(
            ldafront.fisher_term,
            scores=ETA,
            A=A,
            clip=False,
            shapes={"scores": "n", "A": "n"},
            bad={"scores": [np.zeros(120)]},
        ),
        Call(ldafront.binary_entropy, p=0.3, bad={"p": [-0.1, 1.5]}),
        Call(
            ldafront.frontier_law,
            L0=0.4,
            D0=0.2,
            V=0.6,
            deltas=DELTAS,
            bad={"V": [0.0], "D0": [-0.1, 1.5], "L0": [-1.0], "deltas": [np.array([-0.1])]},
        ),
        Call(
            ldafront.shift_bound,
            L0=0.4,
            D0=0.2,
            V=0.6,
            w_max=3.0,
            deltas=DELTAS,
            bad={"w_max": [0.5], "V": [-1.0], "deltas": [np.array([-0.1])]},
        ),
        Call(
            ldafront.chord_bound,
            L0=0.4,
            D0=0.2,
            H=0.6,
            deltas=DELTAS,
            bad={"H": [-0.1], "D0": [2.0], "deltas": [np.array([-0.1])]},
        ),
        Call(
            FrontierLaw,
            method="fit",
            call={"scores": ETA, "y": Y, "A": A, "clip": False},
            shapes=THREE,
            name="FrontierLaw.fit",
            bad={"A": [np.ones(120, dtype=int)], "y": [np.full(120, -1.0)]},
        ),
        Call(
            FrontierLaw,
            method="predict",
            prepare=_law,
            call={"deltas": DELTAS},
            bad={"deltas": [np.array([-0.1])]},
        ),
        Call(
            FrontierLaw,
            method="upper_bound",
            prepare=_law,
            call={"deltas": DELTAS},
            name="FrontierLaw.upper_bound",
            bad={"deltas": [np.array([-0.1])]},
        ),
        Call(ldafront.fair_shift, eta=ETA, A=A, mu=0.3, clip=False, shapes={"eta": "n", "A": "n"}),
        Call(
            ldafront.optimal_fair_postprocess,
            eta_hat=ETA,
            A=A,
            delta=0.05,
            on_infeasible="raise",
            clip=False,
            return_mu=False,
            shapes={"eta_hat": "n", "A": "n"},
            bad={"delta": [-0.1, 1.5, 0.99], "eta_hat": [np.full(120, 1.0)]},
        ),
        Call(
            ldafront.postprocessed_frontier,
            eta_hat=ETA,
            A=A,
            deltas=DELTAS,
            y=Y,
            clip=False,
            shapes={"eta_hat": "n", "A": "n", "y": "n"},
            bad={"deltas": [np.array([-0.1])], "y": [np.full(120, 3.0)]},
        ),
        Call(
            ldafront.fit_power_law,
            scales=np.array([250.0, 500, 1000, 2000]),
            values=np.array([0.5, 0.45, 0.42, 0.41]),
            a_min=0.3,
            shapes={"scales": "k", "values": "k"},
            bad={"scales": [np.array([1.0, 2.0, 3.0, 3.0]), np.array([0.0, 1, 2, 3])]},
        ),
        Call(
            ldafront.empirical_frontier,
            dps=np.array([0.2, 0.1, 0.0]),
            losses=np.array([0.5, 0.51, 0.55]),
            deltas=DELTAS,
            shapes={"dps": "m", "losses": "m"},
            bad={"dps": [np.array([-0.1, 0.1, 0.2])]},
        ),
        Call(
            ldafront.train_dp_penalized,
            X=X,
            y=Y,
            A=A,
            lam=0.1,
            model="mlp",
            hidden=4,
            epochs=2,
            lr=0.01,
            weight_decay=0.0,
            seed=0,
            shapes={"X": "n d", "y": "n", "A": "n"},
            bad={
                "hidden": [0, 10**5],
                "epochs": [0, 10**7],
                "lr": [0.0],
                "seed": [-1],
                "weight_decay": [-1.0],
                "y": [np.zeros(120)],
                "A": [np.ones(120, dtype=int)],
            },
        ),
        Call(
            PenalizedModel,
            kind="logistic",
            params=MODEL.params,
            mean=MODEL.mean,
            scale=MODEL.scale,
            lam=0.0,
            method="predict_proba",
            call={"X": X, "A": A},
            shapes={"X": "n d", "A": "n"},
            bad={"scale": [np.zeros(10)], "params": [[1.0]]},
        ),
        Call(
            PenalizedModel,
            kind="logistic",
            params=MODEL.params,
            mean=MODEL.mean,
            scale=MODEL.scale,
            lam=0.0,
            method="decision_function",
            call={"X": X, "A": A},
            shapes={"X": "n d", "A": "n"},
            name="PenalizedModel.decision_function",
        ),
        Call(
            SyntheticLDA,
            w=POP.w,
            p1=0.3,
            shift=0.8,
            interaction=0.5,
            bias=0.0,
            method="sample",
            call={"n": 5, "rng": 0},
            bad={"w": [np.ones(2)], "p1": [0.0, 1.0], "n": [0, HUGE], "rng": [-1, "s"]},
        ),
        Call(
            SyntheticLDA.make,
            name="SyntheticLDA.make",
            seed=0,
            p1=0.3,
            interaction=0.5,
            bad={"seed": [-1], "p1": [1.0]},
        ),
        Call(
            ScalingLawLDA,
            method="predict_frontier",
            call={"scale": 16000.0, "deltas": DELTAS},
            bad={"scale": [0.0, -1.0], "deltas": [np.array([-0.1])]},
        ),
        Call(
            ScalingLawLDA,
            method="law_at",
            call={"scale": 16000.0},
            name="ScalingLawLDA.law_at",
            bad={"scale": [0.0]},
        ),
        Call(
            ScalingLawLDA,
            method="law_from_audit",
            call={"scale": 16000.0, "loss": np.full(5, 0.45), "dp": np.full(5, 0.15)},
            name="ScalingLawLDA.law_from_audit",
            shapes={"loss": "m", "dp": "m"},
            bad={"scale": [0.0], "loss": [np.full(4, 0.45)], "dp": [np.full(6, 0.1)]},
        ),
        Call(
            ScalingLawLDA,
            method="small_frontier",
            call={"deltas": DELTAS},
            name="ScalingLawLDA.small_frontier",
            bad={"deltas": [np.array([-0.1])]},
        ),
        Call(
            ScalingLawLDA,
            method="lda_test",
            name="ScalingLawLDA.lda_test",
            call={"scale_c": 16000.0, "L_c": 0.4, "D_c": 0.19, "scores": ETA, "y": Y, "A": A},
            shapes=THREE,
            bad={"scale_c": [0.0], "L_c": [-0.1], "D_c": [1.5], "A": [np.ones(120, dtype=int)]},
        ),
        Call(
            ldafront.ScalingLawLDA,
            name="ScalingLawLDA.fit",
            n_small_unconstrained=3,
            n_small_penalized=2,
            tau=0.002,
            eps=0.02,
            hidden=4,
            epochs=2,
            lr=0.01,
            weight_decay=0.0,
            holdout=0.3,
            n_boot=20,
            repeats=1,
            v_per_scale=False,
            L0_floor=0.1,
            random_state=0,
            method="fit",
            call={
                "X": X,
                "y": Y,
                "A": A,
                "scales": [30, 50, 70],
                "model": "logistic",
                "eval_data": fresh(lambda: (X, Y, A)),
            },
            shapes={"X": "n d", "y": "n", "A": "n"},
            bad={
                "n_small_unconstrained": [2],
                "n_small_penalized": [0],
                "tau": [-0.1],
                "eps": [1.5],
                "hidden": [0],
                "epochs": [0],
                "lr": [0.0],
                "weight_decay": [-1.0],
                "holdout": [0.0, 1.0],
                "n_boot": [0],
                "repeats": [0, 101],
                "v_per_scale": ["yes"],
                "random_state": [-1],
                "scales": [[30, 50], [0, 50, 70], [30, 50, 500], [30.5, 50, 70], [30, 50, 60, 70]],
                "eval_data": [(X, Y), "data", (X[:, :3], Y, A)],
            },
        ),
    ],
)
test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
