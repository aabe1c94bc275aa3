"""The paper's comparison at small scale: ``portrouter reproduce [--quick] [--seed N]``.

SyntheticRouterBench (real query strings embedded by all-MiniLM-L6-v2, simulated outcomes of 11
models calibrated to RouterBench's averages), history 10k / test 8k (quick: 2k / 1k), budget =
min_i Σ_j g_ij split "weighted", k = 5, ε = 0.025, α = 1e-4 (the paper's RouterBench setting;
our costs are calibrated to RouterBench's). PORT as in the paper (every routed query goes to a
model) and PORT+skip (the dual's β ≥ 0: a query whose best priced score is negative is not
served) against the paper's
baselines: Random, Greedy-Perf/Cost (ANN), KNN-Perf/Cost (exact kNN), BatchSplit, Predictor-Perf/
Cost (an MLP in place of the paper's RoBERTa), and the offline LP optima on estimated and on true
features. Then a volume sweep (stream length N) and, in the full run, a deployment sweep (M models,
random subsets).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from paperkit import Claim, Report, figure, print_table, progress, save_figure
from portrouter.ann import ANNIndex, recall_at_k
from portrouter.baselines import (
    batch_split_router,
    greedy_router,
    knn_router,
    offline_opt,
    predictor_router,
    random_router,
)
from portrouter.budget import split_budget, total_budget
from portrouter.dual import dual_objective
from portrouter.features import estimate_features
from portrouter.router import PORTRouter
from portrouter.serving import simulate_serving
from portrouter.synthetic import RouterData, SyntheticRouterBench

__all__ = ["claims", "compare", "hnsw_recall", "reproduce", "solver_comparison"]

ONLINE = (
    "Random",
    "Greedy-Perf",
    "Greedy-Cost",
    "KNN-Perf",
    "KNN-Cost",
    "BatchSplit",
    "Predictor-Perf",
    "Predictor-Cost",
)
PAPER_GAINS = {"Perf": 3.55, "PPC": 1.85, "Throughput": 4.25}  # mean over baselines, 3 benchmarks
#: PORT's share of Offline-Approx-Opt's performance at which "near the offline optimum" is held.
NEAR_OPTIMUM = 0.9


def compare(
    data: RouterData,
    n_test: int | None = None,
    *,
    k: int = 5,
    eps: float = 0.025,
    alpha: float | str = 1e-4,
    split: str = "weighted",
    budget_factor: float = 1.0,
    seed: int = 0,
    methods: tuple[str, ...] | None = None,
    predictors: bool = True,
) -> dict[str, Any]:
    """Serve the first ``n_test`` test queries with every method under the same budgets.

    Returns ``{"budgets", "rows": {method: ServingResult.row()}, "gamma", "lp"}``."""
    n = n_test or len(data.test_d)
    d, g, emb = data.test_d[:n], data.test_g[:n], data.test_emb[:n]
    M = d.shape[1]
    perf_avg, cost_avg = data.hist_d.mean(axis=0), data.hist_g.mean(axis=0)
    budgets = split_budget(total_budget(g, budget_factor), perf_avg, cost_avg, split)
    index = ANNIndex("hnsw", dim=emb.shape[1], k=k, seed=seed)
    index.add(data.hist_emb)
    hist = (data.hist_d, data.hist_g)
    routers = {
        "PORT": lambda: PORTRouter(index, *hist, budgets, n, eps=eps, alpha=alpha, seed=seed),
        "PORT+skip": lambda: PORTRouter(
            index, *hist, budgets, n, eps=eps, alpha=alpha, allow_skip=True, seed=seed
        ),
        "PORT (LP prices)": lambda: PORTRouter(
            index, *hist, budgets, n, eps=eps, alpha=alpha, solver="lp", seed=seed
        ),
        "Random": lambda: random_router(M, seed),
        "Greedy-Perf": lambda: greedy_router(index, *hist, budgets, "perf"),
        "Greedy-Cost": lambda: greedy_router(index, *hist, budgets, "cost"),
        "KNN-Perf": lambda: knn_router(data.hist_emb, *hist, budgets, "perf", k),
        "KNN-Cost": lambda: knn_router(data.hist_emb, *hist, budgets, "cost", k),
        "BatchSplit": lambda: batch_split_router(index, *hist, budgets, n),
    }
    if predictors:
        routers["Predictor-Perf"] = lambda: predictor_router(data.hist_emb, *hist, budgets, "perf")
        routers["Predictor-Cost"] = lambda: predictor_router(data.hist_emb, *hist, budgets, "cost")
    wanted = methods or (*routers, "Offline-Approx-Opt", "Offline-Opt")
    rows, extra = {}, {}
    for name in progress(wanted, f"methods, N={n}"):
        if name in routers:
            router = routers[name]()
            res = simulate_serving(router, d, g, emb, budgets)
            if name == "PORT":
                extra["gamma"], extra["alpha"] = router.gamma, router.alpha_
                extra["n_learn"] = router.n_learn
                extra["n_optimisations"] = router.n_optimisations
        else:
            tic = time.perf_counter()
            if name == "Offline-Opt":
                value, choices = offline_opt(d, g, budgets)
            else:
                value, choices = offline_opt(*estimate_features(index, *hist, emb), budgets)
            extra[f"{name} LP value"] = value
            res = simulate_serving(choices, d, g, None, budgets)
            res.route_seconds = time.perf_counter() - tic
        rows[name] = res.row()
    return {"n_test": n, "budgets": budgets, "rows": rows, **extra}


def solver_comparison(
    data: RouterData,
    seeds: list[int],
    *,
    k: int = 5,
    eps: float = 0.025,
    alpha: float = 1e-4,
) -> list[dict[str, Any]]:
    """PORT with the paper code's L-BFGS-B prices against the exact LP's. Seed s shuffles the
    test stream (the random-order arrival of the paper's analysis, so each seed learns from
    other queries) and seeds the router; both solvers see the same order and draws.

    Per seed: each solver's served Perf, its dual objective F(γ) on the learning-phase
    estimates, and the share of post-learning queries whose model differs."""
    n = len(data.test_d)
    perf_avg, cost_avg = data.hist_d.mean(axis=0), data.hist_g.mean(axis=0)
    budgets = split_budget(total_budget(data.test_g), perf_avg, cost_avg, "weighted")
    index = ANNIndex("hnsw", dim=data.test_emb.shape[1], k=k, seed=0)
    index.add(data.hist_emb)
    rows = []
    for seed in progress(seeds, "price solvers"):
        order = np.random.default_rng(seed).permutation(n)
        d, g, emb = data.test_d[order], data.test_g[order], data.test_emb[order]
        found = {}
        for solver in ("lbfgsb", "lp"):
            router = PORTRouter(
                index,
                data.hist_d,
                data.hist_g,
                budgets,
                n,
                eps=eps,
                alpha=alpha,
                solver=solver,
                seed=seed,
            )
            res = simulate_serving(router, d, g, emb, budgets)
            learn = (np.concatenate(router._seen_d), np.concatenate(router._seen_g))
            objective = dual_objective(router.gamma, *learn, budgets, eps, router.alpha_)
            found[solver] = (res, objective, router.n_learn)
        (bfgs, f_bfgs, n_learn), (lp, f_lp, _) = found["lbfgsb"], found["lp"]
        rows.append(
            {
                "seed": seed,
                "Perf L-BFGS-B": bfgs.perf,
                "Perf LP": lp.perf,
                "F L-BFGS-B": f_bfgs,
                "F LP": f_lp,
                "decisions changed": float(np.mean(bfgs.choices[n_learn:] != lp.choices[n_learn:])),
            }
        )
    return rows


def hnsw_recall(data: RouterData, k: int = 5, seed: int = 0) -> float:
    """Recall@k of the HNSW neighbours of the test queries against exact search."""
    hnsw = ANNIndex("hnsw", dim=data.hist_emb.shape[1], k=k, seed=seed)
    exact = ANNIndex("exact", dim=data.hist_emb.shape[1], k=k)
    hnsw.add(data.hist_emb)
    exact.add(data.hist_emb)
    found, truth = hnsw.search(data.test_emb)[0], exact.search(data.test_emb)[0]
    return recall_at_k(found, truth)


def _gains(rows: dict[str, dict], variant: str = "PORT") -> dict[str, float]:
    """PORT's metric over each online baseline's, averaged (the paper's "average improvement")."""
    port = rows[variant]
    base = [rows[m] for m in ONLINE if m in rows]
    out = {}
    for key in PAPER_GAINS:
        ratios = [port[key] / b[key] for b in base if b[key] > 0]
        out[key] = float(np.mean(ratios)) if ratios else float("nan")
    return out


def _plot(main: dict, volume: list[dict], deploy: list[dict], out: Path) -> Path:
    panels = 3 if deploy else 2
    fig, axes = figure(1, panels, size=(6 * panels, 4.4))
    ax = axes[0][0]
    names = list(main["rows"])
    perf = [main["rows"][m]["Perf"] for m in names]
    colors = [
        "C3" if m.startswith("PORT") else ("C7" if m.startswith("Offline") else "C0") for m in names
    ]
    ax.barh(names, perf, color=colors)
    ax.invert_yaxis()
    ax.set(xlabel="Performance (Σ quality of served queries)", title=f"N = {main['n_test']}")
    for ax, sweep, key, label in (
        (axes[0][1], volume, "N", "queries in the stream N"),
        *(((axes[0][2], deploy, "M", "deployed models M"),) if deploy else ()),
    ):
        xs = [s[key] for s in sweep]
        for m in (
            "PORT",
            "PORT+skip",
            "Greedy-Perf",
            "KNN-Perf",
            "BatchSplit",
            "Random",
            "Offline-Approx-Opt",
        ):
            if m in sweep[0]["rows"]:
                style = (
                    "o-" if m.startswith("PORT") else ("k--" if m.startswith("Offline") else ".-")
                )
                ax.plot(xs, [s["rows"][m]["Perf"] for s in sweep], style, label=m)
        ax.set(xlabel=label, ylabel="Performance", title=f"sweep over {key}")
        ax.legend(fontsize=7)
    return save_figure(fig, out / "portrouter.png")


def claims(
    main: dict[str, Any],
    gains: dict[str, dict[str, float]],
    n_optim: int,
    solvers: list[dict[str, Any]],
) -> list[Claim]:
    """The paper's claims, each with the verdict its rule gives on this run's numbers, and the
    check of the default price solver against the exact LP."""
    rows = main["rows"]
    online = [m for m in ONLINE if m in rows]
    beaten = [m for m in online if rows["PORT"]["Perf"] > rows[m]["Perf"]]
    above = [m for m in online if m not in beaten]
    port = gains["PORT"]
    share = rows["PORT"]["Perf"] / rows["Offline-Approx-Opt"]["Perf"]
    skip = rows["PORT+skip"]["Perf"] / rows["Offline-Approx-Opt"]["Perf"]
    return [
        Claim(
            "PORT has the highest performance of the online routing methods",
            paper="main results table: PORT above every online baseline on RouterBench, SPROUT "
            "and Open LLM Leaderboard v2",
            measured=f"PORT's Perf {rows['PORT']['Perf']:.0f} above {len(beaten)} of "
            f"{len(online)} online baselines; below: "
            + (", ".join(f"{m} ({rows[m]['Perf']:.0f})" for m in above) or "none"),
            verdict="held"
            if not above
            else ("partly" if len(beaten) >= len(online) / 2 else "not held"),
            why="compared on the same stream, budgets and history (synthetic outcomes on real "
            "query strings); PORT+skip: " + f"{rows['PORT+skip']['Perf']:.0f}",
        ),
        Claim(
            "PORT improves on the online baselines by 3.55x in performance, 1.85x in cost "
            "efficiency and 4.25x in throughput on average",
            paper="average improvement over the baselines and three benchmarks: "
            + ", ".join(f"{k} {v}x" for k, v in PAPER_GAINS.items()),
            measured=", ".join(f"{k} {v:.2f}x" for k, v in port.items()),
            verdict="held"
            if all(port[k] >= PAPER_GAINS[k] for k in PAPER_GAINS)
            else ("partly" if all(v > 1 for v in port.values()) else "not held"),
            why="mean over the online baselines of PORT's metric over theirs; held when every "
            "gain reaches the paper's, partly when every gain is above 1",
        ),
        Claim(
            "PORT's online performance comes near the offline optimum on the same estimates",
            paper="(1 - o(1))-competitive under random-order arrival with budgets large relative "
            "to single costs",
            measured=f"PORT {share:.2f}, PORT+skip {skip:.2f} of Offline-Approx-Opt's Perf",
            verdict="held" if share >= NEAR_OPTIMUM else "not held",
            why=f"held at >= {NEAR_OPTIMUM:.0%} of Offline-Approx-Opt; the learning phase is "
            f"ceil(eps N) = {main['n_learn']} queries for {len(main['budgets'])} prices",
        ),
        Claim(
            "PORT solves its optimisation once and trains no predictor",
            paper="one-time dual optimisation over the first eps N queries; training-free",
            measured=f"{n_optim} dual solve(s) over the stream",
            verdict="held" if n_optim == 1 else "not held",
            why="counted by the router (n_optimisations)",
        ),
        _solver_claim(solvers),
    ]


def _solver_claim(solvers: list[dict[str, Any]]) -> Claim:
    wins = sum(r["Perf L-BFGS-B"] >= r["Perf LP"] for r in solvers)
    lower_f = sum(r["F LP"] <= r["F L-BFGS-B"] + 1e-12 for r in solvers)
    ratio = np.array([r["Perf LP"] / r["Perf L-BFGS-B"] for r in solvers])
    changed = [r["decisions changed"] for r in solvers]
    return Claim(
        "The paper code's L-BFGS-B prices (the default) route at least as well as the exact LP's",
        paper="the paper's code minimises F by L-BFGS-B from 1/M; the exact LP is this "
        "package's option",
        measured=f"L-BFGS-B served at least the LP's Perf in {wins} of {len(solvers)} seeds "
        f"(LP / L-BFGS-B Perf {ratio.min():.3f}-{ratio.max():.3f}, median "
        f"{np.median(ratio):.3f}); decisions changed {min(changed):.1%}-{max(changed):.1%}; "
        f"the LP's F is the lower in {lower_f} of {len(solvers)}",
        verdict="held" if 2 * wins >= len(solvers) else "not held",
        why="same stream, budgets and learning-phase draws per seed; held when L-BFGS-B "
        "serves at least the LP's Perf in at least half of the seeds",
    )


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    n_history: int | None = None,
    n_test: int | None = None,
    embedder=None,
) -> Report:
    """Build the benchmark (embeddings cached), compare the methods, run the sweeps, plot.

    ``n_history``/``n_test`` override the sizes and ``embedder`` the sentence encoder (smoke tests).
    """
    n_history = n_history or (2000 if quick else 10000)
    n_test = n_test or (1000 if quick else 8000)
    data = SyntheticRouterBench(n_history, n_test, seed=seed).build(embedder)
    print(f"embedding {n_history + n_test} queries: {data.embed_seconds:.1f} s (0 when cached)")
    recall = hnsw_recall(data)
    print(f"HNSW recall@5 against exact search on these embeddings: {recall:.4f}")
    main = compare(data, seed=seed)
    rows = [{"method": m, **r} for m, r in main["rows"].items()]
    print_table(rows, title=f"N={n_test}, M={len(data.models)}, history {n_history}, weighted")
    variants = ("PORT", "PORT+skip")
    gains = {v: _gains(main["rows"], v) for v in variants}
    opt = main["rows"]["Offline-Approx-Opt"]["Perf"]
    ratios = {
        v: {
            "Perf / Offline-Approx-Opt Perf": main["rows"][v]["Perf"] / opt,
            "Perf / Offline-Opt LP value": main["rows"][v]["Perf"] / main["Offline-Opt LP value"],
        }
        for v in variants
    }
    gains_table = [
        {"metric": k, **{v: gains[v][k] for v in variants}, "paper (PORT)": PAPER_GAINS[k]}
        for k in PAPER_GAINS
    ]
    print_table(gains_table, title="gain over the online baselines (mean of ratios)")
    ratios_table = [{"ratio": k, **{v: ratios[v][k] for v in variants}} for k in ratios["PORT"]]
    print_table(ratios_table, title="against the offline optima")
    sizes = [n_test // 4, n_test // 2, n_test] if quick else [2000, 4000, 6000, 8000]
    sizes = [s for s in sizes if s <= n_test]
    fast = (
        "PORT",
        "PORT+skip",
        "Random",
        "Greedy-Perf",
        "KNN-Perf",
        "BatchSplit",
        "Offline-Approx-Opt",
    )
    volume = [
        {"N": s, **compare(data, s, seed=seed, methods=fast, predictors=False)}
        for s in progress(sizes, "volume sweep")
    ]
    deploy = []
    if not quick:
        rng = np.random.default_rng(seed)
        for m in progress([2, 4, 8, 11], "deployment sweep"):
            subset = sorted(rng.choice(len(data.models), size=m, replace=False).tolist())
            deploy.append(
                {
                    "M": m,
                    "models": [data.models[i] for i in subset],
                    **compare(data.subset(subset), seed=seed, methods=fast, predictors=False),
                }
            )
    seeds = list(range(10 if quick else 20))
    solvers = solver_comparison(data, seeds)
    print_table(solvers, title="PORT's prices: L-BFGS-B (paper code) vs exact LP, per seed")
    figure_path = _plot(main, volume, deploy, out)
    return Report(
        claims=claims(main, gains, main["n_optimisations"], solvers),
        tables={
            "methods": rows,
            "gains": gains_table,
            "offline ratios": ratios_table,
            "volume sweep": _sweep_table(volume, "N"),
            **({"deployment sweep": _sweep_table(deploy, "M")} if deploy else {}),
            "price solvers": solvers,
        },
        figures=[figure_path],
        settings={
            "n_history": n_history,
            "n_test": n_test,
            "n_models": len(data.models),
            "k": 5,
            "eps": 0.025,
            "alpha": 1e-4,
            "split": "weighted",
            "budget_factor": 1.0,
            "segment": 256,
            "volume_sizes": sizes,
            "solver": "lbfgsb",
            "solver_seeds": seeds,
            "deployment_sizes": [d["M"] for d in deploy],
            "embedder": "all-MiniLM-L6-v2"
            if embedder is None
            else getattr(embedder, "__name__", type(embedder).__name__),
            "quick": quick,
            "seed": seed,
        },
        data={
            "embed_seconds": data.embed_seconds,
            "hnsw_recall_at_5": recall,
            "main": main,
            "gains": gains,
            "ratios": ratios,
            "volume": volume,
            "deployment": deploy,
        },
    )


def _sweep_table(sweep: list[dict[str, Any]], key: str) -> list[dict[str, Any]]:
    """Performance per method at each point of a sweep (one row per N or M)."""
    return [{key: s[key], **{m: r["Perf"] for m, r in s["rows"].items()}} for s in sweep]
