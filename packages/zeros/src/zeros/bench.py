"""Benchmark: forward + backward time and peak memory of ZeroS against softmax attention over T.

``zeros bench [--quick] [--device cpu|cuda]`` times :func:`zeros.ops.zeros_attention` with the
``naive`` (T x T), ``scan`` (prefix sums) and ``chunk`` backends (and ``triton`` on a GPU) against
torch's fused softmax attention (``F.scaled_dot_product_attention``, causal) on the same
(B, T, H, d) tensors, and reports the log-log slope of time against T (1 for O(T), 2 for O(T^2))
and the length from which ``chunk`` stays faster than softmax.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from paperkit import (
    crossover,
    figure,
    loglog_slope,
    peak_memory,
    print_table,
    progress,
    save_figure,
    time_callable,
)
from zeros.ops import zeros_attention

__all__ = ["bench"]

B, H, D_HEAD = 1, 4, 32


def _step(backend: str, T: int, device: str) -> Callable[[], None]:
    g = torch.Generator(device="cpu").manual_seed(T)
    q, k, v = (
        torch.randn(B, T, H, D_HEAD, generator=g).to(device).requires_grad_() for _ in range(3)
    )
    s = torch.randn(B, T, H, generator=g).to(device).requires_grad_()
    g1, gh = (torch.rand(B, T, H, generator=g).to(device) for _ in range(2))
    if backend == "softmax":
        qt, kt, vt = (x.detach().transpose(1, 2).contiguous().requires_grad_() for x in (q, k, v))

        def run() -> None:
            F.scaled_dot_product_attention(qt, kt, vt, is_causal=True).sum().backward()

        return run

    def run() -> None:
        zeros_attention(q, k, v, s, g1, gh, backend=backend).sum().backward()

    return run


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, lengths: list[int] | None = None
) -> dict[str, Any]:
    """Time and memory of each backend over T; slopes, crossover, a plot (``scaling.png``).

    ``lengths`` overrides the sequence lengths (for smoke tests).
    """
    on_gpu = device.startswith("cuda")
    if lengths is not None:
        limits = dict.fromkeys(["naive", "scan", "chunk", "softmax"], max(lengths))
    elif on_gpu:
        lengths = (
            [512, 1024, 2048, 4096, 8192, 16384]
            if quick
            else [512, 1024, 2048, 4096, 8192, 16384, 32768]
        )
        limits = {"naive": 8192, "scan": 8192, "chunk": 32768, "triton": 32768, "softmax": 32768}
    else:
        lengths = [256, 512, 1024, 2048] if quick else [256, 512, 1024, 2048, 4096, 8192]
        top = 2048 if quick else 8192
        limits = dict.fromkeys(["naive", "scan", "chunk", "softmax"], top)
    rows = []
    cases = [(name, T) for name in limits for T in lengths if limits[name] >= T]
    for name, T in progress(cases, "bench"):
        run = _step(name, T, device)
        timing = time_callable(
            run, label=name, sub_label=f"T={T}", device=device, min_run_time=0.3 if quick else 1.0
        )
        memory = peak_memory(run, device=device)
        rows.append(
            {"backend": name, "T": T, "ms": 1e3 * timing.median_s, "peak_MiB": memory / 2**20}
        )
    print_table(rows, title=f"forward + backward, B={B}, H={H}, d={D_HEAD}, {device}")

    summary = []
    for name in limits:
        mine = [r for r in rows if r["backend"] == name]
        # slope over the longer lengths (from mid-range), where fixed overheads no longer dominate
        upper = mine[len(mine) // 2 - 1 :] if len(mine) >= 4 else mine
        summary.append(
            {
                "backend": name,
                "time_slope": loglog_slope([r["T"] for r in upper], [r["ms"] for r in upper]),
                "memory_slope": loglog_slope(
                    [r["T"] for r in upper], [max(r["peak_MiB"], 1e-3) for r in upper]
                ),
                "fitted T": f"{upper[0]['T']}-{upper[-1]['T']}",
            }
        )
    print_table(summary, title="log-log slopes of time and peak memory against T")
    common = [T for T in lengths if limits["chunk"] >= T and limits["softmax"] >= T]
    ms = {(r["backend"], r["T"]): r["ms"] for r in rows}
    fast = "triton" if on_gpu else "chunk"
    cross = crossover(common, [ms[(fast, T)] for T in common], [ms[("softmax", T)] for T in common])
    ratio = {T: ms[("softmax", T)] / ms[(fast, T)] for T in common}
    print(
        f"{fast} faster than softmax from T = {cross}; softmax/{fast} time ratio: "
        + ", ".join(f"T={T}: {r:.2f}" for T, r in ratio.items())
    )

    fig, axes = figure(1, 2, size=(10, 4))
    ax_t, ax_m = axes[0, 0], axes[0, 1]
    for name in limits:
        mine = [r for r in rows if r["backend"] == name]
        ax_t.loglog([r["T"] for r in mine], [r["ms"] for r in mine], "o-", label=name)
        ax_m.loglog(
            [r["T"] for r in mine], [max(r["peak_MiB"], 1e-3) for r in mine], "o-", label=name
        )
    for ax in (ax_t, ax_m):
        ax.set_xscale("log", base=2)
        ax.set_xticks(lengths, [str(T) for T in lengths])
        ax.minorticks_off()
    ax_t.set(xlabel="sequence length T", ylabel="forward + backward (ms)", title=f"time ({device})")
    ax_m.set(xlabel="sequence length T", ylabel="peak memory (MiB)", title="peak memory")
    ax_t.legend()
    save_figure(fig, out / "scaling.png")
    return {
        "device": device,
        "shape": {"B": B, "H": H, "d": D_HEAD},
        "rows": rows,
        "slopes": summary,
        "crossover_T": cross,
        "softmax_over_fast": ratio,
    }
