"""Benchmark: the cost of a front (CPU; cvxpy + DCCP, so the package has no GPU code).

``fairpareto bench [--quick]`` records :class:`paperkit.Measurement` rows (median wall seconds per
call, ``paperkit.measure``, and the median CPU seconds of the process in ``params``; the claims use
the CPU seconds, which the load of a shared machine does not inflate) on random binned instances
(n = m bins, Dirichlet masses, k = 2):

1. one DCCP solve of MIFPO (error, gamma = 0.3, 3 restarts) against the number of bins, with its
   log-log slope (case ``dccp error``), and the log-loss solve (case ``dccp log_loss``);
2. one LP solve (HiGHS) per gamma against the number of bins (case ``lp``);
3. the whole error front (MIFPO, 21 gammas at 10 bins; quick: 11 at 6) against the LP front
   (case ``front``);
4. one training run of each baseline at one trade-off level on 10 000 rows of the synthetic
   data (case ``baseline``): the DP-penalised logistic model (lambda = 10), fairlearn's
   ExponentiatedGradient (eps = 0.05) and ThresholdOptimizer.

Targets of this package (a reference measurement with Clarabel): about 0.7 s per DCCP restart
at 10 bins, a 21-gamma error front in about 45 s, an LP under 10 ms per gamma.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np

from fairpareto.baselines import fit_baselines
from fairpareto.binning import GroupBins
from fairpareto.data import synthetic_scores
from fairpareto.estimator import MIFPO
from fairpareto.lp import lp_error
from fairpareto.program import solve_mifpo
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

__all__ = ["RUNS", "bench", "random_bins"]

#: Sizes of the quick (``True``) and full (``False``) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"dccp_bins": [2, 3, 4, 6], "lp_bins": [4, 10, 50, 200], "front_bins": 6,
           "front_gammas": 11, "logloss_bins": 4, "repeats": 1, "baseline_rows": 10_000},
    False: {"dccp_bins": [2, 3, 4, 6, 8, 10], "lp_bins": [4, 10, 50, 200, 1000],
            "front_bins": 10, "front_gammas": 21, "logloss_bins": 6, "repeats": 3,
            "baseline_rows": 10_000},
}  # fmt: skip
RESTARTS = 3
#: One trade-off level of each baseline (arguments of :func:`fit_baselines`).
BASELINE_LEVELS = {
    "DP-penalised LR": {"lambdas": [10.0]},
    "ExponentiatedGradient": {"bounds": [0.05]},
    "ThresholdOptimizer": {"threshold_optimizer": True},
}
TARGETS = {"restart_s": 0.7, "front_s": 45.0, "lp_s": 0.01}


def random_bins(n: int, seed: int = 0) -> GroupBins:
    """A random binned instance: n = m sorted uniform levels, Dirichlet(1) masses, alpha in
    [0.2, 0.8]."""
    rng = np.random.default_rng(seed)
    return GroupBins(
        np.sort(rng.uniform(size=n)),
        rng.dirichlet(np.ones(n)),
        np.sort(rng.uniform(size=n)),
        rng.dirichlet(np.ones(n)),
        float(rng.uniform(0.2, 0.8)),
    )


def _timed(impl: str, size: Any, fn: Any, case: str, repeats: int, **timer: Any) -> Measurement:
    """``paperkit.measure``: wall time and the median CPU seconds of this process per call
    (``cpu_seconds``; on a shared machine the wall time grows with the load, the CPU time of a
    single-threaded solve does not)."""
    options = {"warmup": 0, "min_time": 0.0, "min_repeats": repeats, **timer}
    return measure(impl, size, fn, case=case, memory=False, **options)


def bench(*, quick: bool = False, device: str = "cpu", out: Path | None = None) -> Report:
    """Run the benchmark (see the module docstring); ``device`` must be ``"cpu"``."""
    cfg = RUNS[bool(quick)]
    out = Path(out if out is not None else ".")
    reps = cfg["repeats"]
    solve_mifpo(random_bins(2), 0.3)  # imports cvxpy and dccp outside the timings
    rows: list[Measurement] = []
    for n in progress(cfg["dccp_bins"], "DCCP vs bins"):
        bins = random_bins(n, seed=n)
        rows.append(_timed("dccp", n, lambda b=bins: solve_mifpo(b, 0.3), "dccp error", reps))
    ll = random_bins(cfg["logloss_bins"], seed=1)
    rows.append(
        _timed("dccp", ll.n, lambda: solve_mifpo(ll, 0.3, "log_loss"), "dccp log_loss", reps)
    )
    for n in cfg["lp_bins"]:
        bins = random_bins(n, seed=n)
        lp_fn = lambda b=bins: lp_error(b, np.array([0.3]))  # noqa: E731
        rows.append(_timed("lp", n, lp_fn, "lp", 5, min_time=0.2))
    fb = random_bins(cfg["front_bins"], seed=2)
    grid = np.linspace(0.0, 1.0, cfg["front_gammas"])
    u, U, v, V, a = fb.u, fb.U, fb.v, fb.V, fb.alpha
    rows.append(
        _timed("dccp", fb.n, lambda: MIFPO(gammas=grid).fit_bins(u, U, v, V, a), "front", 1)
    )
    rows.append(_timed("lp", fb.n, lambda: lp_error(fb, grid), "front", 5, min_time=0.2))
    n_rows = cfg["baseline_rows"]
    X, y, A, _ = synthetic_scores(2 * n_rows, seed=0)  # the training half of a reproduction
    X, y, A = X[:n_rows], y[:n_rows], A[:n_rows]
    for impl, level in BASELINE_LEVELS.items():
        fit = lambda level=level: fit_baselines(X, y, A, **level)  # noqa: E731
        rows.append(_timed(impl, n_rows, fit, "baseline", reps))

    cpu_rows = [replace(r, seconds=r.cpu_seconds) for r in rows]
    fit = scaling(cpu_rows, case="dccp error")["dccp"]
    lp_fit = scaling(cpu_rows, case="lp")["lp"]
    per_restart = fit["seconds"][-1] / RESTARTS
    front = {r.impl: r.seconds for r in cpu_rows if r.case == "front"}
    lp_per_gamma = max(r.seconds for r in cpu_rows if r.case == "lp" and r.size <= 10)
    base = {r.impl: r.seconds for r in cpu_rows if r.case == "baseline"}
    levels = ", ".join(f"{impl} {sec:.2f} s" for impl, sec in base.items())
    table = [
        {"case": r.case, "impl": r.impl, "bins / rows": r.size, "CPU s": c.seconds,
         "wall s": r.seconds, "wall spread": r.spread, "calls": r.repeats}
        for r, c in zip(rows, cpu_rows, strict=True)
    ]  # fmt: skip
    print_table(table, title="fairpareto bench (median per call: CPU and wall seconds)")
    biggest = fit["sizes"][-1]
    claims = [
        Claim(
            "One DCCP restart of MIFPO takes under a second at 10 bins (800 variables)",
            f"target: about {TARGETS['restart_s']} s per restart (Clarabel)",
            f"{per_restart:.2f} s per restart at {biggest} bins ({fit['seconds'][-1]:.2f} s for "
            f"{RESTARTS} restarts); time ~ bins^{fit['slope']:.2f}",
            "held" if per_restart < 1.0 else "not held",
            "CPU seconds; error measure, gamma = 0.3, k = 2; polynomial growth in the bins",
        ),
        Claim(
            f"The error front over {cfg['front_gammas']} gammas costs seconds to a minute",
            f"target: about {TARGETS['front_s']:g} s for 21 gammas at 10 bins",
            f"MIFPO {front['dccp']:.1f} s, LP {front['lp'] * 1e3:.1f} ms "
            f"({front['dccp'] / front['lp']:.0f}x) at {cfg['front_bins']} bins, "
            f"{front['dccp'] / cfg['front_gammas']:.2f} s per gamma; one training run (one "
            f"level, {cfg['baseline_rows']} rows): {levels}",
            "held" if front["dccp"] < 2 * TARGETS["front_s"] else "not held",
            "CPU seconds of this process (the wall time on the shared machine is in the table); "
            "the LP is exact for the error only",
        ),
        Claim(
            "The exact LP front costs under 10 ms per gamma",
            "target: < 10 ms per gamma",
            f"{lp_per_gamma * 1e3:.2f} ms per gamma at <= 10 bins; time ~ bins^"
            f"{lp_fit['slope']:.2f} up to {lp_fit['sizes'][-1]} bins",
            "held" if lp_per_gamma < TARGETS["lp_s"] else "not held",
            "scipy linprog (HiGHS)",
        ),
    ]
    figure_path = plot_scaling(
        [r for r in cpu_rows if r.case in ("dccp error", "lp")],
        out / "fairpareto_bench.png",
        title="one solve vs bins per group (CPU seconds)",
        xlabel="bins per group (n = m)",
    )
    return Report(
        claims=claims,
        tables={"bench": table},
        figures=[figure_path],
        settings={**cfg, "restarts": RESTARTS, "k": 2, "device": device},
        measurements=rows,
    )
