"""The efficiency claims: ``fedrw bench [--quick] [--out DIR]`` (CPU only; OpenSSL does the curve).

1. Per-item cost of the OPRF steps (hash-to-curve, blind, evaluate, unblind) in microseconds.
2. Labelled PSI between two clients against the set size n (half of the items shared): wall
   seconds and CPU seconds along the critical path; a log-log slope near 1 shows linear cost.
3. Preprocessing against the number of clients K for the round-robin parallel schedule, the
   sequential baseline and the trusted-party (HMAC) baseline, timed in alternating rounds, with
   bytes and rounds. Wall times on a shared 2-core machine cap the parallel gain; the critical
   path (CPU seconds of each client's sessions along the schedule) is what K cores would see.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from fedrw.curve import hash_to_curve
from fedrw.oprf import OPRFKey, blind, unblind
from fedrw.protocol import secure_global_frequencies
from fedrw.ttp import ttp_global_frequencies
from paperkit import (
    Claim,
    Measurement,
    Report,
    loglog_slope,
    measure,
    measure_interleaved,
    plot_scaling,
    print_table,
    ratio_spread,
)

__all__ = ["RUNS", "bench"]

#: Sizes of the quick (True) and full (False) benchmark.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"items": 50, "sizes": [50, 100, 200], "ks": [2, 4, 8], "per_client": 30, "repeats": 2},
    False: {
        "items": 200,
        "sizes": [100, 200, 400, 800],
        "ks": [2, 4, 6, 8],
        "per_client": 60,
        "repeats": 3,
    },
}
US = 1e6


def _datasets(k: int, n: int) -> list[list[str]]:
    """K clients with n distinct items each; half of every client's items are shared by all."""
    shared = [f"shared-{i}" for i in range(n // 2)]
    return [[*shared, *(f"own-{c}-{i}" for i in range(n - n // 2))] for c in range(k)]


def _oprf_steps(n: int, repeats: int) -> list[Measurement]:
    items = [f"item-{i}".encode() for i in range(n)]
    key = OPRFKey.generate()
    queries, state = blind(items)
    answers = [key.evaluate(q) for q in queries]
    steps = {
        "hash_to_curve": lambda: [hash_to_curve(x) for x in items],
        "blind": lambda: blind(items),
        "evaluate": lambda: [key.evaluate(q) for q in queries],
        "unblind": lambda: unblind(answers, state),
    }
    return [
        measure(name, n, fn, case="oprf", memory=False, min_repeats=repeats, min_time=0)
        for name, fn in steps.items()
    ]


def _paths(fn: Any, repeats: int) -> tuple[float, float]:
    runs = [fn() for _ in range(repeats)]
    return (
        statistics.median(r.critical_path_seconds for r in runs),
        statistics.median(r.bytes_total for r in runs),
    )


def _psi_sizes(sizes: list[int], repeats: int) -> list[Measurement]:
    rows = []
    for n in sizes:
        data = _datasets(2, n)
        wall = measure(
            "psi wall",
            n,
            lambda data=data: secure_global_frequencies(data),
            case="psi vs n",
            memory=False,
            min_repeats=repeats,
            min_time=0,
        )
        path, nbytes = _paths(lambda data=data: secure_global_frequencies(data), repeats)
        rows.append(wall)
        rows.append(
            Measurement(
                "psi critical path",
                n,
                path,
                0.0,
                None,
                "cpu",
                "psi vs n",
                repeats,
                {"bytes": nbytes},
            )
        )
    return rows


def _by_k(ks: list[int], per_client: int, repeats: int) -> list[Measurement]:
    rows = []
    for k in ks:
        data = _datasets(k, per_client)
        fns = {
            "parallel": lambda data=data: secure_global_frequencies(data, parallel=True),
            "sequential": lambda data=data: secure_global_frequencies(data, parallel=False),
            "ttp": lambda data=data: ttp_global_frequencies(data),
        }
        timed = measure_interleaved(
            fns,
            k,
            case="preprocessing vs K",
            memory=False,
            min_repeats=repeats,
            min_time=0,
            warmup=0,
        )
        for row in timed:
            if row.impl != "ttp":
                path, nbytes = _paths(fns[row.impl], 1)
                rows.append(
                    Measurement(
                        f"{row.impl} critical path",
                        k,
                        path,
                        0.0,
                        None,
                        "cpu",
                        "critical path vs K",
                        1,
                        {"bytes": nbytes},
                    )
                )
            else:
                nbytes = fns["ttp"]().bytes_total
            row.params["bytes"] = nbytes
            rows.append(row)
    return rows


def _get(rows: list[Measurement], case: str, impl: str, size: Any) -> Measurement:
    return next(r for r in rows if (r.case, r.impl, r.size) == (case, impl, size))


def _claims(rows: list[Measurement], run: dict[str, Any]) -> list[Claim]:
    sizes, ks = run["sizes"], run["ks"]
    path_n = [_get(rows, "psi vs n", "psi critical path", n).seconds for n in sizes]
    slope_n = loglog_slope(sizes, path_n)
    par = [_get(rows, "critical path vs K", "parallel critical path", k).seconds for k in ks]
    seq = [_get(rows, "critical path vs K", "sequential critical path", k).seconds for k in ks]
    s_par, s_seq = loglog_slope(ks, par), loglog_slope(ks, seq)
    kmax = ks[-1]
    wall = ratio_spread(
        _get(rows, "preprocessing vs K", "sequential", kmax),
        _get(rows, "preprocessing vs K", "parallel", kmax),
    )
    ttp = ratio_spread(
        _get(rows, "preprocessing vs K", "parallel", kmax),
        _get(rows, "preprocessing vs K", "ttp", kmax),
    )
    same_bytes = all(
        _get(rows, "preprocessing vs K", "parallel", k).params["bytes"]
        == _get(rows, "preprocessing vs K", "sequential", k).params["bytes"]
        for k in ks
    )
    per_item = {r.impl: US * r.seconds / r.size for r in rows if r.case == "oprf"}
    return [
        Claim(
            "Labelled PSI costs time linear in the set size",
            paper="O(n) public-key operations per direction (PPMPR)",
            measured=f"critical-path log-log slope {slope_n:.2f} over n = {sizes}",
            verdict="held" if 0.8 <= slope_n <= 1.2 else "not held",
            why="two clients, half of the items shared; held when the slope is in [0.8, 1.2]",
        ),
        Claim(
            "The round-robin schedule's cost grows linearly in K, the sequential one's "
            "quadratically",
            paper="K-1 rounds instead of K(K-1)/2 pairs (parallel orchestration)",
            measured=f"critical-path slopes {s_par:.2f} vs {s_seq:.2f}; at K={kmax} "
            f"{par[-1]:.3f} s vs {seq[-1]:.3f} s ({seq[-1] / par[-1]:.1f}×)",
            verdict="held" if s_seq - s_par >= 0.7 and seq[-1] > par[-1] else "not held",
            why=f"{run['per_client']} items per client for every K; critical path = CPU seconds "
            "of the clients' sessions along the schedule, one core per client; theory (K-1) vs "
            "K(K-1)/2: slopes differ by 1 (held when they differ by >= 0.7)",
        ),
        Claim(
            "On this machine the parallel schedule is faster in wall time than the sequential one",
            paper="up to 28.78× faster preprocessing than EP-MPD (abstract)",
            measured=f"K={kmax}: sequential / parallel wall time {wall[0]:.2f}× "
            f"(IQR {wall[1]:.2f}–{wall[2]:.2f})",
            verdict="held" if wall[0] > 1.2 else ("partly" if wall[0] > 1 else "not held"),
            why="same-round ratios (alternating rounds); 2 shared cores cap the concurrency; "
            "our own implementations only, not EP-MPD",
        ),
        Claim(
            "Parallel and sequential schedules exchange the same bytes",
            paper="the schedule changes the order, not the messages (parallel orchestration)",
            measured="equal at every K" if same_bytes else "different",
            verdict="held" if same_bytes else "not held",
            why="sum of the logged message lengths",
        ),
        Claim(
            "Per-item OPRF costs (µs): hash-to-curve, blind, evaluate, unblind",
            paper="no per-item numbers in the paper",
            measured=", ".join(f"{k} {v:.0f}" for k, v in per_item.items())
            + f"; HMAC trusted party is {ttp[0]:.0f}× faster than the PSI at K={kmax}",
            verdict="not testable here",
            why="reported for reference; OpenSSL P-256 via cryptography",
        ),
    ]


def _table(rows: list[Measurement], case: str, key: str) -> list[dict[str, Any]]:
    out: dict[Any, dict[str, Any]] = {}
    for r in rows:
        if r.case == case:
            row = out.setdefault(r.size, {key: r.size})
            row[f"{r.impl} s"] = r.seconds
            if "bytes" in r.params:
                row[f"{r.impl.split()[0]} bytes"] = r.params["bytes"]
    return list(out.values())


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Run 1-3 at the sizes of ``RUNS[quick]``; print the tables; plot the scaling."""
    out = Path(out)
    run = RUNS[quick]
    rows = _oprf_steps(run["items"], run["repeats"])
    oprf = [{"step": r.impl, "µs per item": US * r.seconds / r.size, "items": r.size} for r in rows]
    print_table(oprf, title="OPRF steps, per item")
    rows += _psi_sizes(run["sizes"], run["repeats"])
    rows += _by_k(run["ks"], run["per_client"], run["repeats"])
    tables = {
        "oprf": oprf,
        "psi_vs_n": _table(rows, "psi vs n", "n"),
        "preprocessing_vs_K": [
            {**a, **b}
            for a, b in zip(
                _table(rows, "preprocessing vs K", "K"),
                _table(rows, "critical path vs K", "K"),
                strict=True,
            )
        ],
    }
    for n in tables["psi_vs_n"]:
        n["items/s (critical path)"] = 2 * n["n"] / n["psi critical path s"]
    print_table(tables["psi_vs_n"], title="two-client PSI against the set size n")
    print_table(tables["preprocessing_vs_K"], title="preprocessing against K")
    figures = [
        plot_scaling(rows, out / "psi_vs_n.png", case="psi vs n", xlabel="items per client n"),
        plot_scaling(
            rows, out / "critical_path_vs_K.png", case="critical path vs K", xlabel="clients K"
        ),
        plot_scaling(rows, out / "wall_vs_K.png", case="preprocessing vs K", xlabel="clients K"),
    ]
    return Report(
        claims=_claims(rows, run),
        tables=tables,
        figures=figures,
        settings={**run, "device": "cpu", "curve": "P-256 (OpenSSL via cryptography)"},
        measurements=rows,
    )
