"""The headline claim at small scale: ``ctxbandit reproduce [--quick] [--seed N] [--out DIR]``.

The paper (arXiv 2508.11931) is theory only: regret Õ(min{d²√T, √(d³T log K)}) with no
dependence on the number of actions K. We test its shape on a generated combinatorial
semi-bandit with stochastic availability (:class:`ctxbandit.envs.CombinatorialAvailabilityEnv`:
d = 10 items, each available with p = 0.6, pick k = 3; switching adversarial losses; observed
loss + N(0, 0.1²)):

1. main grid: pseudo-regret ± SE over seeds at T ∈ {1000, 2000, 4000, 8000} (quick: {500, 1000,
   2000}) of ReductionBandit (c_η = 10, and c_η = 1, and carry=True), Exp4Baseline,
   LinUCBBaseline, UniformPolicy and FullInfoHedge; the log-log slope of the mean regret in T and
   R_T/√T; the full run extends ReductionBandit and uniform play to T = 16000;
2. K sweep: d = 12, every item available, k ∈ {2, 4, 6} (K = 66, 495, 924): R_T/√T, R_T/R_uniform
   and the oracle calls of ReductionBandit (identical across k) against Exp4's.

Every verdict is computed from these numbers (:func:`claims`).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from ctxbandit.bandit import ReductionBandit
from ctxbandit.baselines import Exp4Baseline, FullInfoHedge, LinUCBBaseline, UniformPolicy
from ctxbandit.envs import CombinatorialAvailabilityEnv, play, pseudo_regret
from paperkit import Claim, Report, figure, loglog_slope, print_table, progress, save_figure

__all__ = ["METHODS", "RUNS", "claims", "reproduce", "run_grid"]

#: Sizes of the quick (True) and full (False) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"Ts": [500, 1000, 2000], "seeds": 3, "extend": [], "sweep_T": 1000, "sweep_seeds": 2},
    False: {
        "Ts": [1000, 2000, 4000, 8000],
        "seeds": 5,
        "extend": [16000],
        "sweep_T": 4000,
        "sweep_seeds": 3,
    },
}
ENV = {"d": 10, "k": 3, "p_avail": 0.6, "noise": 0.1}
SWEEP = {"d": 12, "ks": [2, 4, 6], "p_avail": 1.0}
M = 256

Maker = Callable[[int, int, int], Any]  # (d, T, seed) -> learner
#: The methods of the main grid.
METHODS: dict[str, Maker] = {
    "Reduction c=10": lambda d, T, s: ReductionBandit(d, "topk", M, random_state=s, horizon=T),
    "Reduction c=1": lambda d, T, s: ReductionBandit(
        d, "topk", M, eta_scale=1.0, random_state=s, horizon=T
    ),
    "Reduction carry": lambda d, T, s: ReductionBandit(
        d, "topk", M, carry=True, random_state=s, horizon=T
    ),
    "Exp4": lambda d, T, s: Exp4Baseline(d, "topk", M, horizon=T, random_state=s),
    "LinUCB": lambda d, T, s: LinUCBBaseline(d, "topk", random_state=s),
    "Uniform": lambda d, T, s: UniformPolicy(d, "topk", random_state=s),
    "FullInfoHedge": lambda d, T, s: FullInfoHedge(d, "topk", M, horizon=T, random_state=s),
}
EXTENDED = ("Reduction c=10", "Reduction c=1", "Uniform")
SWEPT = ("Reduction c=10", "Exp4", "Uniform")


def _run(method: str, T: int, seed: int, env_kw: dict[str, Any]) -> dict[str, Any]:
    env = CombinatorialAvailabilityEnv(T=T, seed=seed, **env_kw)
    start = time.perf_counter()
    alg = play(env, METHODS[method](env.d, T, seed))
    return {
        "regret": pseudo_regret(env, alg.history_actions_),
        "seconds": time.perf_counter() - start,
        "calls": alg.n_oracle_calls_,
    }


def _summary(method: str, T: int, runs: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    r = np.array([x["regret"] for x in runs])
    se = r.std(ddof=1) / math.sqrt(r.size) if r.size > 1 else 0.0
    return {
        "method": method,
        **extra,
        "T": T,
        "regret": float(r.mean()),
        "SE": float(se),
        "R/sqrtT": float(r.mean() / math.sqrt(T)),
        "oracle calls": int(np.mean([x["calls"] for x in runs])),
        "s/run": float(np.mean([x["seconds"] for x in runs])),
    }


def run_grid(
    methods: tuple[str, ...], Ts: list[int], seeds: list[int], env_kw: dict[str, Any], label: str
) -> list[dict[str, Any]]:
    """Mean regret ± SE of each method at each T over the seeds (one row per method and T)."""
    jobs = [(m, T) for T in Ts for m in methods]
    rows = []
    for m, T in progress(jobs, label):
        rows.append(_summary(m, T, [_run(m, T, s, env_kw) for s in seeds]))
    return rows


def _slope(rows: list[dict[str, Any]], method: str) -> float | None:
    pts = sorted((r["T"], r["regret"]) for r in rows if r["method"] == method)
    if len(pts) < 2 or min(v for _, v in pts) <= 0:
        return None
    return loglog_slope([t for t, _ in pts], [v for _, v in pts])


def _fmt(x: float | None) -> str:
    return "undefined (R_T ≤ 0)" if x is None else f"{x:.2f}"


def claims(grid: list[dict], slopes: dict[str, Any], sweep: list[dict], Ts: list[int]) -> list:
    """The claims and their verdicts, computed from the rows."""
    last = {r["method"]: r for r in grid if r["T"] == max(Ts)}
    s10, s1, su, sl, se4 = (
        slopes.get(m) for m in ("Reduction c=10", "Reduction c=1", "Uniform", "LinUCB", "Exp4")
    )
    out = []
    ok = s10 is not None and s10 <= 0.65
    part = s10 is not None and s10 <= 0.75
    out.append(
        Claim(
            "ReductionBandit's regret grows like √T (paper: Õ(min{d²√T, √(d³T log K)}))",
            paper="slope 0.5 (theory; no experiments in the paper)",
            measured=f"log-log slope {_fmt(s10)} over T={Ts}; R_T/√T at T={max(Ts)}: "
            f"{last['Reduction c=10']['R/sqrtT']:.2f}; uniform slope {_fmt(su)}",
            verdict="held" if ok else ("partly" if part else "not held"),
            why="c_η = 10 (tuned); held means slope ≤ 0.65, partly ≤ 0.75",
        )
    )
    worse = last["Reduction c=1"]["regret"] > last["Reduction c=10"]["regret"]
    out.append(
        Claim(
            "With the worst-case rate (c_η = 1) the √T shape is not yet visible at these T",
            paper="η° = √(log M/(3 d T_k)) is the theory rate; constants are pre-asymptotic",
            measured=f"slope {_fmt(s1)}, R_T = {last['Reduction c=1']['regret']:.1f} vs "
            f"{last['Reduction c=10']['regret']:.1f} (c_η = 10) at T = {max(Ts)}",
            verdict="held" if (s1 is not None and s1 >= 0.75 and worse) else "not held",
            why="our check of the constant: held means slope ≥ 0.75 and more regret than c_η = 10",
        )
    )
    lin = [s for s in (su, sl) if s is not None and s >= 0.9]
    out.append(
        Claim(
            "Uniform play and LinUCB (stochastic-loss assumption) have linear regret",
            paper="expected of non-adversarial methods (no numbers in the paper)",
            measured=f"slopes: uniform {_fmt(su)}, LinUCB {_fmt(sl)} (LinUCB R_T at T={max(Ts)}: "
            f"{last['LinUCB']['regret']:.1f})",
            verdict="held" if len(lin) == 2 else ("partly" if lin else "not held"),
            why="linear means slope ≥ 0.9; LinUCB's ridge estimate is the running mean of the "
            "losses, whose greedy policy is the comparator here, so it can match or beat it",
        )
    )
    exp4 = [r for r in sweep if r["method"] == "Exp4"]
    red = [r for r in sweep if r["method"] == "Reduction c=10"]
    e_ratio = [r["R/R_uniform"] for r in exp4]
    r_ratio = [r["R/R_uniform"] for r in red]
    grows = all(b > a for a, b in zip(e_ratio, e_ratio[1:], strict=False))
    below = all(a < b for a, b in zip(r_ratio, e_ratio, strict=True))
    out.append(
        Claim(
            "EXP4 over the same net pays √K, the reduction does not depend on K",
            paper="√(T K log M) for EXP4 vs no K in the reduction's bound",
            measured="R/R_uniform for K = 66, 495, 924: Exp4 "
            + ", ".join(f"{x:.2f}" for x in e_ratio)
            + "; reduction "
            + ", ".join(f"{x:.2f}" for x in r_ratio)
            + f"; Exp4 slope in T {_fmt(se4)}",
            verdict="held" if grows and below else ("partly" if below or grows else "not held"),
            why="held: Exp4's regret relative to uniform rises with K and stays above the "
            "reduction's at every K (regret itself is not compared across k: the loss gaps change)",
        )
    )
    calls = {r["k"]: r["oracle calls"] for r in red}
    same = len(set(calls.values())) == 1
    out.append(
        Claim(
            "The reduction needs no enumeration of A_t: identical oracle calls for every K",
            paper="poly(d, T) time, independent of K",
            measured=f"oracle calls per run by k: {calls}; Exp4 also enumerates the K actions",
            verdict="held" if same else "not held",
            why="structural check over the K sweep (same T and seeds)",
        )
    )
    carry_worse = last["Reduction carry"]["regret"] > last["Reduction c=10"]["regret"]
    out.append(
        Claim(
            "Restarting q each epoch beats carrying all past estimates (carry=True)",
            paper="standard doubling restart (our choice; the paper's learner is continuous)",
            measured=f"R_T at T={max(Ts)}: restart {last['Reduction c=10']['regret']:.1f}, "
            f"carry {last['Reduction carry']['regret']:.1f}",
            verdict="held" if carry_worse else "not held",
            why="early epochs' estimates (few contexts, nearly singular Σ̂) have huge variance",
        )
    )
    return out


def _sweep(T: int, seeds: list[int]) -> list[dict[str, Any]]:
    rows = []
    for k in progress(SWEEP["ks"], "K sweep"):
        env_kw = {"d": SWEEP["d"], "k": k, "p_avail": SWEEP["p_avail"], "noise": ENV["noise"]}
        K = math.comb(SWEEP["d"], k)
        here = {m: _summary(m, T, [_run(m, T, s, env_kw) for s in seeds], k=k, K=K) for m in SWEPT}
        for m in SWEPT:
            here[m]["R/R_uniform"] = here[m]["regret"] / here["Uniform"]["regret"]
            rows.append(here[m])
    return rows


def _plot(grid: list[dict], sweep: list[dict], out: Path) -> Path:
    fig, axes = figure(1, 2, size=(10, 4))
    ax, bx = axes[0]
    for m in dict.fromkeys(r["method"] for r in grid):
        rows = sorted((r for r in grid if r["method"] == m), key=lambda r: r["T"])
        ax.errorbar(
            [r["T"] for r in rows],
            [max(r["regret"], 1e-1) for r in rows],
            yerr=[r["SE"] for r in rows],
            marker="o",
            label=m,
            capsize=2,
        )
    Ts = sorted({r["T"] for r in grid})
    ref = next(r["regret"] for r in grid if r["method"] == "Reduction c=10" and r["T"] == Ts[0])
    ax.plot(Ts, [ref * math.sqrt(t / Ts[0]) for t in Ts], "k--", label="√T reference")
    ax.set(
        xscale="log",
        yscale="log",
        xlabel="T",
        ylabel="pseudo-regret",
        title="d=10, k=3, p=0.6, switching losses",
    )
    ax.legend(fontsize="x-small")
    for m in SWEPT:
        rows = [r for r in sweep if r["method"] == m]
        bx.plot([r["K"] for r in rows], [r["R/R_uniform"] for r in rows], marker="o", label=m)
    bx.set(xscale="log", xlabel="K = C(12, k)", ylabel="R_T / R_uniform", title="K sweep")
    bx.legend(fontsize="small")
    return save_figure(fig, out / "ctxbandit.png")


def reproduce(*, quick: bool = False, seed: int = 0, out: str | Path = ".") -> Report:
    """Run the main grid and the K sweep; return the claims, tables and figure."""
    cfg = RUNS[quick]
    out = Path(out)
    seeds = [seed + i for i in range(cfg["seeds"])]
    grid = run_grid(tuple(METHODS), cfg["Ts"], seeds, ENV, "main grid")
    slopes = {m: _slope(grid, m) for m in METHODS}
    extended = run_grid(EXTENDED, cfg["extend"], seeds, ENV, "extended T") if cfg["extend"] else []
    ext_slopes = {m: _slope(grid + extended, m) for m in EXTENDED} if extended else {}
    sweep = _sweep(cfg["sweep_T"], [seed + i for i in range(cfg["sweep_seeds"])])
    slope_rows = [
        {"method": m, "slope": s, "slope incl. extended T": ext_slopes.get(m)}
        for m, s in slopes.items()
    ]
    print_table(grid + extended, title="pseudo-regret ± SE over seeds")
    print_table(slope_rows, title="log-log slope of mean regret in T")
    print_table(sweep, title="K sweep (d=12, all items available)")
    report_claims = claims(grid, slopes, sweep, cfg["Ts"])
    return Report(
        claims=report_claims,
        tables={"regret": grid + extended, "slopes": slope_rows, "k_sweep": sweep},
        figures=[_plot(grid + extended, sweep, out)],
        settings={
            **cfg,
            **ENV,
            "sweep": SWEEP,
            "n_policies": M,
            "seeds": seeds,
            "eta_scale": 10.0,
            "quick": quick,
        },
    )
