"""Every public entry point refuses bad input with a ValueError/TypeError naming the argument."""

import numpy as np

import rccda
from paperkit.testing import BadInputs, Call, fresh
from rccda import (
    AlwaysPolicy,
    DetectorPolicy,
    DriftingDigitsStream,
    GaussianDriftStream,
    LogisticModel,
    MLPModel,
    NeverPolicy,
    PeriodicPolicy,
    RandomPolicy,
    RCCDAPolicy,
)

HUGE = 10**9
STEP = {"loss": 0.7, "cost": 1.0}
STEP_BAD = {"loss": [-0.1], "cost": [0.0, -1.0]}


def _policy_call(cls, name=None, bad=None, accepts=None, **kwargs):
    return Call(
        cls,
        kwargs,
        method="step",
        call=dict(STEP),
        bad={**STEP_BAD, **(bad or {})},
        accepts=accepts,
        name=name,
    )


SUITE = BadInputs(
    rccda,
    [
        _policy_call(
            RCCDAPolicy,
            budget=0.2,
            V=10.0,
            drift_threshold=0.05,
            loss_floor="running_min",
            window=50,
            signal="last",
            cost=1.0,
            bad={
                "budget": [0.0, 1.5, -0.2],
                "V": [0.0, -1.0],
                "drift_threshold": [-0.1],
                "window": [0, HUGE],
                "cost": [0.0, -1.0],
            },
            # a number is a constant floor (documented), so 3 is a valid loss_floor
            accepts={"loss_floor": {"type"}},
        ),
        _policy_call(
            RCCDAPolicy,
            name="RCCDAPolicy-constant-floor",
            budget=0.3,
            loss_floor=0.1,
            bad={"loss_floor": [-1.0, float("nan")]},
        ),
        _policy_call(PeriodicPolicy, budget=0.2, cost=1.0, bad={"budget": [0.0, 2.0]}),
        _policy_call(
            RandomPolicy, budget=0.2, seed=0, cost=1.0, bad={"budget": [0.0], "seed": [-1]}
        ),
        _policy_call(AlwaysPolicy, cost=1.0),
        _policy_call(NeverPolicy, cost=1.0),
        _policy_call(
            DetectorPolicy,
            detector="adwin",
            budget=0.2,
            burst=20,
            gated=True,
            seed=0,
            cost=1.0,
            bad={"budget": [0.0, 1.1], "burst": [0, HUGE], "seed": [-1]},
        ),
        Call(
            rccda.queue_bound,
            V=2.0,
            loss_max=1.0,
            loss_floor=0.0,
            cost_max=1.0,
            bad={"V": [0.0], "loss_max": [-1.0], "loss_floor": [-1.0], "cost_max": [0.0]},
        ),
        Call(
            rccda.budget_bound,
            budget=0.2,
            q_max=3.0,
            T=100,
            bad={"budget": [0.0, 1.5], "q_max": [-1.0], "T": [0]},
        ),
        Call(rccda.make_detector, detector="ddm", seed=0, bad={"seed": [-1]}),
        Call(
            DriftingDigitsStream,
            schedule="gradual",
            T=500,
            batch=8,
            seed=0,
            period=100,
            ramp=50,
            method="batch_at",
            call={"t": 150},
            bad={
                "T": [0, HUGE],
                "batch": [0, HUGE],
                "seed": [-1],
                "period": [0],
                "ramp": [0, 101],
                "t": [-1, 500],
            },
        ),
        Call(
            DriftingDigitsStream,
            name="DriftingDigitsStream.domain",
            schedule="abrupt",
            T=500,
            method="domain",
            call={"t": 3},
            bad={"t": [-1, 500]},
        ),
        Call(
            GaussianDriftStream,
            T=100,
            batch=8,
            seed=0,
            dim=10,
            radius=1.5,
            speed=0.001,
            jump_every=50,
            jump_angle=2.0,
            method="batch_at",
            call={"t": 7},
            bad={
                "T": [0, HUGE],
                "batch": [0, HUGE],
                "seed": [-1],
                "dim": [1, HUGE],
                "radius": [0.0],
                "jump_every": [0],
                "t": [-1, 100],
            },
        ),
        Call(
            rccda.run_stream,
            stream=fresh(lambda: DriftingDigitsStream(T=20, batch=4)),
            model="logreg",
            policy=fresh(lambda: RCCDAPolicy(0.2)),
            lr=0.5,
            local_steps=1,
            seed=0,
            bad={
                "stream": [object()],
                "policy": [object(), None],
                "lr": [0.0, -1.0],
                "local_steps": [0, HUGE],
                "seed": [-1],
            },
        ),
        Call(
            rccda.calibrate_threshold,
            stream=fresh(lambda: GaussianDriftStream(T=20, batch=4)),
            model="logreg",
            lr=0.5,
            seed=0,
            factor=2.0,
            bad={"stream": [object()], "lr": [0.0], "seed": [-1], "factor": [-1.0]},
        ),
        Call(
            rccda.recovery_times,
            acc=np.r_[np.ones(60), np.zeros(5), np.ones(35)],
            drift_points=[60],
            before=50,
            smooth=10,
            level=0.9,
            bad={
                "acc": [np.full(100, 2.0)],
                "drift_points": [[0], [100], [70, 65]],
                "before": [0],
                "smooth": [0],
                "level": [0.0, 1.5],
            },
            accepts={"drift_points": {"empty"}},
        ),  # no drift point, no recovery time
        Call(
            LogisticModel,
            n_features=4,
            n_classes=3,
            seed=0,
            method="evaluate",
            call={"X": np.ones((5, 4)), "y": np.array([0, 1, 2, 0, 1])},
            shapes={"X": "N 4", "y": "N"},
            bad={
                "n_features": [0, HUGE],
                "n_classes": [1, HUGE],
                "seed": [-1],
                "y": [np.array([0, 1, 3, 0, 1])],
            },
        ),
        Call(
            MLPModel,
            n_features=4,
            n_classes=3,
            seed=0,
            width=8,
            method="sgd_step",
            call={"X": np.ones((5, 4)), "y": np.array([0, 1, 2, 0, 1]), "lr": 0.1},
            shapes={"X": "N 4", "y": "N"},
            bad={
                "n_features": [0],
                "n_classes": [1],
                "seed": [-1],
                "width": [0, HUGE],
                "lr": [0.0],
                "y": [np.array([0, 1, 3, 0, 1])],
            },
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
