"""The headline experiment at small scale: ``fedrw reproduce [--quick] [--seed N] [--out DIR]``.

(1) Perplexity (the paper's perplexity experiments, in small): K = 4 clients hold
200-character chunks of
Python's pydoc topics with planted duplicates (copies are a fraction ρ of the training corpus);
a character GRU (emb 32, hidden 128) is trained with FedAvg (Adam 2e-3, batch 32, equal local
steps for every method) under no deduplication, local deduplication, global hard deduplication
and FedRW (α = 1); test perplexity on held-out distinct chunks, mean ± sd over seeds.
(2) Exactness: the PSI frequencies equal a plaintext Counter over the union.
(3) Preprocessing (the paper's preprocessing-time experiments, in small): PSI wall time and
bytes against K for the round-robin
parallel schedule, the sequential baseline and the trusted-third-party (HMAC) baseline.
(4) Full run only: one longer run (16 rounds) at ρ = 0.5, every method, one seed, to see whether
the duplication penalty appears once the model starts to fit its data.
The claims' verdicts are computed from these rows (:func:`claims`).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from fedrw.canon import canonicalize
from fedrw.data import make_duplicated_corpus
from fedrw.federated import METHODS, run_federated_lm
from fedrw.protocol import secure_global_frequencies
from fedrw.ttp import ttp_global_frequencies
from paperkit import Claim, Report, figure, loglog_slope, print_table, progress, save_figure

__all__ = ["RUNS", "claims", "reproduce"]

#: Sizes of the quick (True) and full (False) runs.
#: ``ablation``: one longer run at a higher duplication rate (every method, one seed), to see
#: whether the duplication penalty appears once the model starts to fit its data.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "rhos": [0.3],
        "seeds": 1,
        "rounds": 3,
        "ks": [2, 4, 8],
        "n_chunks": 600,
        "ablation": None,
    },
    False: {
        "rhos": [0.1, 0.3],
        "seeds": 2,
        "rounds": 6,
        "ks": [2, 4, 6, 8],
        "n_chunks": 600,
        "ablation": {"rho": 0.5, "rounds": 16},
    },
}
LABELS = {
    "none": "No dedup",
    "local_dedup": "Local dedup",
    "global_dedup": "Global hard dedup",
    "fedrw": "FedRW (α=1)",
}
CLIENTS = 4
#: Chunks per client in the preprocessing runs (each client holds about 1.3x as many samples).
CHUNKS_PER_CLIENT = 100
GAP_CLAIM = "The perplexity gain of FedRW over no deduplication grows with the duplication rate"


def _exact(corpus: Any) -> bool:
    """The PSI's F equals a plaintext Counter over the union, for every client's items."""
    res = secure_global_frequencies(corpus.clients)
    union = Counter(canonicalize(x) for data in corpus.clients for x in data)
    return all(f == {x: union[x] for x in f} for f in res.freqs)


def _perplexity(run: dict[str, Any], seed: int) -> tuple[list[dict], dict, bool]:
    rows, curves, exact = [], {}, True
    jobs = [(rho, s) for rho in run["rhos"] for s in range(seed, seed + run["seeds"])]
    for rho, s in progress(jobs, "federated training"):
        corpus = make_duplicated_corpus(CLIENTS, rho, seed=s, n_chunks=run["n_chunks"])
        exact &= _exact(corpus)
        for method in METHODS:
            h = run_federated_lm(method, corpus, rounds=run["rounds"], alpha=1.0, seed=s)
            curves.setdefault((rho, method), []).append(h.test_ppl.tolist())
            rows.append(
                {
                    "rho": rho,
                    "seed": s,
                    "method": method,
                    "ppl": float(h.test_ppl[-1]),
                    "preprocess s": h.preprocess_seconds,
                    "preprocess bytes": h.preprocess_bytes,
                    "copies": corpus.info["copies"],
                }
            )
    return rows, curves, exact


def _ablation(spec: dict[str, Any], seed: int, n_chunks: int) -> list[dict]:
    """Every method at ρ = spec["rho"] for spec["rounds"] rounds, one seed: the test
    perplexity after each round."""
    corpus = make_duplicated_corpus(CLIENTS, spec["rho"], seed=seed, n_chunks=n_chunks)
    rows = []
    for method in progress(METHODS, f"longer run, ρ = {spec['rho']}"):
        h = run_federated_lm(method, corpus, rounds=spec["rounds"], alpha=1.0, seed=seed)
        best = int(h.test_ppl.argmin())
        rows.append(
            {
                "rho": spec["rho"],
                "method": LABELS[method],
                "final ppl": float(h.test_ppl[-1]),
                "best ppl": float(h.test_ppl[best]),
                "best round": best + 1,
                "curve": [round(float(v), 3) for v in h.test_ppl],
            }
        )
    return rows


def _summary(rows: list[dict]) -> list[dict]:
    out = []
    for rho in dict.fromkeys(r["rho"] for r in rows):
        base = np.mean([r["ppl"] for r in rows if r["rho"] == rho and r["method"] == "none"])
        for method in METHODS:
            vals = [r["ppl"] for r in rows if r["rho"] == rho and r["method"] == method]
            sd = float(np.std(vals, ddof=1)) if len(vals) > 1 else 0.0
            out.append(
                {
                    "rho": rho,
                    "method": LABELS[method],
                    "test ppl": float(np.mean(vals)),
                    "sd": sd,
                    "vs no dedup %": 100 * (base - float(np.mean(vals))) / base,
                    "per seed": ", ".join(f"{v:.3f}" for v in vals),
                }
            )
    return out


def _timing(ks: list[int], seed: int) -> list[dict]:
    rows = []
    for k in progress(ks, "preprocessing vs K"):
        corpus = make_duplicated_corpus(k, 0.3, seed=seed, n_chunks=CHUNKS_PER_CLIENT * k)
        par = secure_global_frequencies(corpus.clients, parallel=True)
        seq = secure_global_frequencies(corpus.clients, parallel=False)
        ttp = ttp_global_frequencies(corpus.clients)
        rows.append(
            {
                "K": k,
                "samples": corpus.info["train_total"],
                "parallel s": par.seconds,
                "sequential s": seq.seconds,
                "TTP s": ttp.seconds,
                "speed-up": seq.seconds / par.seconds,
                "parallel path s": par.critical_path_seconds,
                "sequential path s": seq.critical_path_seconds,
                "parallel rounds": par.rounds,
                "sequential rounds": seq.rounds,
                "PSI bytes": par.bytes_total,
                "TTP bytes": ttp.bytes_total,
                "same F": par.freqs == seq.freqs == ttp.freqs,
            }
        )
    return rows


def _verdict(better: bool, clear: bool) -> str:
    return "held" if better and clear else ("partly" if better else "not held")


def claims(
    summary: list[dict],
    timing: list[dict],
    exact: bool,
    seeds: int,
    ablation: list[dict] | None = None,
) -> list[Claim]:
    """The claims, computed from the summary rows, the timing rows, the exactness check and
    the longer run (when there is one)."""
    get = {(r["rho"], r["method"]): r for r in summary}
    rhos = sorted({r["rho"] for r in summary})
    out = []
    # 1. headline: the global methods beat no dedup and local dedup
    parts, measured = [], []
    for rho in rhos:
        worst_local = min(get[(rho, LABELS[m])]["test ppl"] for m in ("none", "local_dedup"))
        for m in ("fedrw", "global_dedup"):
            g = get[(rho, LABELS[m])]
            sd = max(g["sd"], *(get[(rho, LABELS[b])]["sd"] for b in ("none", "local_dedup")))
            diff = worst_local - g["test ppl"]
            parts.append(_verdict(diff > 0, seeds > 1 and diff > 2 * sd))
            measured.append(
                f"ρ={rho} {LABELS[m]} {g['test ppl']:.3f} vs best local {worst_local:.3f}"
            )
    verdict = (
        "held"
        if all(p == "held" for p in parts)
        else ("partly" if any(p != "not held" for p in parts) else "not held")
    )
    out.append(
        Claim(
            "Global frequency-aware methods (FedRW, global hard dedup) give lower test perplexity "
            "than no deduplication and local deduplication",
            paper="≈11.42% better perplexity than the state of the art (abstract)",
            measured="; ".join(measured),
            verdict=verdict,
            why=f"{seeds} seed(s); held needs a gap > 2 sd at every ρ (one seed: at most partly)",
        )
    )
    # 2. FedRW ≈ or < global hard dedup
    rows = [(get[(r, LABELS["fedrw"])], get[(r, LABELS["global_dedup"])]) for r in rhos]
    ok = all(f["test ppl"] <= g["test ppl"] + 2 * max(f["sd"], g["sd"], 1e-9) for f, g in rows)
    tie_or_better = all(f["test ppl"] <= g["test ppl"] for f, g in rows)
    out.append(
        Claim(
            "FedRW (soft reweighting, α=1) matches or beats global hard deduplication",
            paper="FedRW outperforms EP-MPD-style deletion (experiments)",
            measured="; ".join(
                f"ρ={r}: {f['test ppl']:.3f} vs {g['test ppl']:.3f}"
                for r, (f, g) in zip(rhos, rows, strict=True)
            ),
            verdict="held" if (ok if seeds > 1 else tie_or_better) else "not held",
            why="within 2 sd counts as a tie" if seeds > 1 else "one seed: lower or equal mean",
        )
    )
    # 3. the gap grows with rho
    if len(rhos) > 1:
        gaps = [
            get[(r, LABELS["none"])]["test ppl"] - get[(r, LABELS["fedrw"])]["test ppl"]
            for r in rhos
        ]
        out.append(
            Claim(
                GAP_CLAIM,
                paper="gains grow with duplication (experiments)",
                measured=", ".join(f"ρ={r}: {g:+.3f}" for r, g in zip(rhos, gaps, strict=True)),
                verdict="held"
                if all(b > a for a, b in zip(gaps, gaps[1:], strict=False)) and gaps[-1] > 0
                else "not held",
                why="difference of seed means",
            )
        )
    else:
        out.append(
            Claim(
                GAP_CLAIM,
                paper="gains grow with duplication (experiments)",
                measured="one ρ in the quick run",
                verdict="not testable here",
                why="the full run compares ρ = 0.1 and 0.3",
            )
        )
    if ablation:
        final = {r["method"]: r["final ppl"] for r in ablation}
        local = min(final[LABELS["none"]], final[LABELS["local_dedup"]])
        wins = [final[LABELS[m]] < local for m in ("fedrw", "global_dedup")]
        out.append(
            Claim(
                "With longer training at a higher duplication rate, the global methods beat no "
                "and local deduplication",
                paper="≈11.42% better perplexity (abstract)",
                measured=f"ρ={ablation[0]['rho']}, {len(ablation[0]['curve'])} rounds: "
                + ", ".join(f"{m} {v:.3f}" for m, v in final.items()),
                verdict="held" if all(wins) else ("partly" if any(wins) else "not held"),
                why="one seed: a single run, no spread; an ablation of the scale, not the paper's "
                "setting",
            )
        )
    # 4. exactness
    out.append(
        Claim(
            "The secure protocol computes every sample's exact global frequency",
            paper="exact F(x) without a trusted party (PPMPR protocol)",
            measured="F equals the plaintext Counter" if exact else "F differs from the Counter",
            verdict="held" if exact else "not held",
            why="every corpus of the run; parallel, sequential and TTP agree too"
            if all(r["same F"] for r in timing)
            else "parallel, sequential and TTP disagree",
        )
    )
    # 5. parallel orchestration scales with rounds
    ks = [r["K"] for r in timing]
    s_par = loglog_slope(ks, [r["parallel path s"] for r in timing])
    s_seq = loglog_slope(ks, [r["sequential path s"] for r in timing])
    big = timing[-1]
    path_gain = big["sequential path s"] / big["parallel path s"]
    out.append(
        Claim(
            "Round-robin parallel PSI scales linearly in K (rounds), the sequential schedule "
            "quadratically (pairs)",
            paper="K-1 rounds instead of K(K-1)/2 pairs (parallel orchestration)",
            measured=f"critical-path log-log slope {s_par:.2f} vs {s_seq:.2f}; at K={big['K']} "
            f"{big['parallel path s']:.2f} s vs {big['sequential path s']:.2f} s "
            f"({path_gain:.1f}×, {big['parallel rounds']} vs {big['sequential rounds']} rounds)",
            verdict="held" if s_seq - s_par >= 0.7 and path_gain > 1 else "not held",
            why="critical path = measured CPU seconds of each client's sessions along the "
            "schedule (one core per client); about 130 samples per client for every K; theory: "
            "(K-1) vs K(K-1)/2, slopes differ by 1 (held when they differ by >= 0.7)",
        )
    )
    out.append(
        Claim(
            "Round-robin parallel PSI is faster in wall time than the sequential schedule",
            paper="up to 28.78× faster preprocessing than EP-MPD (abstract)",
            measured=f"K={big['K']}: {big['parallel s']:.2f} s vs {big['sequential s']:.2f} s "
            f"({big['speed-up']:.2f}×)",
            verdict="held"
            if big["speed-up"] > 1.2
            else ("partly" if big["speed-up"] > 1 else "not held"),
            why="our own implementations only (not EP-MPD); this machine's 2 shared cores cap "
            "the concurrency of the K/2 pairs of a round at 2",
        )
    )
    out.append(
        Claim(
            "FedRW's preprocessing is faster than the trusted-party deduplication of EP-MPD",
            paper="28.78× speed-up over EP-MPD (abstract)",
            measured=f"K={big['K']}: PSI {big['parallel s']:.2f} s vs HMAC-to-TTP "
            f"{big['TTP s']:.3f} s",
            verdict="not testable here",
            why="EP-MPD's protocol is not implemented here; our TTP baseline only hashes (no "
            "public-key operation), so it is the fastest possible trusted-party scheme, not EP-MPD",
        )
    )
    return out


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Run (1)-(3) at the sizes of ``RUNS[quick]``; print the tables, plot, return the claims."""
    out = Path(out)
    run = RUNS[quick]
    rows, curves, exact = _perplexity(run, seed)
    summary = _summary(rows)
    print_table(summary, title="test perplexity after the last round (mean ± sd over seeds)")
    ablation = _ablation(run["ablation"], seed, run["n_chunks"]) if run["ablation"] else []
    if ablation:
        print_table(
            [{k: v for k, v in r.items() if k != "curve"} for r in ablation],
            title="longer run at a higher duplication rate (one seed)",
        )
    timing = _timing(run["ks"], seed)
    print_table(timing, title="preprocessing: PSI parallel vs sequential vs trusted party")
    fig, axes = figure(1, 3, size=(15, 3.8))
    rho = max(run["rhos"])
    for method in METHODS:
        mean = np.mean(curves[(rho, method)], axis=0)
        axes[0, 0].plot(range(1, len(mean) + 1), mean, marker="o", label=LABELS[method])
    axes[0, 0].set(xlabel="FL round", ylabel="test perplexity", title=f"ρ = {rho}", yscale="log")
    axes[0, 0].legend(fontsize="small")
    ks = [r["K"] for r in timing]
    for key in ("parallel s", "sequential s", "TTP s"):
        axes[0, 1].plot(ks, [r[key] for r in timing], marker="o", label=key[:-2])
    axes[0, 1].set(xlabel="clients K", ylabel="seconds", title="preprocessing time", yscale="log")
    axes[0, 1].legend(fontsize="small")
    for r in ablation:
        axes[0, 2].plot(range(1, len(r["curve"]) + 1), r["curve"], marker=".", label=r["method"])
    title = f"longer run, ρ = {ablation[0]['rho']}" if ablation else "longer run (full run only)"
    axes[0, 2].set(xlabel="FL round", ylabel="test perplexity", title=title, yscale="log")
    if ablation:
        axes[0, 2].legend(fontsize="small")
    figure_path = save_figure(fig, out / "fedrw.png")
    corpus = make_duplicated_corpus(CLIENTS, rho, seed=seed, n_chunks=run["n_chunks"])
    return Report(
        claims=claims(summary, timing, exact, run["seeds"], ablation),
        tables={
            "perplexity": summary,
            "per_run": rows,
            "preprocessing": timing,
            "longer_run": ablation,
        },
        figures=[figure_path],
        settings={
            **run,
            "clients": CLIENTS,
            "alpha": 1.0,
            "model": "char GRU emb 32 hidden 128",
            "optimizer": "Adam lr 2e-3, batch 32",
            "corpus": corpus.info,
        },
        data={"curves": {f"{r}/{m}": v for (r, m), v in curves.items()}},
    )
