"""Benchmark (CPU, numpy only): ``sqmarket bench [--quick] [--out DIR]``.

1. One trade (``trade`` on a live market, ledger included) per market type against the number of
   outcomes n: trades per second and the log-log slope over n >= 1000, where the O(n log n)
   projection (or the O(n) softmax) dominates the fixed per-call cost.
2. 200 markets x 200 traders x 4 market types (SQPM-l2, SQPM-linf, LMSR, QMSR; n = 5,
   price-learning Bayesian traders): :func:`sqmarket.simulate_batch` (vectorised over the markets)
   against :func:`sqmarket.simulate` called market by market with trader objects (timed on a
   subset, per market), target < 10 s for the batch.
3. Adversarial checks: :func:`sqmarket.replay_batch` over S random sequences (50 trades, n = 5)
   against a per-sequence loop of ``SQPM.trade``, per sequence.

Ratios come from one run. The targets are this package's (the paper states no timings).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from paperkit import Claim, Measurement, Report, measure, plot_scaling, print_table, scaling
from sqmarket.dcfmm import LMSR, QuadraticDCFMM
from sqmarket.ledger import Market
from sqmarket.simulation import dirichlet_world, replay_batch, simulate, simulate_batch
from sqmarket.sqpm import SQPM
from sqmarket.traders import MyopicTrader

__all__ = ["RUNS", "bench"]

#: The sizes of the quick and full runs: outcome counts of the per-trade sweep, markets timed by
#: the per-market loop, sequences replayed in bulk and by the loop, least number of timed calls.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "sizes": [10, 100, 1000, 10_000, 100_000],
        "loop_markets": 5,
        "sequences": 10_000,
        "loop_sequences": 100,
        "repeats": 3,
    },
    False: {
        "sizes": [10, 100, 1000, 10_000, 100_000, 1_000_000],
        "loop_markets": 20,
        "sequences": 10_000,
        "loop_sequences": 500,
        "repeats": 5,
    },
}
#: Targets of this package: seconds for 200 x 200 x 4 batched trades; largest slope of the
#: per-trade time over n >= SLOPE_FROM.
TARGET_BATCH_S = 10.0
TARGET_SLOPE = 1.5  # n log n gives about 1.1 over 1e3..1e6, a quadratic step 2
SLOPE_FROM = 1000
N_SIM, MARKETS, TRADERS = 5, 200, 200


def _markets(n: int) -> dict[str, Market]:
    return {
        "SQPM-l2": SQPM(n, 10.0),
        "SQPM-linf": SQPM(n, 10.0, norm="linf"),
        "LMSR": LMSR(n, 10.0 / n),
        "QMSR": QuadraticDCFMM(n, 10.0),
    }


def _per_trade(sizes: list[int], repeats: int) -> list[Measurement]:
    rows = []
    for n in sizes:
        rng = np.random.default_rng(n)
        r = rng.standard_normal(n)
        for name, market in _markets(n).items():

            def one(m: Market = market, r: np.ndarray = r) -> None:
                m.trade(r)
                m.history_.clear()  # keep the ledger's record from growing with the repeats

            rows.append(
                measure(
                    name, n, one, case="per trade", min_repeats=repeats, min_time=0.1, memory=False
                )
            )
    return rows


def _batch_vs_loop(loop_markets: int) -> tuple[list[Measurement], dict[str, Any]]:
    world = dirichlet_world(N_SIM, MARKETS, TRADERS, 5, seed=0)
    mk = _markets(N_SIM)

    def batch() -> None:
        for market in mk.values():
            simulate_batch(market, world["signals"], world["outcomes"], weights=world["weights"])

    def loop() -> None:
        for market in mk.values():
            for i in range(loop_markets):
                traders = [
                    MyopicTrader(world["signals"][i, t], weight=world["weights"][i, t])
                    for t in range(TRADERS)
                ]
                simulate(market, traders, int(world["outcomes"][i]))

    size = f"{MARKETS}x{TRADERS}x4"
    rows = [
        measure(
            "simulate_batch",
            size,
            batch,
            case="simulation",
            min_repeats=1,
            min_time=0,
            max_repeats=3,
            memory=False,
        ),
        measure(
            "simulate (per market)",
            f"{loop_markets}x{TRADERS}x4",
            loop,
            case="simulation",
            min_repeats=1,
            min_time=0,
            max_repeats=1,
            memory=False,
        ),
    ]
    per_market_loop = rows[1].seconds / loop_markets
    info = {
        "batch_s": rows[0].seconds,
        "loop_s_per_market": per_market_loop,
        "loop_s_extrapolated": per_market_loop * MARKETS,
        "speedup": per_market_loop * MARKETS / rows[0].seconds,
    }
    return rows, info


def _adversarial(S: int, S_loop: int, repeats: int) -> tuple[list[Measurement], dict[str, Any]]:
    rng = np.random.default_rng(0)
    trades = 0.5 * rng.standard_t(2, size=(S, 50, N_SIM))
    market = SQPM(N_SIM, 10.0)

    def loop() -> np.ndarray:
        out = np.empty((S_loop, N_SIM))
        for s in range(S_loop):
            m = market.fresh()
            for r in trades[s]:
                m.trade(r)
            out[s] = m.shares_ - m.revenue_
        return out

    rows = [
        measure(
            "replay_batch",
            S,
            lambda: replay_batch(market, trades),
            case="adversarial",
            min_repeats=repeats,
            min_time=0,
        ),
        measure(
            "per-sequence loop",
            S_loop,
            loop,
            case="adversarial",
            min_repeats=1,
            min_time=0,
            max_repeats=2,
            memory=False,
        ),
    ]
    agree = float(np.abs(loop() - replay_batch(market, trades[:S_loop])["loss_by_outcome"]).max())
    info = {
        "batch_s_per_seq": rows[0].seconds / S,
        "loop_s_per_seq": rows[1].seconds / S_loop,
        "speedup": (rows[1].seconds / S_loop) / (rows[0].seconds / S),
        "max_abs_difference": agree,
    }
    return rows, info


def _claims(fits: dict, sim: dict[str, Any], adv: dict[str, Any]) -> list[Claim]:
    slopes = {k: v["slope"] for k, v in fits.items()}
    worst = max(slopes.values())
    no_paper = "no timing in the paper; O(n log n) per trade from the sort-based projection"
    return [
        Claim(
            f"One trade costs O(n log n), not O(n^2): the log-log slope of the time per trade "
            f"over n >= {SLOPE_FROM} is at most {TARGET_SLOPE}",
            paper=no_paper,
            measured=", ".join(f"{k}: {v:.2f}" for k, v in slopes.items()),
            verdict="held" if worst <= TARGET_SLOPE else "not held",
            why="median time of `trade` (ledger included) per size, paperkit.scaling",
        ),
        Claim(
            f"{MARKETS} markets x {TRADERS} traders x 4 market types simulate in under "
            f"{TARGET_BATCH_S:g} s",
            paper="a target of this package",
            measured=f"simulate_batch {sim['batch_s']:.3g} s; the per-market loop would take "
            f"{sim['loop_s_extrapolated']:.3g} s ({sim['speedup']:.1f}x slower)",
            verdict="held" if sim["batch_s"] < TARGET_BATCH_S else "not held",
            why="n = 5, price-learning myopic traders; the loop is timed on a subset of markets "
            "and scaled per market",
        ),
        Claim(
            "Vectorised adversarial checks are faster than a per-sequence loop",
            paper="a target of this package",
            measured=f"{1e6 * adv['batch_s_per_seq']:.3g} us vs {1e6 * adv['loop_s_per_seq']:.3g} "
            f"us per sequence of 50 trades ({adv['speedup']:.0f}x); max |difference| "
            f"{adv['max_abs_difference']:.2g}",
            verdict="held"
            if adv["speedup"] > 1 and adv["max_abs_difference"] < 1e-9
            else "not held",
            why="SQPM-l2, n = 5, heavy-tailed random trades",
        ),
    ]


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Run the three measurements at the sizes of ``RUNS[quick]``; print the tables; write
    ``scaling.png``. ``device`` is always ``"cpu"`` (numpy only)."""
    out = Path(out)
    run = RUNS[quick]
    per_trade = _per_trade(run["sizes"], run["repeats"])
    fits = scaling([r for r in per_trade if r.size >= SLOPE_FROM], case="per trade")
    trade_table = [
        {"n": r.size, "market": r.impl, "us/trade": 1e6 * r.seconds, "trades/s": 1.0 / r.seconds}
        for r in per_trade
    ]
    sim_rows, sim = _batch_vs_loop(run["loop_markets"])
    adv_rows, adv = _adversarial(run["sequences"], run["loop_sequences"], run["repeats"])
    speed = [
        {
            "experiment": "200 markets x 200 traders x 4 types",
            "vectorised s": sim["batch_s"],
            "loop s": sim["loop_s_extrapolated"],
            "speed-up": sim["speedup"],
            "loop measured on": f"{run['loop_markets']} markets x 4 types",
        },
        {
            "experiment": f"{run['sequences']} sequences x 50 trades",
            "vectorised s": adv["batch_s_per_seq"] * run["sequences"],
            "loop s": adv["loop_s_per_seq"] * run["sequences"],
            "speed-up": adv["speedup"],
            "loop measured on": f"{run['loop_sequences']} sequences",
        },
    ]
    slopes = [{"market": k, f"slope over n >= {SLOPE_FROM}": v["slope"]} for k, v in fits.items()]
    print_table(trade_table, title="one trade (ledger included) against n")
    print_table(slopes, title="log-log slope of the time per trade")
    print_table(speed, title="vectorised vs loops (loop times scaled from the subset)")
    fig = plot_scaling(
        per_trade,
        out / "scaling.png",
        case="per trade",
        title="time per trade",
        xlabel="outcomes n",
    )
    return Report(
        claims=_claims(fits, sim, adv),
        tables={"per_trade": trade_table, "slopes": slopes, "vectorised": speed},
        figures=[fig],
        settings={**run, "n_simulation": N_SIM, "markets": MARKETS, "traders": TRADERS},
        measurements=[*per_trade, *sim_rows, *adv_rows],
        data={"simulation": sim, "adversarial": adv},
    )
