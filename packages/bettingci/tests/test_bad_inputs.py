"""Every public entry point against the shared bad-input suite (paperkit.testing.BadInputs)."""

import numpy as np

import bettingci
from bettingci import (
    BettingCI,
    Distribution,
    bet_sequence,
    betting_ci,
    clopper_pearson,
    confidence_interval,
    hoeffding,
    log_wealth,
    lower_bound,
    lower_bound_batch,
    maurer_pontil,
    t_test,
    upper_bound,
)
from paperkit.testing import BadInputs, Call

RNG = np.random.default_rng(0)
X1 = RNG.beta(2, 5, 12)  # one sample (n,)
X2 = RNG.beta(2, 5, (3, 12))  # R samples (R, n)
B2 = (RNG.random((3, 12)) < 0.4).astype(float)  # binary samples
MS = np.array([0.1, 0.3, 0.6])
GRID = 50
# grids whose arrays would not fit in memory are refused before any work (check_memory), as is a
# grid below 10 points
BAD_GRID = [9, 10**12]
OPTIONS = dict(grid=GRID, c=1.0, randomize=True, random_state=0)
BAD = {"delta": [0.0, 1.0, -0.1], "grid": BAD_GRID, "c": [0.0, -1.0], "random_state": [-1]}


def _one_sided(fn, x, **extra):
    return Call(fn, x=x, delta=0.05, method="star", **OPTIONS, bad={**BAD, "x": [x + 2]}, **extra)


def _distribution(**kwargs):
    """Distribution with a fixed label: Call's own ``name=`` option takes the keyword ``name``
    (its type check is in test_data.py)."""
    return Distribution("Uniform", **kwargs)


_distribution.__name__ = "Distribution"

SUITE = BadInputs(
    bettingci,
    [
        _one_sided(lower_bound, X1),
        _one_sided(upper_bound, X1),
        _one_sided(confidence_interval, X1),
        Call(
            lower_bound_batch,
            X=X2,
            delta=0.05,
            method="star",
            **OPTIONS,
            bad={**BAD, "X": [X2 - 1]},
        ),
        Call(
            betting_ci,
            x=X1,
            alpha=0.05,
            method="hedged",
            alternative="two-sided",
            bounds=(0.0, 1.0),
            **OPTIONS,
            bad={
                "alpha": [0.0, 1.0],
                "grid": BAD_GRID,
                "bounds": [(1.0, 0.0), (0.0, 0.5, 1.0)],
                "x": [X1 + 1],
            },
            # one sample (n,) or R samples (R, n), by design: the added leading axis is valid
            accepts={"x": {"rank"}},
        ),
        Call(
            BettingCI,
            delta=0.05,
            alternative="greater",
            bounds=(0.0, 1.0),
            **OPTIONS,
            method="fit",
            call={"x": X1},
            bad={"delta": [1.5], "grid": BAD_GRID, "bounds": [(2.0, 1.0)], "x": [X1 - 1]},
        ),
        Call(log_wealth, x=X1, ms=MS, delta=0.05, method="star", c=1.0, bad={"ms": [MS + 1]}),
        Call(bet_sequence, x=X1, ms=MS, delta=0.05, method="bets", c=2.0, bad={"c": [0.0]}),
        Call(hoeffding, X=X2, delta=0.05, bad={"delta": [1.0], "X": [X2 + 1]}),
        Call(maurer_pontil, X=X2, delta=0.05, bad={"delta": [0.0]}),
        Call(t_test, X=X2, delta=0.05, bad={"delta": [-1.0]}),
        Call(clopper_pearson, X=B2, delta=0.05, bad={"X": [X2]}),
        Call(
            _distribution,
            mean=0.5,
            var=1 / 12,
            draw=lambda g, s: g.random(s),
            binary=False,
            bad={"mean": [1.5, -0.1], "var": [-1.0, 0.3], "draw": [None]},
        ),
    ],
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
