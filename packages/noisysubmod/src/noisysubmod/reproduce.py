"""The headline experiment at small scale.

``noisysubmod reproduce [--quick] [--seed N] [--out DIR]``.

Per instance x constraint x noise law, the true value ratio f(S) / f(S_ref) (mean +- SE over
seeds) of four methods: the exact-oracle base algorithm, the same base on the raw noisy oracle
(naive), the meta-algorithm around that base (ours) and a random feasible set. S_ref is the best
exact-oracle run of the cell. Instances (:mod:`noisysubmod.data`): (a) coverage n = 150 under
k = 10 (greedy) and a 5 x 2 partition matroid (measured continuous greedy); (b) max-cut on
G(120, 0.08) and les_miserables, unconstrained (double greedy) and k = 20 (MCG); (c) facility
location on 300 digits, k = 10 (greedy). Noise: Exp(1), and the clipped gaussian with sigma 0.5
and 1. MCG runs with delta = 0.1 and 10 samples per step. Also: an L sweep on (a) k = 10, a pool
size sweep and a pool/L sweep of meta double greedy on G(120, 0.08) (full run), and
brute-force OPT on small instances, where the meta-algorithm's ratio is checked against
1 - 1/e, 1/e and 1/2.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from noisysubmod import data
from noisysubmod.algorithms import brute_force, random_feasible
from noisysubmod.constraints import Cardinality, Constraint, Unconstrained
from noisysubmod.functions import GraphCut, SetFunction
from noisysubmod.meta import BASES, meta_maximize
from noisysubmod.noise import NoisyOracle
from paperkit import Claim, Report, figure, print_table, progress, save_figure

__all__ = ["CELLS", "RUNS", "SMALL", "reproduce", "run_cell"]

MCG = "measured_continuous_greedy"
#: name -> (instance, constraint, base algorithm)
CELLS: dict[str, tuple[Callable[[], SetFunction], Callable[[int], Constraint], str]] = {
    "(a) coverage / k=10": (data.coverage, lambda n: Cardinality(10), "greedy"),
    "(a) coverage / partition 5x2": (data.coverage, lambda n: data.partition(n, 5, 2), MCG),
    "(b) G(120,0.08) / unconstrained": (
        data.erdos_renyi_cut,
        lambda n: Unconstrained(),
        "double_greedy",
    ),
    "(b) G(120,0.08) / k=20": (data.erdos_renyi_cut, lambda n: Cardinality(20), MCG),
    "(b) les_miserables / unconstrained": (
        data.les_miserables_cut,
        lambda n: Unconstrained(),
        "double_greedy",
    ),
    "(b) les_miserables / k=20": (data.les_miserables_cut, lambda n: Cardinality(20), MCG),
    "(c) digits facility / k=10": (data.digits_facility, lambda n: Cardinality(10), "greedy"),
}


def _small_cut() -> GraphCut:
    return data.erdos_renyi_cut(seed=3, n=20, p=0.3)


#: brute-force instances: name -> (instance, constraint, base, the exact ratio it guarantees)
SMALL: dict[str, tuple[Callable[[], SetFunction], Callable[[int], Constraint], str, float]] = {
    "coverage n=20 / k=4": (
        lambda: data.coverage(1, n=20, universe=80),
        lambda n: Cardinality(4),
        "greedy",
        1 - 1 / math.e,
    ),
    "coverage n=20 / partition 4x1": (
        lambda: data.coverage(2, n=20, universe=80),
        lambda n: data.partition(n, 4, 1),
        MCG,
        1 - 1 / math.e,
    ),
    "cut G(20,0.3) / k=5": (_small_cut, lambda n: Cardinality(5), MCG, 1 / math.e),
    "cut G(20,0.3) / unconstrained": (_small_cut, lambda n: Unconstrained(), "double_greedy", 0.5),
}

#: The settings of the quick (True) and full (False) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "seeds": 3,
        "mcg_seeds": 3,
        "noises": [("exponential", 1.0)],
        "cells": [
            "(a) coverage / k=10",
            "(b) les_miserables / unconstrained",
            "(b) les_miserables / k=20",
        ],
        "L_sweep": [12, 48],
        "pool_sweep": [],
        "dg_sweep": [],
        "small": list(SMALL),
        "mcg": {"eps": 0.1, "n_samples": 10},
    },
    False: {
        "seeds": 10,
        "mcg_seeds": 5,
        "noises": [("exponential", 1.0), ("gaussian", 0.5), ("gaussian", 1.0)],
        "cells": list(CELLS),
        "L_sweep": [12, 48, 192, "C(29,2)", "C(45,2)"],
        "pool_sweep": [15, 29, 45],
        "dg_sweep": [[None, 48], [None, 378], [60, 1770]],
        "small": list(SMALL),
        "mcg": {"eps": 0.1, "n_samples": 10},
    },
}
METHODS = ("exact", "naive", "meta", "random")


def _run_base(base: str, f: Any, constraint: Constraint, seed: int, mcg: dict) -> np.ndarray:
    if base == "greedy":
        return BASES[base](f, constraint)
    options = mcg if base == MCG else {}
    return BASES[base](f, constraint, random_state=seed, **options)


def run_cell(
    f: SetFunction,
    constraint: Constraint,
    base: str,
    noise: str,
    sigma: float,
    seeds: list[int],
    mcg: dict,
    *,
    meta_options: dict | None = None,
    methods: tuple[str, ...] = METHODS,
) -> dict[str, list[float]]:
    """True values f(S) per method and seed (and the meta run's noisy query count)."""
    out: dict[str, list[float]] = {m: [] for m in methods}
    out["meta queries"], out["naive queries"] = [], []
    options = {"base_options": mcg if base == MCG else None, **(meta_options or {})}
    for s in seeds:
        if "exact" in methods:
            out["exact"].append(f(_run_base(base, f, constraint, s, mcg)))
        if "naive" in methods:
            noisy = NoisyOracle(f, noise=noise, sigma=sigma, seed=s)
            out["naive"].append(f(_run_base(base, noisy, constraint, s, mcg)))
            out["naive queries"].append(noisy.n_queries)
        if "meta" in methods:
            noisy = NoisyOracle(f, noise=noise, sigma=sigma, seed=s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # small pools: reported in the settings
                S, info = meta_maximize(noisy, constraint, base=base, random_state=s, **options)
            out["meta"].append(f(S))
            out["meta queries"].append(info["n_queries"])
        if "random" in methods:
            out["random"].append(f(random_feasible(f.n, constraint, random_state=s)))
    return out


def _sweep_L(key: int | str) -> int:
    """L of an L-sweep entry: a number, or "C(p,2)" for every pair of a pool of p."""
    if isinstance(key, str):
        return math.comb(int(key[2:].split(",")[0]), 2)
    return key


def _mse(values: list[float], ref: float) -> tuple[float, float]:
    r = np.asarray(values) / ref
    return float(r.mean()), float(r.std(ddof=1) / math.sqrt(len(r))) if len(r) > 1 else 0.0


def _fmt(mean: float, se: float) -> str:
    return f"{mean:.3f} ± {se:.3f}"


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Run the grid of ``RUNS[quick]``; print the tables; return the claims computed from them."""
    run = RUNS[quick]
    out = Path(out)
    mcg = run["mcg"]
    jobs = [("grid", c, nz) for c in run["cells"] for nz in run["noises"]]
    jobs += [("L", L, None) for L in run["L_sweep"]] + [
        ("pool", p, None) for p in run["pool_sweep"]
    ]
    jobs += [("dg", tuple(pl), None) for pl in run.get("dg_sweep", [])]
    jobs += [("small", name, None) for name in run["small"]]
    instances: dict[str, SetFunction] = {}
    grid, sweep, pools, small, dg, refs = [], [], [], [], [], {}
    cell = "(a) coverage / k=10"
    for kind, key, nz in progress(jobs, "noisysubmod reproduce", total=len(jobs)):
        if kind == "grid":
            make, cons, base = CELLS[key]
            f = instances.setdefault(key.split(" / ")[0], make())
            constraint = cons(f.n)
            n_seeds = run["mcg_seeds"] if base == MCG else run["seeds"]
            seeds = [seed + s for s in range(n_seeds)]
            vals = run_cell(f, constraint, base, nz[0], nz[1], seeds, mcg)
            ref = max(vals["exact"])
            refs[key, nz] = (ref, vals)
            row = {"cell": key, "base": base, "noise": f"{nz[0]} σ={nz[1]:g}", "seeds": n_seeds}
            for m in METHODS:
                row[m] = _fmt(*_mse(vals[m], ref))
            row["meta - naive"] = float(np.mean(np.subtract(vals["meta"], vals["naive"])) / ref)
            row["meta queries"] = int(np.mean(vals["meta queries"]))
            row["naive queries"] = int(np.mean(vals["naive queries"]))
            grid.append(row)
        elif kind in ("L", "pool"):
            f = instances.setdefault("(a) coverage", data.coverage())
            seeds = [seed + s for s in range(run["seeds"])]
            p = key if kind == "pool" else (45 if key == "C(45,2)" else None)
            L = 48 if kind == "pool" else _sweep_L(key)
            vals = run_cell(
                f,
                Cardinality(10),
                "greedy",
                "exponential",
                1.0,
                seeds,
                mcg,
                meta_options={"n_bundles": L, "pool_size": p},
                methods=("meta",),
            )
            ref = f(BASES["greedy"](f, Cardinality(10)))  # exact greedy is deterministic
            mean, se = _mse(vals["meta"], ref)
            row = {
                "L": L,
                "pool": p or 29,
                "meta": mean,
                "SE": se,
                "queries": int(np.mean(vals["meta queries"])),
            }
            (sweep if kind == "L" else pools).append(row)
        elif kind == "dg":
            f = instances.setdefault("(b) G(120,0.08)", data.erdos_renyi_cut())
            seeds = [seed + s for s in range(run["mcg_seeds"])]
            vals = run_cell(
                f,
                Unconstrained(),
                "double_greedy",
                "exponential",
                1.0,
                seeds,
                mcg,
                meta_options={"pool_size": key[0], "n_bundles": key[1]},
                methods=("exact", "meta"),
            )
            mean, se = _mse(vals["meta"], max(vals["exact"]))
            dg.append(
                {
                    "pool": key[0] or 28,
                    "L": key[1],
                    "meta": mean,
                    "SE": se,
                    "queries": int(np.mean(vals["meta queries"])),
                }
            )
        else:
            make, cons, base, target = SMALL[key]
            f = make()
            constraint = cons(f.n)
            _, opt = brute_force(f, constraint)
            seeds = [seed + s for s in range(run["seeds"])]
            vals = run_cell(f, constraint, base, "exponential", 1.0, seeds, mcg)
            row = {"instance": key, "base": base, "target": round(target, 4)}
            for m in METHODS:
                row[m] = _fmt(*_mse(vals[m], opt))
            meta_mean = _mse(vals["meta"], opt)[0]
            row["check"] = "PASS" if meta_mean >= target else "FAIL"
            small.append(row)
    tables = {"grid": grid, "L_sweep": sweep, "small_opt": small}
    if pools:
        tables["pool_sweep"] = pools
    if dg:
        tables["double_greedy_sweep"] = dg
    for name, rows in tables.items():
        print_table(rows, title=name)
    for row in small:
        print(f"{row['check']}: {row['instance']} meta ratio {row['meta']} >= {row['target']}")
    fig_path = _plot(grid, sweep, out)
    claims = _claims(grid, sweep, small, refs, cell)
    settings = {
        **run,
        "seed": seed,
        "ratio reference": "best exact-oracle run of the cell (brute-force OPT for small_opt)",
        "meta defaults": "pool ceil(4 log2 n) capped at n/5, L = 48 pairs",
    }
    return Report(claims=claims, tables=tables, figures=[fig_path], settings=settings)


def _claims(grid, sweep, small, refs, cell) -> list[Claim]:
    claims = []
    if (cell, ("exponential", 1.0)) in refs:
        ref, vals = refs[cell, ("exponential", 1.0)]
        meta, naive = _mse(vals["meta"], ref)[0], _mse(vals["naive"], ref)[0]
        gap = meta - naive
        claims.append(
            Claim(
                "The meta-algorithm (smoothing over L = 48 bundles) beats the same greedy run "
                "on the raw persistent noisy oracle (coverage n = 150, k = 10, Exp(1) noise)",
                paper="Theorem (meta-algorithm keeps the base ratio up to o(1)); no experiments",
                measured=f"meta {meta:.3f} vs naive {naive:.3f} of exact (gap {gap:+.3f})",
                verdict="held" if gap >= 0.03 else ("partly" if gap > 0 else "not held"),
                why=f"{len(vals['meta'])} seeds; target gap >= 0.03",
            )
        )
    if sweep:
        means = [r["meta"] for r in sweep]
        reach = [r["L"] for r in sweep if r["meta"] >= 0.9]
        grows = means[-1] > means[0]
        claims.append(
            Claim(
                "The meta-algorithm approaches the exact-oracle ratio as L grows "
                "(L ~ sigma^2 log n / eps^2 in theory)",
                paper="asymptotic: ratio -> exact as L -> infinity",
                measured=", ".join(f"L={r['L']}: {r['meta']:.3f}" for r in sweep)
                + (
                    f"; >= 0.9 of exact from L = {reach[0]}" if reach else "; never >= 0.9 of exact"
                ),
                verdict="held" if grows and reach else ("partly" if grows else "not held"),
                why="coverage (a) k = 10, Exp(1) noise; the default pool of 29 caps L at "
                "C(29, 2) = 406 pairs; the last full-run row enlarges the pool to 45 (990 pairs)",
            )
        )
    if small:
        passed = sum(r["check"] == "PASS" for r in small)
        claims.append(
            Claim(
                "Under noise the meta-algorithm keeps 1 - 1/e (monotone), 1/e (non-monotone, "
                "matroid) and 1/2 (unconstrained) of OPT",
                paper="(1 - 1/e), 1/e, 1/2 up to o(1)",
                measured="; ".join(f"{r['instance']}: {r['meta']}" for r in small),
                verdict="held" if passed == len(small) else ("partly" if passed else "not held"),
                why="brute-force OPT, n = 20, Exp(1) noise; the pool holds only 4 elements "
                "here, so L = 11 bundles",
            )
        )
    if grid:
        wins = sum(r["meta - naive"] > 0 for r in grid)
        claims.append(
            Claim(
                "Across instances, constraints and noise laws the meta-algorithm beats the naive "
                "noisy base",
                paper="the meta-algorithm is robust where the naive algorithm is not",
                measured=f"meta > naive in {wins} of {len(grid)} cells",
                verdict="held"
                if wins == len(grid)
                else ("partly" if wins >= len(grid) / 2 else "not held"),
                why="mean over seeds; see the grid table for the SEs",
            )
        )
    return claims


def _plot(grid, sweep, out: Path) -> Path:
    fig, axes = figure(1, 2, size=(11, 4))
    ax1, ax2 = axes[0]
    if sweep:
        ax1.semilogx([r["L"] for r in sweep], [r["meta"] for r in sweep], "o-", label="meta")
        ax1.fill_between(
            [r["L"] for r in sweep],
            [r["meta"] - r["SE"] for r in sweep],
            [r["meta"] + r["SE"] for r in sweep],
            alpha=0.2,
        )
        ax1.axhline(0.9, ls=":", c="gray", label="0.9 of exact")
        ax1.set_xlabel("bundles L")
        ax1.set_ylabel("f(S) / f(exact greedy)")
        ax1.set_title("(a) coverage k=10, Exp(1) noise")
        ax1.legend()
    labels = [
        f"{r['cell'].split(' / ')[0][4:]}/{r['cell'].split(' / ')[1]}\n{r['noise']}" for r in grid
    ]
    x = np.arange(len(grid))
    for i, m in enumerate(METHODS):
        ax2.bar(x + (i - 1.5) * 0.2, [float(r[m].split(" ")[0]) for r in grid], 0.2, label=m)
    ax2.set_xticks(x, labels, rotation=90, fontsize=6)
    ax2.set_ylabel("f(S) / f(S_ref)")
    ax2.legend(fontsize="small")
    return save_figure(fig, out / "noisysubmod.png")
