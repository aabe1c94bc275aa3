"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite)."""

import numpy as np

import ctxbandit
from ctxbandit import (
    CombinatorialAvailabilityEnv,
    Exp4Baseline,
    FiniteActionEnv,
    FullInfoHedge,
    LinUCBBaseline,
    Oracle,
    ReductionBandit,
    UniformPolicy,
)
from paperkit.testing import BadInputs, Call, fresh

A = np.random.default_rng(0).standard_normal((5, 3))
MASK = {"mask": np.array([True, True, False, True]), "k": 2}
HUGE = 10**12
ACTION = ctxbandit.topk_oracle(
    CombinatorialAvailabilityEnv(d=5, k=2, T=10, seed=0).context(0), np.arange(5.0)
)


def _env():
    return fresh(lambda: FiniteActionEnv(d=3, K=4, T=6, seed=0))


def _act(learner, **kw):
    return Call(
        learner,
        name=f"{learner.__name__}.act",
        method="act",
        call={"context": A},
        shapes={"context": "K 3"},
        **kw,
    )


def _fed(alg):
    alg.act(A)


SUITE = BadInputs(
    ctxbandit,
    [
        Call(
            ReductionBandit,
            d=3,
            oracle="finite",
            n_policies=16,
            eta_scale=10.0,
            loss_scale=1.0,
            carry=False,
            random_state=0,
            method="act",
            call={"context": A},
            shapes={"context": "K 3"},
            bad={
                "d": [0, HUGE],
                "n_policies": [7, HUGE],
                "eta_scale": [0.0, -1.0],
                "loss_scale": [0.0],
                "random_state": [-1],
                "oracle": [lambda c: c],
            },
        ),
        Call(
            ReductionBandit,
            name="ReductionBandit.update",
            d=3,
            oracle="finite",
            n_policies=16,
            method="update",
            prepare=_fed,
            call={"loss": 0.5},
        ),
        Call(
            ReductionBandit,
            name="ReductionBandit-rates",
            d=3,
            oracle="finite",
            eta=0.1,
            gamma=0.2,
            reg=0.01,
            horizon=100,
            max_contexts=50,
            design_iters=10,
            bad={
                "gamma": [1.5, -0.1],
                "eta": [0.0],
                "reg": [-1.0],
                "horizon": [0],
                "max_contexts": [0, HUGE],
            },
        ),
        _act(
            Exp4Baseline,
            d=3,
            oracle="finite",
            n_policies=8,
            horizon=10,
            random_state=0,
            bad={"n_policies": [2], "horizon": [0]},
        ),
        _act(
            LinUCBBaseline,
            d=3,
            oracle="finite",
            alpha=1.0,
            reg=1.0,
            bad={"alpha": [-1.0], "reg": [0.0]},
        ),
        _act(UniformPolicy, d=3, oracle="finite", random_state=0, bad={"d": [0]}),
        _act(FullInfoHedge, d=3, oracle="finite", n_policies=8, horizon=10, bad={"horizon": [-1]}),
        Call(Oracle, oracle="topk", bad={"oracle": [3, lambda: None]}),
        Call(
            ctxbandit.finite_oracle,
            context=A,
            theta=np.ones(3),
            shapes={"context": "K d", "theta": "d"},
        ),
        Call(
            ctxbandit.topk_oracle,
            context=MASK,
            theta=np.ones(4),
            shapes={"theta": "4"},
            bad={
                "context": [
                    {"mask": np.array([True, False, False, False]), "k": 2},
                    {"mask": np.ones(4)},
                ]
            },
        ),
        Call(ctxbandit.g_optimal_design, Phi=A, n_iter=10, bad={"n_iter": [-1, HUGE]}),
        Call(ctxbandit.max_leverage, Phi=A, nu=np.full(5, 0.2), shapes={"Phi": "M d", "nu": "M"}),
        Call(
            CombinatorialAvailabilityEnv,
            d=5,
            k=2,
            p_avail=0.6,
            T=10,
            loss="switching",
            noise=0.1,
            seed=0,
            method="loss",
            call={"t": 0, "action": ACTION},
            shapes={"action": "5"},
            bad={
                "k": [0, 6],
                "p_avail": [0.0, 1.5],
                "T": [0, HUGE],
                "noise": [-1.0],
                "seed": [-1],
                "t": [-1, 10],
                "action": [np.ones(5)],
            },
            accepts={"action": {"dtype"}},
        ),
        Call(
            FiniteActionEnv,
            d=3,
            K=4,
            T=6,
            n_sets=2,
            loss="stationary",
            noise=0.0,
            seed=0,
            action_sets=[A, A[:2]],
            bad={"K": [0], "n_sets": [0], "T": [HUGE], "action_sets": [np.ones((2, 2, 3))]},
        ),
        Call(
            ctxbandit.g,
            env=_env(),
            theta=np.ones(3),
            n_contexts=10,
            shapes={"theta": "3"},
            bad={"env": [object()], "n_contexts": [0, HUGE]},
        ),
        Call(
            ctxbandit.pseudo_regret,
            env=_env(),
            actions=np.zeros((6, 3)),
            n_contexts=10,
            shapes={"actions": "6 3"},
            bad={"env": ["env"]},
        ),
        Call(
            ctxbandit.play,
            env=_env(),
            learner=fresh(lambda: UniformPolicy(3, "finite")),
            bad={"env": [None], "learner": [object()]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
