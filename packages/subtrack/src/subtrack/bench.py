"""Benchmark: subspace-update time, optimizer step time and state memory over matrix sizes.

``subtrack bench [--quick] [--device cpu|cuda]`` times, for one n x n weight (n = 256 ... 2048,
rank 64 and 128): one basis update (GaLore's full SVD vs SubTrack's geodesic step) with the
log-log slope of each against n, and one optimizer step that includes a basis update for
AdamW, GaLore and SubTrack++, with the bytes of optimizer state each keeps.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn

from paperkit import figure, loglog_slope, print_table, progress, save_figure, time_callable
from subtrack.grassmann import grassmann_step
from subtrack.optimizer import SubTrackAdamW, optimizer_state_bytes

__all__ = ["bench", "update_timing"]


def update_timing(
    n: int, rank: int, *, device: str = "cpu", min_run_time: float = 0.2
) -> dict[str, Any]:
    """Median time of one basis update of an n x n gradient: full SVD vs one geodesic step."""
    gen = torch.Generator().manual_seed(n)
    G = torch.randn(n, n, generator=gen).to(device)
    P = torch.linalg.qr(torch.randn(n, rank, generator=gen)).Q.to(device)
    svd = time_callable(
        lambda: torch.linalg.svd(G, full_matrices=False), device=device, min_run_time=min_run_time
    )
    geo = time_callable(
        lambda: grassmann_step(P, G, 1e-3), device=device, min_run_time=min_run_time
    )
    return {
        "n": n,
        "rank": rank,
        "svd_ms": 1e3 * svd.median_s,
        "geodesic_ms": 1e3 * geo.median_s,
        "speedup": svd.median_s / geo.median_s,
    }


def _optimizer_step(method: str, n: int, rank: int, device: str) -> tuple[Callable, int]:
    """A step function that updates the basis on every call, and the state bytes it keeps."""
    w = nn.Parameter(torch.randn(n, n, device=device))
    w.grad = torch.randn(n, n, device=device)
    group: dict[str, Any] = {"params": [w]}
    if method != "adamw":
        group.update(rank=rank, update_interval=1, method=method, max_angle=0.3)
    opt = SubTrackAdamW([group], lr=1e-6)
    opt.step()
    return opt.step, optimizer_state_bytes(opt)


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    sizes: list[int] | None = None,
    ranks: tuple[int, ...] = (64, 128),
) -> dict[str, Any]:
    """Time tables, log-log slopes and ``update_time.png``; ``sizes`` overrides n (smoke tests)."""
    sizes = sizes or ([256, 512, 1024] if quick else [256, 512, 1024, 2048])
    min_time = 0.1 if quick else 0.3
    updates, steps = [], []
    for rank, n in progress([(r, n) for r in ranks for n in sizes if r < n], "bench"):
        updates.append(update_timing(n, rank, device=device, min_run_time=min_time))
        for method in ("adamw", "galore", "subtrack"):
            if method == "adamw" and rank != ranks[0]:
                continue
            step, state = _optimizer_step(method, n, rank, device)
            t = time_callable(step, device=device, min_run_time=min_time)
            steps.append(
                {
                    "n": n,
                    "rank": rank if method != "adamw" else "-",
                    "method": method,
                    "step_ms": 1e3 * t.median_s,
                    "state_MiB": state / 2**20,
                }
            )
    slopes = []
    for rank in ranks:
        rows = [r for r in updates if r["rank"] == rank]
        if len(rows) >= 2:
            ns = [r["n"] for r in rows]
            slopes.append(
                {
                    "rank": rank,
                    "svd_slope": loglog_slope(ns, [r["svd_ms"] for r in rows]),
                    "geodesic_slope": loglog_slope(ns, [r["geodesic_ms"] for r in rows]),
                }
            )
    print_table(updates, title=f"One subspace update of an n x n gradient ({device})")
    print_table(steps, title="One optimizer step with a basis update, and optimizer state")
    print_table(slopes, title="log-log slope of update time against n")
    fig, ax = figure(size=(5.5, 4.0))
    for rank in ranks:
        rows = [r for r in updates if r["rank"] == rank]
        ax.loglog(
            [r["n"] for r in rows],
            [r["geodesic_ms"] for r in rows],
            "o-",
            label=f"geodesic r={rank}",
        )
    ax.loglog(
        [r["n"] for r in updates if r["rank"] == ranks[0]],
        [r["svd_ms"] for r in updates if r["rank"] == ranks[0]],
        "s--",
        label="full SVD",
    )
    ax.set_xlabel("n")
    ax.set_ylabel("ms per update")
    ax.legend()
    save_figure(fig, Path(out) / "update_time.png")
    return {"updates": updates, "steps": steps, "slopes": slopes}
