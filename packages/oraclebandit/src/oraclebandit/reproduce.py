"""The headline experiment at small scale:
``oraclebandit reproduce [--quick] [--seed N] [--out DIR]``.

Settings (synthetic, as the paper's experiments):

(a) top-m, d = 20, m = 5, Gaussian rewards with mu ~ U[0.2, 0.8] (one draw from ``seed``),
    sigma = 0.3, clipped to [0, 1]; independent (``topm-indep``) and equicorrelated rho = 0.6
    (``topm-corr``);
(b) online shortest path on the 4 x 4 grid DAG (24 edges, paths of 6 edges, 20 paths); edge
    rewards 1 - delay with mean ~ U[0.2, 0.8], sigma = 0.3, clipped; networkx Dijkstra oracle
    (``path``, full run only).

Methods: CUCB (a query every round), the doubling baseline (queries before rounds 2^j), AROQ,
SROQ, and their covariance-adaptive versions (``-cov``: the Gaussian-perturbation index on (a),
where C(20, 5) = 15504 actions are too many to enumerate, and the exact enumeration index on (b)).
Per method and horizon T: regret +- s.e. over seeds, oracle queries, adaptive rounds, wall time;
then the log-log regret slope over T and the queries against log log T. The claims are computed
from these rows.
"""

from __future__ import annotations

import math
import os
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from oraclebandit.algorithms import AROQ, CUCB, SROQ, DoublingCUCB
from oraclebandit.envs import CorrelatedGaussianSemiBandit, run
from oraclebandit.oracles import ShortestPathOracle, TopMOracle, grid_dag
from oraclebandit.schedules import n_levels
from paperkit import Claim, Report, figure, print_table, progress, save_figure

__all__ = ["METHODS", "RUNS", "SETTINGS", "claims", "one_run", "reproduce", "summarise"]

#: Method name -> (class, covariance).
METHODS: dict[str, tuple[type, bool]] = {
    "CUCB": (CUCB, False),
    "doubling": (DoublingCUCB, False),
    "AROQ": (AROQ, False),
    "SROQ": (SROQ, False),
    "AROQ-cov": (AROQ, True),
    "SROQ-cov": (SROQ, True),
}
SIGMA = 0.3
#: Setting name -> (kind, equicorrelation rho).
SETTINGS: dict[str, tuple[str, float]] = {
    "topm-indep": ("topm", 0.0),
    "topm-corr": ("topm", 0.6),
    "path": ("path", 0.0),
}
#: Quick (True) and full (False) runs: settings, log2 T values, seeds, worker processes.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "settings": ["topm-indep", "topm-corr"],
        "log2_T": [10, 11, 12, 13],
        "seeds": 3,
        "workers": 2,
    },
    False: {
        "settings": list(SETTINGS),
        "log2_T": [10, 11, 12, 13, 14, 15],
        "seeds": 5,
        "workers": 2,
    },
}
#: The targets of the claims (this package's; the paper states none): regret slopes (CUCB and
#: AROQ, SROQ) and the AROQ/CUCB regret ratio.
SLOPE_LIMIT = {"CUCB": 0.65, "AROQ": 0.65, "SROQ": 0.80}
RATIO_LIMIT = 3.5


def _instance(setting: str, seed: int) -> tuple[Any, ...]:
    """(mu, cov, oracle factory, d, m, covariance index) of a setting."""
    kind, rho = SETTINGS[setting]
    rng = np.random.default_rng([seed, 17])
    if kind == "topm":
        d, m = 20, 5
        make_oracle, index = (lambda: TopMOracle(d, m)), "perturb"
    else:
        graph = grid_dag(4, 4)
        d, m = graph.number_of_edges(), 6
        make_oracle, index = (lambda: ShortestPathOracle(graph)), "enumerate"
    mu = rng.uniform(0.2, 0.8, d)
    cov = SIGMA**2 * ((1 - rho) * np.eye(d) + rho * np.ones((d, d)))
    return mu, cov, make_oracle, d, m, index


def one_run(setting: str, method: str, T: int, seed: int, instance_seed: int) -> dict[str, Any]:
    """One (setting, method, T, seed) run: final regret, queries, adaptive rounds, wall time."""
    mu, cov, make_oracle, d, m, index = _instance(setting, instance_seed)
    cls, covariance = METHODS[method]
    alg = cls(
        d,
        m,
        T,
        make_oracle(),
        covariance=covariance,
        oracle_kind=index if covariance else "linear",
        random_state=seed,
    )
    res = run(CorrelatedGaussianSemiBandit(mu, cov, seed=seed), alg, T)
    return {
        "setting": setting,
        "method": method,
        "T": T,
        "seed": seed,
        "regret": float(res["regret"][-1]),
        "queries": res["n_queries"],
        "rounds": res["n_adaptive_rounds"],
        "wall": res["wall_time"],
    }


def _star(args: tuple) -> dict[str, Any]:
    return one_run(*args)


