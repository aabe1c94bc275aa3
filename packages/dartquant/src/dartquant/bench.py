"""Benchmark: rotation-calibration cost of DartQuant vs SpinQuant-style optimisation.

``dartquant bench [--quick] [--device cpu|cuda]`` measures, in one run:

1. one optimisation step on a batch of 64 tokens, QR-Orth (matmul + QR, O(B d² + d³)) vs Cayley
   SGD (matmul + a d x d solve and extra products), over d, with log-log slopes;
2. on TinyLlama models of growing hidden size (2 layers, 4 heads, 32 x 64 calibration tokens):
   the whole local DartQuant calibration (cache activations, R1 10 epochs, R2 5 epochs) vs
   end-to-end SpinQuant-lite (Cayley SGD through the quantised model, ``e2e_steps`` steps of
   8 sequences), wall time and peak torch memory, with their ratios (the paper's 47x / 10x on
   a 70B model, restated at small scale).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from dartquant.cayley import CayleySGD
from dartquant.losses import whip_loss
from dartquant.model import TinyLlama
from dartquant.pipeline import calibrate_rotations
from dartquant.qrorth import QROrth
from paperkit import (
    figure,
    loglog_slope,
    peak_memory,
    print_table,
    progress,
    save_figure,
    time_callable,
)

__all__ = ["bench", "step_timing"]


def step_timing(
    d: int, *, batch: int = 64, device: str = "cpu", min_run_time: float = 0.2
) -> dict[str, Any]:
    """Median seconds of one Whip-loss step with QR-Orth and with Cayley SGD at width d."""
    x = torch.randn(batch, d, device=device)
    qr = QROrth(d, init="random").to(device)
    opt_qr = torch.optim.SGD(qr.parameters(), lr=1e-3, momentum=0.9)
    R = torch.nn.Parameter(torch.linalg.qr(torch.randn(d, d)).Q.to(device))
    opt_cay = CayleySGD([R], lr=1e-3, momentum=0.9)

    def step_qr() -> None:
        opt_qr.zero_grad()
        whip_loss(qr(x)).backward()
        opt_qr.step()

    def step_cayley() -> None:
        opt_cay.zero_grad()
        whip_loss(x @ R).backward()
        opt_cay.step()

    t_qr = time_callable(step_qr, device=device, min_run_time=min_run_time)
    t_cay = time_callable(step_cayley, device=device, min_run_time=min_run_time)
    return {
        "d": d,
        "qr_ms": 1e3 * t_qr.median_s,
        "cayley_ms": 1e3 * t_cay.median_s,
        "cayley/qr": t_cay.median_s / t_qr.median_s,
    }


def _calibration_cost(dim: int, e2e_steps: int, seed: int = 0) -> dict[str, Any]:
    torch.manual_seed(seed)
    offset = torch.zeros(dim)
    offset[:4] = 30.0
    model = TinyLlama(96, dim, 2, 4, embed_offset=offset).eval()
    tokens = torch.randint(0, 96, (32, 64), generator=torch.Generator().manual_seed(seed))
    row: dict[str, Any] = {"d": dim}
    for name, method, kw, probe in (
        ("local", "dartquant", {}, {"r1_epochs": 1, "r2_epochs": 1}),
        ("e2e", "spinquant_lite", {"e2e_steps": e2e_steps}, {"e2e_steps": 2}),
    ):
        t = time_callable(
            lambda m=method, k=kw: calibrate_rotations(model, tokens, m, **k),
            warmup=0,
            min_run_time=1e-3,
        )
        row[f"{name}_s"] = t.median_s
        row[f"{name}_MB"] = (
            peak_memory(lambda m=method, k=probe: calibrate_rotations(model, tokens, m, **k))
            / 2**20
        )
    row["time_ratio"] = row["e2e_s"] / row["local_s"]
    row["memory_ratio"] = row["e2e_MB"] / row["local_MB"]
    return row


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    dims: list[int] | None = None,
    model_dims: list[int] | None = None,
    e2e_steps: int | None = None,
) -> dict[str, Any]:
    """Print the tables, save ``calibration_cost.png``; ``dims``, ``model_dims``, ``e2e_steps``
    override the sizes (smoke tests). The TinyLlama part runs on the CPU."""
    dims = dims or ([128, 256, 512, 1024] if quick else [128, 256, 512, 1024, 2048])
    model_dims = model_dims or ([64, 128] if quick else [64, 128, 256])
    e2e_steps = e2e_steps or (50 if quick else 100)
    min_time = 0.1 if quick else 0.3
    steps = [
        step_timing(d, device=device, min_run_time=min_time) for d in progress(dims, "step time")
    ]
    slopes = {
        "qr_slope": loglog_slope(dims, [r["qr_ms"] for r in steps]),
        "cayley_slope": loglog_slope(dims, [r["cayley_ms"] for r in steps]),
    }
    costs = [_calibration_cost(d, e2e_steps) for d in progress(model_dims, "calibration cost")]
    if len(costs) >= 2:
        slopes["local_time_slope"] = loglog_slope(model_dims, [r["local_s"] for r in costs])
        slopes["e2e_time_slope"] = loglog_slope(model_dims, [r["e2e_s"] for r in costs])
    print_table(steps, title=f"One Whip-loss step, batch 64 ({device}): QR-Orth vs Cayley SGD")
    print_table(
        costs,
        title=f"TinyLlama rotation calibration: local DartQuant vs end-to-end ({e2e_steps} steps)",
    )
    print_table([slopes], title="log-log slopes against d")
    fig, axes = figure(1, 2, size=(10.0, 4.0))
    ax1, ax2 = axes[0]
    ax1.loglog(dims, [r["qr_ms"] for r in steps], "o-", label="QR-Orth")
    ax1.loglog(dims, [r["cayley_ms"] for r in steps], "s--", label="Cayley SGD")
    ax1.set_xlabel("d")
    ax1.set_ylabel("ms per step")
    ax1.legend()
    ax2.plot(model_dims, [r["time_ratio"] for r in costs], "o-", label="time e2e / local")
    ax2.plot(model_dims, [r["memory_ratio"] for r in costs], "s--", label="memory e2e / local")
    ax2.set_xlabel("TinyLlama d")
    ax2.legend()
    save_figure(fig, Path(out) / "calibration_cost.png")
    return {"steps": steps, "calibration": costs, "slopes": slopes}
