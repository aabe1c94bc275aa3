r"""``cbsa bench [--quick]``: forward+backward time and peak memory of one attention layer.

* against N at fixed m = 64: CBSA (``rep_init="pool1d"``), MSSA and softmax attention, batch 1,
  dim 64, 4 heads of 16; log-log slopes of time and peak memory (about 1 for CBSA, 2 for the
  others) and CBSA's speed-up and memory ratio at the largest N all three run at;
* against m at fixed N: CBSA alone (the O(N m p) term, slope about 1 in m once it dominates).

One :class:`paperkit.Measurement` per (case, impl, size); torch runs on one thread.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from cbsa.baselines import MSSA, SoftmaxAttention
from cbsa.layers import CBSA
from paperkit import (
    Claim,
    Measurement,
    Report,
    loglog_slope,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["RUNS", "bench"]

DIM, HEADS, DIM_HEAD = 64, 4, 16
MIB = 2**20
#: Sizes per quick: lengths N (m = 64), the largest N of the quadratic layers, the m sweep and
#: its N, and the seconds each timing runs for at least.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "lengths": [256, 512, 1024, 2048],
        "quad_max": 2048,
        "reps": [16, 64, 256],
        "reps_N": 4096,
        "min_time": 0.1,
    },
    False: {
        "lengths": [256, 512, 1024, 2048, 4096, 8192],
        "quad_max": 4096,
        "reps": [16, 32, 64, 128, 256],
        "reps_N": 8192,
        "min_time": 0.2,
    },
}


def _layer(impl: str, m: int) -> torch.nn.Module:
    if impl == "cbsa":
        return CBSA(DIM, HEADS, DIM_HEAD, num_reps=m, rep_init="pool1d", has_cls=False)
    return {"mssa": MSSA, "softmax": SoftmaxAttention}[impl](DIM, HEADS, DIM_HEAD)


def _step(impl: str, N: int, m: int) -> Any:
    torch.manual_seed(N + m)
    layer = _layer(impl, m)
    x = torch.randn(1, N, DIM, requires_grad=True)

    def run() -> None:
        layer(x).sum().backward()
        layer.zero_grad(set_to_none=True)
        x.grad = None

    return run


def _slope(rows: list[Measurement], impl: str, case: str, key: str) -> float:
    mine = [r for r in rows if r.impl == impl and r.case == case]
    values = [max(getattr(r, key), 1) if key == "peak_bytes" else getattr(r, key) for r in mine]
    return loglog_slope([r.size for r in mine], values)


def bench(*, quick: bool = False, device: str = "cpu", out: Path | str = ".") -> Report:
    """Time and peak memory against N and against m; the slopes and ratios as claims."""
    out = Path(out)
    cfg = RUNS[bool(quick)]
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        jobs = [
            ("vs N", impl, N, 64)
            for N in cfg["lengths"]
            for impl in ("cbsa", "mssa", "softmax")
            if impl == "cbsa" or cfg["quad_max"] >= N
        ]
        jobs += [("vs m", "cbsa", m, m) for m in cfg["reps"]]
        rows = []
        for case, impl, size, m in progress(jobs, "bench"):
            N = cfg["reps_N"] if case == "vs m" else size
            rows.append(
                measure(
                    impl,
                    size,
                    _step(impl, N, m),
                    device=device,
                    case=case,
                    warmup=1,
                    min_time=cfg["min_time"],
                    min_repeats=3,
                    params={"N": N, "m": m, "dim": DIM, "heads": HEADS},
                )
            )
    finally:
        torch.set_num_threads(threads)
    table = [
        {
            "case": r.case,
            "impl": r.impl,
            "N": r.params["N"],
            "m": r.params["m"],
            "ms": 1e3 * r.seconds,
            "iqr_ms": 1e3 * r.spread,
            "peak_MiB": r.peak_bytes / MIB,
        }
        for r in rows
    ]
    slopes = [
        {
            "impl": impl,
            "time_slope_N": _slope(rows, impl, "vs N", "seconds"),
            "memory_slope_N": _slope(rows, impl, "vs N", "peak_bytes"),
        }
        for impl in ("cbsa", "mssa", "softmax")
    ]
    m_slope = _slope(rows, "cbsa", "vs m", "seconds")
    slopes.append(
        {
            "impl": "cbsa (vs m)",
            "time_slope_m": m_slope,
            "memory_slope_m": _slope(rows, "cbsa", "vs m", "peak_bytes"),
        }
    )
    fit = scaling(rows, baseline="mssa", case="vs N")
    top = cfg["quad_max"]
    at = {r.impl: r for r in rows if r.case == "vs N" and r.size == top}
    speedup = at["mssa"].seconds / at["cbsa"].seconds
    mem_ratio = at["mssa"].peak_bytes / max(at["cbsa"].peak_bytes, 1)
    print_table(table, title="forward+backward, one layer (CPU, 1 thread)")
    print_table(slopes, title="log-log slopes")
    s = {r["impl"]: r for r in slopes}
    linear = s["cbsa"]["time_slope_N"] <= 1.25
    quadratic = min(s["mssa"]["time_slope_N"], s["softmax"]["time_slope_N"]) >= 1.6
    claims = [
        Claim(
            "CBSA's time grows linearly in N at fixed m, MSSA's and softmax attention's "
            "quadratically",
            paper="O(Nm) vs O(N^2) (Sec. 3.2)",
            measured=(
                f"fwd+bwd time slopes: cbsa {s['cbsa']['time_slope_N']:.2f}, mssa "
                f"{s['mssa']['time_slope_N']:.2f}, softmax "
                f"{s['softmax']['time_slope_N']:.2f}; at N = {top} CBSA is "
                f"{speedup:.1f}x faster than MSSA (crossover N = "
                f"{fit['cbsa']['crossover']})"
            ),
            verdict="held"
            if linear and quadratic
            else ("partly" if linear or quadratic else "not held"),
            why=f"N = {cfg['lengths'][0]}..{cfg['lengths'][-1]} (quadratic layers to {top}), "
            "batch 1, one CPU thread",
        ),
        Claim(
            "CBSA's memory grows linearly in N, the N x N attention's quadratically",
            paper="O(Nm) vs O(N^2) memory",
            measured=(
                f"peak-memory slopes: cbsa {s['cbsa']['memory_slope_N']:.2f}, mssa "
                f"{s['mssa']['memory_slope_N']:.2f}, softmax "
                f"{s['softmax']['memory_slope_N']:.2f}; at N = {top} MSSA needs "
                f"{mem_ratio:.1f}x CBSA's peak"
            ),
            verdict="held"
            if s["cbsa"]["memory_slope_N"] <= 1.25 and s["mssa"]["memory_slope_N"] >= 1.6
            else "partly",
            why="growth of the process's peak resident set during one fwd+bwd call",
        ),
        Claim(
            "At fixed N, CBSA's cost grows at most linearly in the number of representatives m",
            paper="O(N m p) per head",
            measured=f"time slope in m = {m_slope:.2f} (m = {cfg['reps'][0]}..{cfg['reps'][-1]}, "
            f"N = {cfg['reps_N']})",
            verdict="held" if m_slope <= 1.1 else "not held",
            why="projections (independent of m) dominate at small m, so the slope is below 1",
        ),
    ]
    figures = [
        plot_scaling(
            rows, out / "bench_vs_N.png", case="vs N", xlabel="tokens N", title="fwd+bwd, m = 64"
        )
    ]
    return Report(
        claims=claims,
        tables={"measurements": table, "slopes": slopes},
        figures=figures,
        settings={**cfg, "dim": DIM, "heads": HEADS, "dim_head": DIM_HEAD, "threads": 1},
        measurements=rows,
    )
