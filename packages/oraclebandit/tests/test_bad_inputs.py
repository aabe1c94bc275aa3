"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``: an infeasible oracle answer or |A| > m, T < 2, mu
outside [0, 1] without clipping, a covariance that is not PSD, an oracle of the wrong signature)."""

import networkx as nx
import numpy as np

import oraclebandit
from oraclebandit import (
    AROQ,
    CUCB,
    SROQ,
    BernoulliSemiBandit,
    CorrelatedGaussianSemiBandit,
    CountingOracle,
    DoublingCUCB,
    MatroidGreedyOracle,
    SemiBanditAlgorithm,
    SemiBanditStats,
    ShortestPathOracle,
    TopMOracle,
)
from paperkit.testing import BadInputs, Call, fresh

D, M = 6, 2
MU = np.linspace(0.2, 0.8, D)
W = np.linspace(0.1, 0.9, D)
MASK = np.array([True, True, False, False, False, False])
NOT_PSD = np.array([[1.0, 2.0], [2.0, 1.0]])


def _all_arms(w):
    return np.ones(D, dtype=bool)  # |A| = 6 > m


class _Infeasible(TopMOracle):
    """A top-2 oracle that answers one arm: its own feasible() refuses the answer."""

    def __call__(self, w):
        return np.array([True] + [False] * (D - 1))


def _two_args(w, extra):
    return np.zeros(D, dtype=bool)


def _floats(w):
    return np.zeros(D)  # not a bool mask


ALG = {"d": D, "m": M, "T": 64, "oracle": TopMOracle(D, M), "random_state": 0}
ALG_BAD = {
    "d": [0],
    "m": [0, D + 1],
    "T": [1, 0],
    "oracle": [object(), _two_args, TopMOracle(D + 1, M)],
    "random_state": [-1],
}
QUERY_BAD = {"oracle": [_all_arms, _Infeasible(D, M), _floats]}  # refused at the first query


def _algorithm(cls, **extra):
    return [
        Call(cls, covariance=False, oracle_kind="linear", bad=ALG_BAD, **ALG, **extra),
        Call(cls, name=f"{cls.__name__}.select", method="select", call={}, bad=QUERY_BAD, **ALG),
        Call(
            cls,
            name=f"{cls.__name__}.update",
            method="update",
            call={"mask": MASK, "x": W},
            shapes={"mask": "6", "x": "6"},
            **ALG,
        ),
    ]


SUITE = BadInputs(
    oraclebandit,
    [
        *_algorithm(CUCB),
        *_algorithm(AROQ),
        *_algorithm(SROQ),
        *_algorithm(DoublingCUCB),
        Call(SemiBanditAlgorithm, bad=ALG_BAD, **ALG),
        Call(
            AROQ,
            name="AROQ-enumerate",
            covariance=True,
            oracle_kind="enumerate",
            actions=TopMOracle(D, M).actions(),
            bad={"oracle_kind": ["linear"], "actions": [np.ones((3, D), dtype=bool)]},
            **ALG,
        ),
        Call(
            SROQ,
            name="SROQ-reward",
            reward=oraclebandit.coverage_reward,
            oracle_kind="enumerate",
            bad={"reward": [3.0], "oracle_kind": ["linear"]},
            **ALG,
        ),
        Call(
            oraclebandit.run,
            env=fresh(lambda: CorrelatedGaussianSemiBandit(MU, 0.01 * np.eye(D))),
            alg=fresh(lambda: AROQ(D, M, 64, TopMOracle(D, M))),
            T=64,
            bad={
                "T": [1, 65],
                "alg": [object()],
                "env": [object(), CorrelatedGaussianSemiBandit(MU[:3], np.eye(3))],
            },
        ),
        Call(
            CorrelatedGaussianSemiBandit,
            mu=MU,
            cov=0.01 * np.eye(D),
            clip=(0.0, 1.0),
            seed=0,
            shapes={"mu": "d", "cov": "d d"},
            bad={
                "cov": [0.01 * np.ones((D, D)) - 0.02 * np.eye(D)],
                "clip": [(1.0, 0.0)],
                "seed": [-1],
            },
        ),
        Call(
            CorrelatedGaussianSemiBandit,
            name="CorrelatedGaussianSemiBandit-unclipped",
            mu=MU[:2],
            cov=np.eye(2),
            clip=None,
            bad={"mu": [np.array([0.5, 1.5]), np.array([-0.1, 0.5])], "cov": [NOT_PSD]},
        ),
        Call(
            CorrelatedGaussianSemiBandit,
            name="CorrelatedGaussianSemiBandit.draws",
            mu=MU,
            cov=0.01 * np.eye(D),
            method="draws",
            call={"n": 5},
            bad={"n": [0, 10**9]},
        ),
        Call(BernoulliSemiBandit, mu=MU, seed=0, bad={"mu": [MU + 0.5], "seed": [-1]}),
        Call(
            BernoulliSemiBandit,
            name="BernoulliSemiBandit.draws",
            mu=MU,
            method="draws",
            call={"n": 5},
            bad={"n": [0]},
        ),
        Call(TopMOracle, d=D, m=M, call={"w": W}, shapes={"w": "6"}, bad={"m": [0, D + 1]}),
        Call(
            MatroidGreedyOracle,
            d=D,
            m=M,
            groups=np.array([0, 0, 0, 1, 1, 1]),
            capacities=np.array([1, 1]),
            call={"w": W},
            shapes={"w": "6", "groups": "6", "capacities": "2"},
            bad={"d": [0], "m": [D + 1]},
        ),
        Call(
            ShortestPathOracle,
            graph=oraclebandit.grid_dag(3, 3),
            source=(0, 0),
            target=(2, 2),
            call={"w": np.linspace(0, 1, 12)},
            shapes={"w": "12"},
            bad={
                "graph": [nx.DiGraph([(0, 1), (1, 0)]), "graph"],
                "source": [(9, 9)],
                "target": [(0, 0), (7, 7)],
            },
        ),
        Call(
            CountingOracle,
            oracle=TopMOracle(D, M),
            delay=0.0,
            call={"w": W},
            shapes={"w": "6"},
            bad={"oracle": [object(), len], "delay": [-1.0, 5.0]},
        ),
        Call(oraclebandit.grid_dag, rows=4, cols=3, bad={"rows": [1], "cols": [0]}),
        Call(
            oraclebandit.coverage_reward,
            mask=MASK,
            w=W,
            shapes={"mask": "d", "w": "d"},
            bad={"w": [W + 1.0]},
        ),
        Call(oraclebandit.linear_reward, mask=MASK, w=W, shapes={"mask": "d", "w": "d"}),
        Call(oraclebandit.aroq_grid, T=1024, m=5, d=20, bad={"T": [1], "m": [0, 21], "d": [0]}),
        Call(oraclebandit.sroq_grid, T=1024, bad={"T": [1]}),
        Call(oraclebandit.n_levels, x=16, bad={"x": [0]}),
        Call(SemiBanditStats, d=3, covariance=True, bad={"d": [0]}),
        Call(
            SemiBanditStats.from_history,
            name="SemiBanditStats.from_history",
            masks=np.ones((4, 3), dtype=bool),
            X=np.full((4, 3), 0.5),
            covariance=True,
            shapes={"masks": "n d", "X": "n d"},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
