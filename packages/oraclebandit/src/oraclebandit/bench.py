"""Benchmark: oracle queries, adaptive rounds and wall time against T (CPU; numpy only).

``oraclebandit bench [--quick]`` records one :class:`paperkit.Measurement` per timing (median
seconds of a whole ``run``, ``paperkit.measure``) on top-m with d = 20, m = 5 (Gaussian rewards,
sigma = 0.3, clipped):

1. ``vs T``: CUCB, AROQ and SROQ with a free oracle at T = 2^10 ... (the queries and adaptive
   rounds of each run in the table), with log-log slopes of the time (``paperkit.scaling``);
2. ``expensive oracle``: the same with ``CountingOracle(delay=1e-4)`` (100 microseconds of busy
   waiting per call, the regime the paper targets), as wall-time ratios to CUCB from one run;
3. the T = 2^15 runs of AROQ and SROQ, whose target is < 3 s.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from oraclebandit.algorithms import AROQ, CUCB, SROQ, DoublingCUCB
from oraclebandit.envs import CorrelatedGaussianSemiBandit, run
from oraclebandit.oracles import CountingOracle, TopMOracle
from oraclebandit.schedules import n_levels
from paperkit import (
    Claim,
    Measurement,
    Report,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["RUNS", "bench"]

D, M = 20, 5
METHODS = {"CUCB": CUCB, "doubling": DoublingCUCB, "AROQ": AROQ, "SROQ": SROQ}
#: Quick and full sizes: log2 T of the sweep, of the expensive-oracle runs, timed repeats.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"log2_T": [10, 11, 12, 13, 15], "expensive_log2_T": 12, "repeats": 1},
    False: {"log2_T": [10, 11, 12, 13, 14, 15], "expensive_log2_T": 13, "repeats": 3},
}
DELAY = 1e-4
TARGET_S = 3.0


def _env() -> CorrelatedGaussianSemiBandit:
    mu = np.random.default_rng(0).uniform(0.2, 0.8, D)
    return CorrelatedGaussianSemiBandit(mu, 0.09 * np.eye(D), seed=0)


def _timed(method: str, T: int, delay: float, case: str, repeats: int) -> Measurement:
    env = _env()
    counts: dict[str, int] = {}

    def once() -> None:
        oracle = CountingOracle(TopMOracle(D, M), delay=delay)
        alg = METHODS[method](D, M, T, oracle, random_state=0)
        res = run(env, alg, T)
        counts.update(queries=oracle.n_calls, rounds=res["n_adaptive_rounds"])

    row = measure(
        method, T, once, case=case, memory=False, warmup=0, min_repeats=repeats, min_time=0
    )
    row.params.update(counts, delay=delay, d=D, m=M)
    return row


def _claims(rows: list[Measurement], expensive_T: int) -> list[Claim]:
    def get(case: str, impl: str, T: int) -> Measurement:
        return next(r for r in rows if (r.case, r.impl, r.size) == (case, impl, T))

    big = max(r.size for r in rows if r.case == "vs T")
    times = {k: get("vs T", k, big).seconds for k in ("AROQ", "SROQ")}
    cucb = get("expensive oracle", "CUCB", expensive_T).seconds
    ratios = {k: cucb / get("expensive oracle", k, expensive_T).seconds for k in ("AROQ", "SROQ")}
    Ts = sorted({r.size for r in rows if r.case == "vs T"})
    sroq_ok = all(get("vs T", "SROQ", T).params["rounds"] == n_levels(T) for T in Ts)
    aroq_q = [get("vs T", "AROQ", T).params["queries"] for T in Ts]
    cucb_q = [get("vs T", "CUCB", T).params["queries"] for T in Ts]
    no_paper = "no timing in the paper; a target of this package"
    return [
        Claim(
            f"With an expensive oracle ({DELAY * 1e6:.0f} us per call) AROQ and SROQ run far "
            "faster than CUCB",
            paper="oracle calls fall from T to O(log log T) rounds",
            measured=f"T = {expensive_T}: CUCB {cucb:.2f} s; speed-up AROQ {ratios['AROQ']:.1f}x, "
            f"SROQ {ratios['SROQ']:.1f}x",
            verdict="held" if min(ratios.values()) > 2 else "not held",
            why="wall time of a whole run, one measurement per method in one bench run; held when "
            "both speed-ups exceed 2x",
        ),
        Claim(
            f"A T = {big} run at d = 20 takes less than {TARGET_S:.0f} s for AROQ and SROQ",
            paper=no_paper,
            measured=f"AROQ {times['AROQ']:.2f} s, SROQ {times['SROQ']:.2f} s",
            verdict="held" if big == 2**15 and max(times.values()) < TARGET_S else "not held",
            why="median wall time of run() with a free oracle, m = 5, on this CPU",
        ),
        Claim(
            "Queries: T for CUCB, O(log log T) for AROQ and SROQ",
            paper="O(log log T) adaptive rounds",
            measured=f"T = {Ts[0]} -> {Ts[-1]}: CUCB {cucb_q[0]} -> {cucb_q[-1]}, AROQ "
            f"{aroq_q[0]} -> {aroq_q[-1]} queries, SROQ rounds "
            f"{get('vs T', 'SROQ', Ts[0]).params['rounds']} -> "
            f"{get('vs T', 'SROQ', Ts[-1]).params['rounds']}",
            verdict="held" if sroq_ok and cucb_q == Ts and max(aroq_q) <= 1 + D * 6 else "not held",
            why="held when SROQ makes ceil(log2 log2 T) + 1 rounds, CUCB T queries, AROQ at most "
            "1 + d (E + 1) (E <= 5 here)",
        ),
    ]


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Run the measurements at the sizes of ``RUNS[quick]``; print the tables, write
    ``scaling_vs_T.png``. ``device`` is always ``"cpu"``."""
    cfg = RUNS[quick]
    Ts = [2**k for k in cfg["log2_T"]]
    rows = [
        _timed(method, T, 0.0, "vs T", cfg["repeats"])
        for T in progress(Ts, "bench vs T")
        for method in METHODS
    ]
    expensive_T = 2 ** cfg["expensive_log2_T"]
    rows += [_timed(m, expensive_T, DELAY, "expensive oracle", 1) for m in METHODS]
    table = [
        {
            "case": r.case,
            "method": r.impl,
            "T": r.size,
            "seconds": r.seconds,
            "queries": r.params["queries"],
            "adaptive rounds": r.params["rounds"],
            "us per round": 1e6 * r.seconds / r.size,
        }
        for r in rows
    ]
    cucb = {r.size: r.seconds for r in rows if r.impl == "CUCB" and r.case == "expensive oracle"}
    for row in table:
        if row["case"] == "expensive oracle":
            row["speed-up vs CUCB"] = cucb[row["T"]] / row["seconds"]
    fits = scaling(rows, case="vs T")
    slopes = [{"method": k, "time slope vs T": v["slope"]} for k, v in fits.items()]
    print_table(table, title=f"top-m d = {D}, m = {M}: whole-run wall time, queries, rounds")
    print_table(slopes, title="log-log slope of the run time against T")
    figures = [plot_scaling(rows, Path(out) / "scaling_vs_T.png", case="vs T", xlabel="T")]
    return Report(
        claims=_claims(rows, expensive_T),
        tables={"runs": table, "slopes": slopes},
        figures=figures,
        settings={**cfg, "d": D, "m": M, "delay": DELAY, "sigma": 0.3, "device": "cpu"},
        measurements=rows,
    )
