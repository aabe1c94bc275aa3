r"""Benchmark: dense-bias attention against FlashBias over the sequence length N.

``flashbias bench [--quick] [--device cpu|cuda]`` times the forward and forward+backward of

* ``dense``: the bias :math:`\phi_q\phi_k^\top` materialised as an (B, H, N, N) float mask and
  passed to torch SDPA (what a model with a dense bias does);
* ``flashbias``: :func:`flashbias.flash_bias_attention` with ``backend="sdpa"`` (the factors
  concatenated to q and k, no N x N tensor);
* on a GPU also ``triton`` (the fused kernels) and ``nobias`` (SDPA without bias, an upper bound),

at H=8, d=32, rank R, one :class:`paperkit.Measurement` per (mode, R, N, path) with
``case = "<mode> R=<R>"``: median seconds (``paperkit.measure``) and peak bytes. It reports the
speed-up and peak-memory ratio per N, the speed-up at the largest N and the crossover
(``paperkit.scaling``), and the log-log slope of peak memory against N (about 2 for the dense bias,
about 1 for FlashBias).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from flashbias.attention import flash_bias_attention
from flashbias.decompose import factors_to_dense
from paperkit import (
    Claim,
    Measurement,
    Report,
    figure,
    loglog_slope,
    measure,
    plot_scaling,
    print_table,
    progress,
    save_figure,
    scaling,
)

__all__ = ["RUNS", "bench", "memory_slopes", "ratios", "speed_claim", "speed_memory"]

HEADS, D_HEAD = 8, 32
MIB = 2**20
#: The sizes per (device kind, quick): sequence lengths, the largest N of the forward+backward
#: timings, the ranks R, and the seconds each timing runs for at least.
RUNS: dict[tuple[str, bool], dict[str, Any]] = {
    (kind, quick): {"lengths": lengths, "fwd_bwd_max": top, "ranks": [2, 16], "min_time": 0.5}
    for kind, quick, lengths, top in (
        ("cpu", True, [512, 1024, 2048], 2048),
        ("cpu", False, [512, 1024, 2048, 4096, 8192], 4096),
        ("cuda", True, [512, 1024, 2048, 4096, 8192], 8192),
        ("cuda", False, [512, 1024, 2048, 4096, 8192, 16384], 16384),
    )
}
#: The speed-up the paper reports for attention with bias in vision and language models.
PAPER_SPEEDUP = 1.5


def _step(path: str, N: int, R: int, backward: bool, device: str) -> Callable[[], None]:
    g = torch.Generator().manual_seed(N + R)
    q, k, v = (torch.randn(1, N, HEADS, D_HEAD, generator=g).to(device) for _ in range(3))
    q_b, k_b = (0.3 * torch.randn(1, N, HEADS, R, generator=g).to(device) for _ in range(2))
    leaves = [x.requires_grad_(backward) for x in (q, k, v, q_b, k_b)]

    def forward() -> torch.Tensor:
        if path == "dense":
            bias = factors_to_dense(q_b, k_b)
            return F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), attn_mask=bias
            )
        if path == "nobias":
            return F.scaled_dot_product_attention(
                q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2)
            )
        backend = "triton" if path == "triton" else "sdpa"
        return flash_bias_attention(q, k, v, q_b, k_b, backend=backend)

    def run() -> None:
        out = forward()
        if backward:
            out.sum().backward()
            for x in leaves:
                x.grad = None

    return run


def speed_memory(
    lengths: Sequence[int],
    ranks: Sequence[int],
    paths: Sequence[str],
    device: str,
    fwd_bwd_max: int,
    min_time: float = 0.5,
) -> list[Measurement]:
    """One measurement per (mode, R, N, path), ``case = "<mode> R=<R>"``; forward+backward up
    to N = ``fwd_bwd_max``; each timing runs for at least ``min_time`` seconds."""
    cases = [
        (mode, R, N, path)
        for mode in ("fwd", "fwd+bwd")
        for R in ranks
        for N in lengths
        for path in paths
        if mode == "fwd" or fwd_bwd_max >= N
    ]
    return [
        measure(
            path,
            N,
            _step(path, N, R, mode == "fwd+bwd", device),
            device=device,
            case=f"{mode} R={R}",
            params={"mode": mode, "R": R, "heads": HEADS, "d": D_HEAD},
            warmup=2,
            min_time=min_time,
        )
        for mode, R, N, path in progress(cases, "speed/memory")
    ]


def _cases(rows: Sequence[Measurement]) -> list[str]:
    return list(dict.fromkeys(r.case for r in rows))


def ratios(rows: Sequence[Measurement], candidate: str = "flashbias") -> list[dict[str, Any]]:
    """Per (mode, R, N): speed-up (dense time / candidate time) and memory ratio (dense peak /
    candidate peak), with the peaks in MiB (2**20 bytes)."""
    index = {(r.case, r.size, r.impl): r for r in rows}
    table = []
    for case in _cases(rows):
        for N in sorted({r.size for r in rows if r.case == case}):
            dense, mine = index.get((case, N, "dense")), index.get((case, N, candidate))
            if dense is None or mine is None:
                continue
            table.append(
                {
                    "mode": dense.params["mode"],
                    "R": dense.params["R"],
                    "N": N,
                    "dense_s": dense.seconds,
                    f"{candidate}_s": mine.seconds,
                    "speedup": dense.seconds / mine.seconds,
                    "dense_MiB": dense.peak_bytes / MIB,
                    f"{candidate}_MiB": mine.peak_bytes / MIB,
                    "memory_ratio": dense.peak_bytes / max(mine.peak_bytes, 1),
                }
            )
    return table


def largest_n(rows: Sequence[Measurement], candidate: str = "flashbias") -> list[dict[str, Any]]:
    """Per case, from :func:`paperkit.scaling` against ``dense``: the speed-up at the largest N
    and the crossover N from which the candidate stays faster (None: it never does)."""
    table = []
    for case in _cases(rows):
        fit = scaling(rows, baseline="dense", case=case).get(candidate)
        if fit is None:
            continue
        table.append(
            {
                "case": case,
                "path": candidate,
                "largest N": fit["sizes"][-1],
                "speedup at largest N": fit["speedup_at_largest"],
                "crossover N": fit["crossover"],
                "time slope": fit["slope"],
            }
        )
    return table


def memory_slopes(rows: Sequence[Measurement]) -> list[dict[str, Any]]:
    """Log-log slope of peak bytes against N per (case, path)."""
    table = []
    for case in _cases(rows):
        for path in dict.fromkeys(r.impl for r in rows if r.case == case):
            mine = [r for r in rows if (r.case, r.impl) == (case, path)]
            if len(mine) >= 2:
                sizes = [r.size for r in mine]
                peaks = [max(r.peak_bytes, 1) for r in mine]
                table.append(
                    {"case": case, "path": path, "memory_slope": loglog_slope(sizes, peaks)}
                )
    return table


def speed_claim(table: Sequence[dict[str, Any]], device: str, where: str) -> Claim:
    """The paper's speed-up against the speed-up at the largest N of every case: held when every
    case reaches ``PAPER_SPEEDUP``, partly when some do, not held when none does."""
    speedups = {r["case"]: r["speedup at largest N"] for r in table}
    path = table[0]["path"] if table else "flashbias"
    reached = [c for c, s in speedups.items() if s >= PAPER_SPEEDUP]
    if not speedups:
        verdict = "not testable here"
    elif len(reached) == len(speedups):
        verdict = "held"
    else:
        verdict = "partly" if reached else "not held"
    return Claim(
        f"FlashBias ({path}) is faster than attention with the dense bias",
        paper=f"{PAPER_SPEEDUP}x (AlphaFold 3 Pairformer) and over 2x (vision and language "
        "models) on GPUs (abstract)",
        measured=", ".join(f"{c}: {s:.2f}x" for c, s in speedups.items()),
        verdict=verdict,
        why=f"speed-up over dense-bias SDPA at the largest N on {device} ({where}); held when "
        f"every case reaches {PAPER_SPEEDUP}x, partly when some do",
    )


def memory_claim(slopes: Sequence[dict[str, Any]], where: str) -> Claim:
    """Held when every dense slope exceeds 1.7 and every FlashBias slope stays below 1.3."""
    dense = [r["memory_slope"] for r in slopes if r["path"] == "dense"]
    mine = [r["memory_slope"] for r in slopes if r["path"] != "dense"]
    statement = "FlashBias never materialises the N x M bias: peak memory O(N R) instead of O(N^2)"
    paper = "no N x M bias in memory (the factorised form of the biased scores)"
    if not dense or not mine:
        return Claim(statement, paper, "no slope: one N only", "not testable here", where)
    ok_dense, ok_mine = all(s > 1.7 for s in dense), all(s < 1.3 for s in mine)
    verdict = "held" if ok_dense and ok_mine else ("partly" if ok_mine else "not held")
    return Claim(
        statement,
        paper=paper,
        measured=f"log-log slope of peak bytes in N: dense {min(dense):.2f}-{max(dense):.2f}, "
        f"FlashBias {min(mine):.2f}-{max(mine):.2f}",
        verdict=verdict,
        why=f"{where}; held when every dense slope > 1.7 and every FlashBias slope < 1.3",
    )


def plot_memory(rows: Sequence[Measurement], path: Path) -> Path:
    """Peak MiB against N, log-log, one line per (path, case)."""
    fig, ax = figure(size=(6, 4))
    for case in _cases(rows):
        for impl in dict.fromkeys(r.impl for r in rows if r.case == case):
            mine = [r for r in rows if (r.case, r.impl) == (case, impl)]
            peaks = [max(r.peak_bytes, 1) / MIB for r in mine]
            ax.loglog([r.size for r in mine], peaks, "o-", label=f"{impl} {case}")
    ax.set(xlabel="N", ylabel="peak MiB (2**20 bytes)", title="peak memory")
    ax.legend(fontsize=6)
    return save_figure(fig, path)


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Time and peak memory of dense-bias SDPA against FlashBias over N at the sizes of
    :data:`RUNS`; ratios, speed-up at the largest N, memory slopes; ``time_<case>.png`` per case
    and ``memory.png``."""
    out = Path(out)
    on_gpu = device.startswith("cuda")
    run = RUNS[("cuda" if on_gpu else "cpu", quick)]
    lengths, fwd_bwd_max, ranks = run["lengths"], run["fwd_bwd_max"], run["ranks"]
    paths = ["dense", "flashbias"] + (["triton", "nobias"] if on_gpu else [])
    rows = speed_memory(lengths, ranks, paths, device, fwd_bwd_max, run["min_time"])
    where = f"H={HEADS}, d={D_HEAD}, B=1, N={lengths[0]}-{lengths[-1]}"
    tables = {"ratios": ratios(rows)}
    print_table(tables["ratios"], title=f"dense-bias SDPA vs FlashBias (sdpa) on {device}")
    candidates = ["flashbias"] + (["triton"] if on_gpu else [])
    for candidate in candidates[1:]:
        tables[f"ratios_{candidate}"] = ratios(rows, candidate)
        print_table(
            tables[f"ratios_{candidate}"], title=f"dense-bias SDPA vs FlashBias ({candidate})"
        )
    tables["largest_n"] = [r for c in candidates for r in largest_n(rows, c)]
    print_table(tables["largest_n"], title="speed-up at the largest N and crossover (scaling)")
    tables["memory_slopes"] = memory_slopes(rows)
    print_table(tables["memory_slopes"], title="log-log slope of peak memory in N")
    claims = [
        speed_claim([r for r in tables["largest_n"] if r["path"] == c], device, where)
        for c in candidates
    ]
    claims.append(memory_claim(tables["memory_slopes"], where))
    figures = [
        plot_scaling(rows, out / f"time_{case.replace(' ', '_').replace('=', '')}.png", case=case,
                     title=f"{case}, H={HEADS}, d={D_HEAD}", xlabel="N")
        for case in _cases(rows)
    ]  # fmt: skip
    figures.append(plot_memory(rows, out / "memory.png"))
    return Report(
        claims=claims,
        tables=tables,
        figures=figures,
        settings={
            "device": device,
            "lengths": lengths,
            "fwd_bwd_max": fwd_bwd_max,
            "ranks": list(ranks),
            "paths": paths,
            "heads": HEADS,
            "d": D_HEAD,
            "batch": 1,
            "min_time_s": run["min_time"],
            "warmup": 2,
        },
        measurements=rows,
    )
