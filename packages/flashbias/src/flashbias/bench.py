r"""Benchmark: dense-bias attention against FlashBias over the sequence length N.

``flashbias bench [--quick] [--device cpu|cuda]`` times the forward and forward+backward of

* ``dense``: the bias :math:`\phi_q\phi_k^\top` materialised as an (B, H, N, N) float mask and
  passed to torch SDPA (what a model with a dense bias does);
* ``flashbias``: :func:`flashbias.flash_bias_attention` with ``backend="sdpa"`` (the factors
  concatenated to q and k, no N x N tensor);
* on a GPU also ``triton`` (the fused kernel) and ``nobias`` (SDPA without bias, an upper bound),

at H=8, d=32, rank R, and reports the speed-up and peak-memory ratio per N plus the log-log slope
of peak memory against N (about 2 for the dense bias, about 1 for FlashBias).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from flashbias.attention import flash_bias_attention
from flashbias.decompose import factors_to_dense
from paperkit import (
    figure,
    loglog_slope,
    peak_memory,
    print_table,
    progress,
    save_figure,
    time_callable,
)

__all__ = ["bench", "speed_memory"]

HEADS, D_HEAD = 8, 32


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
    lengths: list[int],
    ranks: list[int],
    paths: list[str],
    device: str,
    fwd_bwd_max: int,
    min_run_time: float = 0.5,
) -> list[dict[str, Any]]:
    """One row per (mode, R, N, path): median seconds and peak bytes; fwd+bwd up to
    ``fwd_bwd_max``."""
    cases = [
        (mode, R, N, path)
        for mode in ("fwd", "fwd+bwd")
        for R in ranks
        for N in lengths
        for path in paths
        if mode == "fwd" or fwd_bwd_max >= N
    ]
    rows = []
    for mode, R, N, path in progress(cases, "speed/memory"):
        fn = _step(path, N, R, mode == "fwd+bwd", device)
        t = time_callable(fn, device=device, warmup=2, min_run_time=min_run_time)
        mem = peak_memory(fn, device=device)
        rows.append(
            {
                "mode": mode,
                "R": R,
                "N": N,
                "path": path,
                "seconds": t.median_s,
                "peak_MB": mem / 2**20,
            }
        )
    return rows


def ratios(rows: list[dict[str, Any]], candidate: str = "flashbias") -> list[dict[str, Any]]:
    """Speed-up (dense time / candidate time) and memory ratio (dense peak / candidate peak)."""
    index = {(r["mode"], r["R"], r["N"], r["path"]): r for r in rows}
    out = []
    for (mode, R, N, path), r in index.items():
        if path != candidate or (mode, R, N, "dense") not in index:
            continue
        dense = index[(mode, R, N, "dense")]
        out.append(
            {
                "mode": mode,
                "R": R,
                "N": N,
                "dense_s": dense["seconds"],
                f"{candidate}_s": r["seconds"],
                "speedup": dense["seconds"] / r["seconds"],
                "dense_MB": dense["peak_MB"],
                f"{candidate}_MB": r["peak_MB"],
                "memory_ratio": dense["peak_MB"] / max(r["peak_MB"], 1e-9),
            }
        )
    return out


def memory_slopes(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Log-log slope of peak memory against N per (mode, R, path)."""
    keys = sorted({(r["mode"], r["R"], r["path"]) for r in rows})
    out = []
    for mode, R, path in keys:
        sel = [r for r in rows if (r["mode"], r["R"], r["path"]) == (mode, R, path)]
        if len(sel) >= 2:
            slope = loglog_slope([r["N"] for r in sel], [max(r["peak_MB"], 1e-6) for r in sel])
            out.append({"mode": mode, "R": R, "path": path, "memory_slope": slope})
    return out


def plot(rows: list[dict[str, Any]], path: Path) -> Path:
    """Time and peak memory against N, log-log, one line per (path, R, mode)."""
    fig, axes = figure(1, 2, size=(11, 4))
    axes = axes[0]
    for key in sorted({(r["path"], r["R"], r["mode"]) for r in rows}):
        sel = [r for r in rows if (r["path"], r["R"], r["mode"]) == key]
        label = f"{key[0]} R={key[1]} {key[2]}"
        axes[0].loglog([r["N"] for r in sel], [r["seconds"] for r in sel], "o-", label=label)
        axes[1].loglog([r["N"] for r in sel], [r["peak_MB"] for r in sel], "o-", label=label)
    axes[0].set(xlabel="N", ylabel="seconds", title="time")
    axes[1].set(xlabel="N", ylabel="peak MB", title="peak memory")
    axes[0].legend(fontsize=6)
    return save_figure(fig, path)


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    lengths: list[int] | None = None,
    ranks: list[int] | None = None,
    min_run_time: float = 0.5,
) -> dict[str, Any]:
    """Time/memory of dense-bias SDPA vs FlashBias over N; ratios, memory slopes, ``bench.png``.

    ``lengths``, ``ranks`` and ``min_run_time`` (seconds per timing) override the sizes (for
    smoke tests).
    """
    on_gpu = device.startswith("cuda")
    if lengths is None:
        top = (8192 if quick else 16384) if on_gpu else (2048 if quick else 8192)
        lengths = [n for n in (512, 1024, 2048, 4096, 8192, 16384) if n <= top]
    ranks = ranks or [2, 16]
    paths = ["dense", "flashbias"] + (["triton", "nobias"] if on_gpu else [])
    fwd_bwd_max = max(lengths) if on_gpu or quick else 4096
    rows = speed_memory(lengths, ranks, paths, device, fwd_bwd_max, min_run_time)
    table = ratios(rows)
    print_table(table, title=f"dense-bias SDPA vs FlashBias (sdpa) on {device}")
    results: dict[str, Any] = {"rows": rows, "ratios": table, "slopes": memory_slopes(rows)}
    if on_gpu:
        results["triton_ratios"] = ratios(rows, "triton")
        print_table(results["triton_ratios"], title="dense-bias SDPA vs FlashBias (triton)")
    print_table(results["slopes"], title="log-log slope of peak memory in N")
    results["plot"] = str(plot(rows, Path(out) / "bench.png"))
    return results