def summarise(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per (setting, method, T): mean regret, its s.e. over seeds, queries, rounds, wall time."""
    keys = list(dict.fromkeys((r["setting"], r["method"], r["T"]) for r in runs))
    rows = []
    for setting, method, T in keys:
        mine = [r for r in runs if (r["setting"], r["method"], r["T"]) == (setting, method, T)]
        regret = np.array([r["regret"] for r in mine])
        se = regret.std(ddof=1) / math.sqrt(len(regret)) if len(regret) > 1 else 0.0
        rows.append(
            {
                "setting": setting,
                "method": method,
                "T": T,
                "regret": float(regret.mean()),
                "se": float(se),
                "queries": float(np.mean([r["queries"] for r in mine])),
                "rounds": float(np.mean([r["rounds"] for r in mine])),
                "wall s": float(np.mean([r["wall"] for r in mine])),
            }
        )
    return rows


def _slopes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for setting in dict.fromkeys(r["setting"] for r in rows):
        for method in METHODS:
            mine = [r for r in rows if (r["setting"], r["method"]) == (setting, method)]
            Ts = np.array([r["T"] for r in mine], dtype=float)
            slope = float(np.polyfit(np.log(Ts), np.log([r["regret"] for r in mine]), 1)[0])
            last = mine[-1]
            out.append(
                {
                    "setting": setting,
                    "method": method,
                    "regret slope": slope,
                    f"queries at T=2^{int(math.log2(last['T']))}": last["queries"],
                    "rounds": last["rounds"],
                    "log log T levels K": n_levels(int(last["T"])),
                }
            )
    return out


def _get(rows, setting, method, T, key="regret"):
    return next(r[key] for r in rows if (r["setting"], r["method"], r["T"]) == (setting, method, T))


def _verdict(parts: list[bool]) -> str:
    return "held" if all(parts) else ("partly" if any(parts) else "not held")


def claims(rows: list[dict[str, Any]], slopes: list[dict[str, Any]], d_of: dict) -> list[Claim]:
    """The three claims, the headline first, each verdict computed from the rows."""
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    T_max = max(r["T"] for r in rows)
    slope = {(s["setting"], s["method"]): s["regret slope"] for s in slopes}
    ok, parts = [], []
    for setting in settings:
        ratio = _get(rows, setting, "AROQ", T_max) / _get(rows, setting, "CUCB", T_max)
        good = all(slope[setting, k] <= v for k, v in SLOPE_LIMIT.items())
        ok.append(good and ratio <= RATIO_LIMIT)
        sroq = _get(rows, setting, "SROQ", T_max) / _get(rows, setting, "CUCB", T_max)
        cucb_s, aroq_s, sroq_s = (slope[setting, k] for k in ("CUCB", "AROQ", "SROQ"))
        parts.append(
            f"{setting}: slopes CUCB {cucb_s:.2f}, AROQ {aroq_s:.2f}, SROQ {sroq_s:.2f}; "
            f"AROQ/CUCB regret at T={T_max} {ratio:.2f}, SROQ/CUCB {sroq:.2f}"
        )
    out = [
        Claim(
            "AROQ and SROQ keep ~sqrt(T) regret, within a small constant of CUCB, while "
            "querying the oracle rarely",
            paper="O~(sqrt(T)) worst-case regret with O(log log T) oracle query rounds "
            "(Theorems for AROQ and SROQ); experimental numbers not retrieved",
            measured="; ".join(parts),
            verdict=_verdict(ok),
            why=f"held per setting when the log-log regret slopes over T are <= "
            f"{SLOPE_LIMIT['AROQ']} (CUCB, AROQ) and <= {SLOPE_LIMIT['SROQ']} (SROQ) and AROQ's "
            f"regret at the largest T is <= {RATIO_LIMIT} x CUCB's; the slope of a sqrt(T) regret "
            "is 0.5, a gap-dependent log T regret gives less, linear regret 1",
        )
    ]
    q_parts, q_ok = [], []
    for setting in settings:
        d, m = d_of[setting]
        for T in sorted({r["T"] for r in rows if r["setting"] == setting}):
            E = n_levels(-(-T * m // d))
            q_ok.append(_get(rows, setting, "AROQ", T, "queries") <= 1 + d * (E + 1))
            q_ok.append(_get(rows, setting, "SROQ", T, "rounds") == n_levels(T))
        rounds = _get(rows, setting, "SROQ", T_max, "rounds")
        q = {k: _get(rows, setting, k, T_max, "queries") for k in METHODS}
        q_parts.append(
            f"{setting} at T={T_max}: SROQ {rounds:.0f} rounds ({q['SROQ']:.0f} queries), AROQ "
            f"{q['AROQ']:.0f} queries, doubling {q['doubling']:.0f}, CUCB {q['CUCB']:.0f}"
        )
    out.append(
        Claim(
            "Oracle query rounds grow like log log T: about 5-6 rounds for SROQ and O(5 d) queries "
            "for AROQ at T = 2^15, against T for CUCB",
            paper="O(log log T) adaptive rounds; SROQ's rounds independent of d",
            measured="; ".join(q_parts),
            verdict="held" if all(q_ok) and n_levels(int(T_max)) <= 6 else "not held",
            why="held when at every T SROQ made exactly ceil(log2 log2 T) + 1 rounds and AROQ "
            "at most 1 + d (E + 1) queries (E = ceil(log2 log2 (T m / d)) + 1)",
        )
    )
    c_parts, c_ok = [], []
    for setting in settings:
        for base in ("AROQ", "SROQ"):
            plain, adaptive = (
                _get(rows, setting, base, T_max),
                _get(rows, setting, f"{base}-cov", T_max),
            )
            if setting != "topm-indep":
                c_ok.append(adaptive < plain)
            c_parts.append(f"{setting} {base}: {adaptive:.0f} vs {plain:.0f}")
    indep_wins = "topm-indep" in settings and all(
        _get(rows, "topm-indep", f"{b}-cov", T_max) < _get(rows, "topm-indep", b, T_max)
        for b in ("AROQ", "SROQ")
    )
    out.append(
        Claim(
            "Covariance-adaptive versions win in the correlated setting",
            paper="covariance-adaptive AROQ/SROQ improve the regret when arms are correlated, with "
            "the same query complexity",
            measured=f"regret at T={T_max}, -cov vs plain: " + "; ".join(c_parts),
            verdict=_verdict(c_ok),
            why="held when every -cov variant has less regret than its plain version at the "
            "largest T in every correlated/path setting"
            + (
                ". They win at rho = 0 too: the gain comes mostly from adapting to sigma = 0.3 < "
                "1/2 (the worst case the plain CUCB width assumes), not from the correlation"
                if indep_wins
                else ""
            ),
        )
    )
    return out


def _plot(rows: list[dict[str, Any]], out: Path) -> Path:
    settings = list(dict.fromkeys(r["setting"] for r in rows))
    fig, axes = figure(2, len(settings), size=(5.5 * len(settings), 8.5))
    axes = np.asarray(axes).reshape(2, len(settings))
    for col, setting in enumerate(settings):
        for method in METHODS:
            mine = [r for r in rows if (r["setting"], r["method"]) == (setting, method)]
            Ts = [r["T"] for r in mine]
            axes[0, col].errorbar(
                Ts,
                [r["regret"] for r in mine],
                [r["se"] for r in mine],
                marker="o",
                label=method,
                capsize=2,
            )
            axes[1, col].plot(Ts, [r["queries"] for r in mine], marker="o", label=method)
        axes[0, col].set(
            xscale="log",
            yscale="log",
            xlabel="T",
            ylabel="regret",
            title=f"{setting}: regret +- s.e.",
        )
        axes[1, col].set(
            xscale="log",
            yscale="log",
            xlabel="T",
            ylabel="oracle queries",
            title=f"{setting}: oracle queries",
        )
    axes[0, 0].legend(fontsize=7)
    return save_figure(fig, out / "oraclebandit.png")


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Run every method on the settings of ``RUNS[quick]``; print the tables, write
    ``oraclebandit.png``; the claims are computed from the rows."""
    cfg = RUNS[quick]
    Ts = [2**k for k in cfg["log2_T"]]
    jobs = [
        (setting, method, T, seed + s, seed)
        for setting in cfg["settings"]
        for T in Ts
        for method in METHODS
        for s in range(cfg["seeds"])
    ]
    jobs.sort(key=lambda j: -j[2] * (4 if j[0] == "path" and j[1] == "CUCB" else 1))
    workers = max(1, min(cfg["workers"], os.cpu_count() or 1))
    if workers > 1:
        with ProcessPoolExecutor(workers) as pool:
            runs = list(progress(pool.map(_star, jobs), "semi-bandit runs", total=len(jobs)))
    else:
        runs = [one_run(*j) for j in progress(jobs, "semi-bandit runs")]
    order = {
        (s, m, T): k
        for k, (s, m, T) in enumerate(
            (s, m, T) for s in cfg["settings"] for m in METHODS for T in Ts
        )
    }
    runs.sort(key=lambda r: (order[r["setting"], r["method"], r["T"]], r["seed"]))
    rows = summarise(runs)
    slopes = _slopes(rows)
    for setting in cfg["settings"]:
        print_table(
            [r for r in rows if r["setting"] == setting],
            title=f"{setting}: regret +- s.e. over {cfg['seeds']} seeds",
        )
    print_table(slopes, title="log-log regret slope over T; queries and rounds at the largest T")
    d_of = {s: _instance(s, seed)[3:5] for s in cfg["settings"]}
    return Report(
        claims=claims(rows, slopes, d_of),
        tables={"regret": rows, "slopes": slopes},
        figures=[_plot(rows, Path(out))],
        settings={
            **cfg,
            "T": Ts,
            "sigma": SIGMA,
            "settings_detail": {k: SETTINGS[k] for k in cfg["settings"]},
            "methods": list(METHODS),
            "covariance_index": {"topm": "perturb", "path": "enumerate"},
            "mu": "U[0.2, 0.8], one draw per setting from the seed",
            "clip": [0.0, 1.0],
        },
        data={"runs": runs},
    )
