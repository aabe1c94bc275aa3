"""Every public entry point refuses bad input with a ValueError or TypeError naming the argument
(paperkit's bad-input suite: NaN, inf, empty, wrong rank, mismatched shapes, dtypes, types, and
the out-of-range values listed in ``bad``: b <= 0, p0 outside the simplex, a belief that is not
a distribution, a negative budget, an outcome out of range, sizes too large for memory)."""

import numpy as np

import sqmarket
from paperkit.testing import BadInputs, Call
from sqmarket import (
    LMSR,
    SQPM,
    BudgetTrader,
    BuyOnlyTrader,
    GreedyAdversary,
    MyopicTrader,
    QuadraticDCFMM,
)

N = 4
HUGE = 10**12  # outcomes or markets whose arrays would need terabytes
P0 = np.array([0.1, 0.2, 0.3, 0.4])
BELIEF = np.array([0.4, 0.3, 0.2, 0.1])
NOT_A_DISTRIBUTION = [np.array([0.5, 0.6, 0.0, 0.0]), np.array([1.2, -0.2, 0.0, 0.0])]
R = np.array([1.0, -0.5, 0.25, 2.0])
MARKET_BAD = {"b": [0.0, -1.0], "n_outcomes": [1, HUGE], "p0": NOT_A_DISTRIBUTION}


def _market_calls(cls, **config):
    name = cls.__name__
    bad = {k: v for k, v in MARKET_BAD.items() if k in config}
    if "adaptive_beta" in config:
        bad["adaptive_beta"] = [-0.1]
    calls = [Call(cls, shapes={"p0": str(N)}, bad=bad, **config)]
    methods = {
        "quote": ({"r": R}, {"r": str(N)}, {}),
        "trade": ({"r": R}, {"r": str(N)}, {}),
        "mm_loss": ({"outcome": 1}, {}, {"outcome": [-1, N]}),
        "loss_bound": ({"outcome": 1}, {}, {"outcome": [-1, N]}),
        "myopic_trade": ({"belief": BELIEF}, {"belief": str(N)}, {"belief": NOT_A_DISTRIBUTION}),
        "budget_trade": (
            {"belief": BELIEF, "budget": 0.5},
            {"belief": str(N)},
            {"belief": NOT_A_DISTRIBUTION, "budget": [-1.0]},
        ),
        "buy_only_trade": ({"belief": BELIEF}, {"belief": str(N)}, {"belief": NOT_A_DISTRIBUTION}),
    }
    for method, (call, shapes, bad_call) in methods.items():
        calls.append(
            Call(
                cls,
                name=f"{name}.{method}",
                method=method,
                call=call,
                shapes=shapes,
                bad=bad_call,
                **config,
            )
        )
    return calls


def _trader_call(cls, name=None, method="best_trade", call=None, **kwargs):
    return Call(
        cls,
        name=name or cls.__name__,
        method=method,
        call=call or {"market": SQPM(N, 2.0)},
        bad={"market": ["market", LMSR(N + 1, 1.0)]} | kwargs.pop("bad", {}),
        **kwargs,
    )


WORLD = sqmarket.dirichlet_world(N, n_markets=3, n_traders=5, samples=5, seed=0)

SUITE = BadInputs(
    sqmarket,
    [
        *_market_calls(SQPM, n_outcomes=N, b=10.0, norm="l2", p0=P0, adaptive_beta=0.1),
        *_market_calls(LMSR, n_outcomes=N, b=2.5, p0=P0),
        *_market_calls(QuadraticDCFMM, n_outcomes=N, b=10.0, p0=P0),
        Call(
            sqmarket.project_simplex, v=np.array([0.3, -1.0, 2.0]), accepts={"v": {"rank"}}
        ),  # any leading axes; a 0-D value is refused
        _trader_call(
            MyopicTrader,
            belief=BELIEF,
            weight=1.0,
            bad={"belief": NOT_A_DISTRIBUTION, "weight": [0.0, 1.5]},
        ),
        _trader_call(
            BudgetTrader,
            belief=BELIEF,
            budget=0.5,
            weight=0.5,
            bad={"belief": NOT_A_DISTRIBUTION, "budget": [-1.0], "weight": [0.0]},
        ),
        _trader_call(
            BudgetTrader,
            name="BudgetTrader.numeric_trade",
            method="numeric_trade",
            call={"market": SQPM(N, 2.0), "ftol": 1e-10},
            belief=BELIEF,
            budget=0.2,
            bad={"ftol": [0.0]},
        ),
        _trader_call(BuyOnlyTrader, belief=BELIEF, weight=0.3, bad={"weight": [-0.5]}),
        _trader_call(
            GreedyAdversary,
            outcome=1,
            n_outcomes=N,
            step=0.5,
            bad={"outcome": [-1, N], "n_outcomes": [1, HUGE], "step": [0.0, 1.5]},
        ),
        Call(
            sqmarket.simulate,
            market=SQPM(N, 2.0),
            traders=[MyopicTrader(BELIEF)],
            outcome=1,
            seed=0,
            bad={
                "market": ["market"],
                "traders": [[], "traders", [object()]],
                "outcome": [-1, N, np.array([0.5, 0.6, 0.0, 0.0]), np.array([0.5, 0.5])],
                "seed": [-1],
            },
        ),
        Call(
            sqmarket.simulate_batch,
            market=SQPM(N, 2.0),
            signals=WORLD["signals"],
            outcomes=WORLD["outcomes"],
            weights=WORLD["weights"],
            trader="budget",
            budgets=np.full((3, 5), 0.5),
            shapes={"signals": f"M T {N}", "outcomes": "M", "weights": "M T", "budgets": "M T"},
            bad={
                "market": [P0],
                "signals": [WORLD["signals"] * 2],
                "outcomes": [np.full(3, N)],
                "weights": [np.zeros((3, 5))],
                "budgets": [np.full((3, 5), -1.0), None],
            },
        ),
        Call(
            sqmarket.simulate_batch,
            name="simulate_batch-lmsr",
            market=LMSR(N, 1.0),
            signals=WORLD["beliefs"],
            outcomes=WORLD["outcomes"],
            trader="myopic",
            bad={"signals": [WORLD["signals"]]},
        ),  # zero signals at weight 1 in LMSR
        Call(
            sqmarket.replay_batch,
            market=QuadraticDCFMM(N, 2.0),
            trades=np.random.default_rng(0).standard_normal((3, 5, N)),
            shapes={"trades": f"S T {N}"},
            bad={"market": [None]},
        ),
        Call(
            sqmarket.dirichlet_world,
            n_outcomes=3,
            n_markets=2,
            n_traders=4,
            samples=5,
            seed=0,
            bad={
                "n_outcomes": [1],
                "n_markets": [0, HUGE],
                "n_traders": [0],
                "samples": [0],
                "seed": [-1],
            },
        ),
    ],
    exempt={
        "Market": "the abstract base of SQPM, LMSR and QuadraticDCFMM, whose checks it "
        "holds; constructing it directly is a TypeError"
    },
)

test_bad_input = SUITE.test()
test_every_public_name_is_covered = SUITE.coverage_test()
