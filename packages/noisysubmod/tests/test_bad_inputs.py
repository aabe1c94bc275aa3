"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``), including the documented errors: a negative function
value, an infeasible constraint, sigma < 0, a pool larger than n/2, an unknown base or noise, and
a non-callable f."""

import numpy as np

import noisysubmod
from noisysubmod import (
    Cardinality,
    FacilityLocation,
    GraphCut,
    NoisyOracle,
    PartitionMatroid,
    Unconstrained,
    WeightedCoverage,
)
from paperkit.testing import BadInputs, Call, fresh

F = WeightedCoverage.random(n=12, universe=30, density=0.2, seed=0)
W = np.triu(np.random.default_rng(0).random((6, 6)) < 0.5, 1).astype(float)
W = W + W.T
HUGE = 10**12


class Negative:
    """A 'set function' with a negative value."""

    n = 12
    is_monotone = True

    def __call__(self, S):
        return -1.0


def _noisy():
    return fresh(lambda: NoisyOracle(F, noise="exponential", sigma=1.0, seed=0))


SUITE = BadInputs(
    noisysubmod,
    [
        Call(
            NoisyOracle,
            f=F,
            noise="gaussian",
            sigma=0.5,
            seed=0,
            call={"S": np.array([0, 3])},
            bad={"f": [3.0, Negative(), object()], "sigma": [-1.0], "seed": [-1]},
            accepts={"S": {"empty"}},  # the empty set is a set
        ),
        Call(
            WeightedCoverage,
            incidence=np.ones((3, 4), dtype=bool),
            weights=np.ones(4),
            shapes={"incidence": "n U", "weights": "U"},
            bad={"weights": [-np.ones(4)]},
        ),
        Call(
            WeightedCoverage.random,
            name="WeightedCoverage.random",
            n=10,
            universe=20,
            density=0.1,
            seed=0,
            bad={"n": [0, HUGE], "universe": [0, HUGE], "density": [0.0, 1.5], "seed": [-1]},
        ),
        Call(
            GraphCut, adjacency=W, shapes={"adjacency": "n n"}, bad={"adjacency": [-W, np.triu(W)]}
        ),
        Call(
            FacilityLocation,
            similarity=np.ones((3, 4)),
            bad={"similarity": [-np.ones((3, 4))]},
            accepts={"similarity": {"dtype"}},  # integer similarities are cast
        ),
        Call(Cardinality, k=3, bad={"k": [-1, HUGE]}),
        Call(
            PartitionMatroid,
            blocks=[[0, 1], [2, 3]],
            caps=[1, 2],
            bad={"caps": [[3, 1], [-1, 1], [1]], "blocks": [[[0, 1], [1, 2]], "x"]},
        ),
        Call(Unconstrained),
        Call(
            noisysubmod.greedy,
            f=F,
            constraint=Cardinality(3),
            ground=np.ones(12, dtype=bool),
            shapes={"ground": "12"},
            bad={"f": [3.0, Negative()], "constraint": [Cardinality(13), 3]},
        ),
        Call(
            noisysubmod.double_greedy,
            f=GraphCut(W),
            constraint=Unconstrained(),
            random_state=0,
            bad={"f": ["f"], "constraint": [Cardinality(2)], "random_state": [-1]},
        ),
        Call(
            noisysubmod.measured_continuous_greedy,
            f=F,
            constraint=Cardinality(3),
            eps=0.25,
            n_samples=2,
            random_state=0,
            return_fractional=False,
            bad={"eps": [0.0, 2.0], "n_samples": [0, HUGE], "constraint": [None]},
        ),
        Call(
            noisysubmod.pipage_round,
            x=np.array([0.5, 0.5, 0.2]),
            constraint=Cardinality(2),
            random_state=0,
            bad={"x": [np.array([1.5, 0.0, 0.0]), np.array([1.0, 1.0, 0.5])]},
            accepts={"x": {"dtype"}},  # integer points are cast
        ),
        Call(
            noisysubmod.random_feasible,
            n=12,
            constraint=PartitionMatroid([[0, 1, 2, 3, 4, 5], [6, 7, 8, 9, 10, 11]], [2, 2]),
            random_state=0,
            bad={"n": [0, HUGE], "constraint": ["k"]},
        ),
        Call(
            noisysubmod.brute_force,
            f=F,
            constraint=Cardinality(2),
            bad={"f": [WeightedCoverage.random(n=30, universe=5, density=0.5, seed=0)]},
        ),
        Call(noisysubmod.noise_moments, noise="uniform", sigma=0.5, bad={"sigma": [-0.1]}),
        Call(
            noisysubmod.smoothed_oracle,
            oracle=F,
            bundles=[[10, 11], [9, 11]],
            bad={"oracle": [3.0], "bundles": [[[10, 11], [11, 10]], [[12, 1]], []]},
        ),
        Call(
            noisysubmod.meta_maximize,
            noisy=_noisy(),
            constraint=Cardinality(2),
            base="greedy",
            pool_size=3,
            bundle_size=2,
            n_bundles=3,
            eps=0.1,
            random_state=0,
            pad_output=False,
            bad={
                "noisy": [3.0],
                "constraint": [Cardinality(20), "k"],
                "pool_size": [0, 7],
                "bundle_size": [0, 4],
                "n_bundles": [0, HUGE, "many"],
                "eps": [0.0, 2.0],
                "random_state": [-1],
            },
        ),
    ],
    exempt={
        "SmoothedOracle": "built by smoothed_oracle (covered), which checks its arguments",
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
