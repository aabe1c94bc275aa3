"""Benchmark: ``gspn2 bench [--quick] [--device cpu|cuda]``.

CPU: the per-pixel reference loop (``naive``) against the vectorised torch scan (``torch``) on the
same inputs, as a ratio; then the torch four-direction scan, forward and forward + backward, over
N = H·W with the log-log slope of time against N (1 for O(N)).

GPU: the fused kernels (``cuda``: one launch per direction set) against one launch per line
(``cuda_multilaunch``, GSPN-1 style), the torch loop on the GPU and softmax attention (SDPA) over
the N tokens, forward and forward + backward of the four-direction scan, B = 1, at 64² to 1024²
with C = 8 and at 512² with C = 32, 64. Also the kernel alone (one direction set, no layout
copies): its effective bandwidth, bytes read and written once (x, λ, 3 weight planes, h), against
the device's peak DRAM bandwidth.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from gspn2.ops import DIRECTIONS, gspn_4dir, gspn_scan, normalize_weights
from gspn2.scan import GSPNScanFunction
from paperkit import figure, loglog_slope, print_table, progress, save_figure, time_callable

__all__ = ["bench", "peak_bandwidth_gbs"]


def _inputs(side: int, channels: int, device: str, dtype=torch.float32, grad=False) -> dict:
    gen = torch.Generator().manual_seed(side * 131 + channels)
    shape = (1, channels, side, side)

    def make(t: torch.Tensor) -> torch.Tensor:
        return t.to(device=device, dtype=dtype).requires_grad_(grad)

    x = make(torch.randn(shape, generator=gen))
    raw = torch.randn(4, 3, 1, 1, side, side, generator=gen)
    weights = {
        d: tuple(
            make(w.detach())
            for w in normalize_weights(*raw[k], axis=-2 if d in ("lr", "rl") else -1)
        )
        for k, d in enumerate(DIRECTIONS)
    }
    lam, u, d = (make(torch.rand(1, 4, *shape[1:], generator=gen)) for _ in range(3))
    mix = make(torch.full((4,), 0.25))
    return {"x": x, "weights": weights, "lam": lam, "u": u, "d": d, "mix": mix}


def _leaves(inputs: dict) -> list[torch.Tensor]:
    flat = [inputs["x"], inputs["lam"], inputs["u"], inputs["d"], inputs["mix"]]
    return flat + [w for triple in inputs["weights"].values() for w in triple]


def _runner(backend: str, inputs: dict, backward: bool) -> Callable[[], None]:
    if backend == "attention":
        x = inputs["x"]
        q = x.flatten(2).transpose(1, 2).unsqueeze(1).detach().requires_grad_(backward)

        def run() -> None:
            out = F.scaled_dot_product_attention(q, q, q)
            if backward:
                out.sum().backward()

        return run

    def run() -> None:
        out = gspn_4dir(**inputs, backend=backend)
        if backward:
            out.sum().backward()

    return run


def peak_bandwidth_gbs() -> float | None:
    """The device's peak DRAM bandwidth in GB/s (2 · memory clock · bus width), or None."""
    try:
        import cupy

        attr = cupy.cuda.runtime.deviceGetAttribute
        clock_khz = attr(cupy.cuda.runtime.cudaDevAttrMemoryClockRate, 0)
        bus_bits = attr(cupy.cuda.runtime.cudaDevAttrGlobalMemoryBusWidth, 0)
    except Exception:  # no CuPy, or an attribute this CUDA version lacks
        return None
    return 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9


def _cpu(quick: bool, sides: Sequence[int] | None) -> dict[str, Any]:
    rows = []
    for side in [8] if quick else [8, 12]:
        inputs = _inputs(side, 4, "cpu")
        args = (inputs["x"], *inputs["weights"]["lr"], inputs["lam"][:, 0])
        with torch.no_grad():
            naive = time_callable(lambda args=args: gspn_scan(*args, backend="naive"), warmup=0)
            vec = time_callable(lambda args=args: gspn_scan(*args, backend="torch"))
        rows.append(
            {
                "H=W": side,
                "naive ms": 1e3 * naive.median_s,
                "torch ms": 1e3 * vec.median_s,
                "naive / torch": naive.median_s / vec.median_s,
            }
        )
    print_table(rows, title="one → scan, C=4, forward: per-pixel loop vs vectorised torch")
    sides = list(sides or ([32, 64, 128] if quick else [32, 64, 128, 256]))
    scaling = []
    for side in progress(sides, "torch scan"):
        inputs = _inputs(side, 8, "cpu", grad=True)
        with torch.no_grad():
            fwd = time_callable(_runner("torch", inputs, False))
        both = time_callable(_runner("torch", inputs, True))
        scaling.append(
            {
                "H=W": side,
                "N": side * side,
                "fwd ms": 1e3 * fwd.median_s,
                "fwd+bwd ms": 1e3 * both.median_s,
            }
        )
    slopes = {
        key: loglog_slope([r["N"] for r in scaling], [r[key] for r in scaling])
        for key in ("fwd ms", "fwd+bwd ms")
    }
    print_table(scaling, title="4-direction scan, torch backend, B=1, C=8 (CPU)")
    print(", ".join(f"slope of {k} against N: {v:.2f}" for k, v in slopes.items()))
    return {"naive_vs_torch": rows, "torch_scaling": scaling, "slopes": slopes}


def _kernel_bandwidth(side: int, channels: int, device: str) -> dict[str, Any]:
    """One direction set (→ ←) straight through the autograd Function on the kernel layout."""
    gen = torch.Generator().manual_seed(side)
    shape = (1, 2, channels, side, side)
    xs, lam = (torch.rand(shape, generator=gen).to(device) for _ in range(2))
    ws = [torch.rand(1, 2, 1, side, side, generator=gen).to(device) for _ in range(3)]
    row: dict[str, Any] = {"H=W": side, "C": channels}
    nbytes = 4 * (3 * xs.numel() + 3 * ws[0].numel())
    for backend in ("cuda", "cuda_multilaunch"):
        with torch.no_grad():
            t = time_callable(
                lambda backend=backend: GSPNScanFunction.apply(
                    xs, *ws, lam, side, (False, True), backend
                ),
                device=device,
            )
        row[f"{backend} ms"] = 1e3 * t.median_s
        row[f"{backend} GB/s"] = nbytes / t.median_s / 1e9
    return row


def _gpu(quick: bool, device: str) -> dict[str, Any]:
    configs = [(s, 8) for s in ([64, 256, 1024] if quick else [64, 128, 256, 512, 1024])]
    configs += [(512, 32), (512, 64)]
    rows = []
    for side, channels in progress(configs, "gpu"):
        row: dict[str, Any] = {"H=W": side, "C": channels}
        for backend in ("cuda", "cuda_multilaunch", "torch", "attention"):
            if backend == "attention" and side > 256:
                continue
            if backend == "torch" and side > 512:
                continue
            inputs = _inputs(side, channels, device, grad=True)
            with torch.no_grad():
                fwd = time_callable(_runner(backend, inputs, False), device=device)
            both = time_callable(_runner(backend, inputs, True), device=device)
            row[f"{backend} fwd ms"] = 1e3 * fwd.median_s
            row[f"{backend} fwd+bwd ms"] = 1e3 * both.median_s
        row["multilaunch / cuda fwd"] = row["cuda_multilaunch fwd ms"] / row["cuda fwd ms"]
        row["multilaunch / cuda fwd+bwd"] = (
            row["cuda_multilaunch fwd+bwd ms"] / row["cuda fwd+bwd ms"]
        )
        rows.append(row)
    print_table(rows, title=f"4-direction scan, B=1, fp32, {torch.cuda.get_device_name()}")
    peak = peak_bandwidth_gbs()
    bandwidth = [_kernel_bandwidth(s, c, device) for s, c in configs]
    for row in bandwidth:
        row["cuda % of peak"] = 100 * row["cuda GB/s"] / peak if peak else float("nan")
    print_table(bandwidth, title=f"kernel alone, one direction set (→ ←), peak {peak} GB/s")
    return {"rows": rows, "bandwidth": bandwidth, "peak_GBs": peak}


def _plot(cpu: dict, gpu: dict | None, out: Path) -> Path:
    fig, axes = figure(1, 2, size=(10, 4))
    ax_c, ax_g = axes[0]
    sc = cpu["torch_scaling"]
    for key in ("fwd ms", "fwd+bwd ms"):
        ax_c.loglog([r["N"] for r in sc], [r[key] for r in sc], "o-", label=f"torch {key[:-3]}")
    ax_c.set(xlabel="N = H·W", ylabel="ms", title="CPU, torch backend, C = 8")
    ax_c.legend()
    if gpu:
        rows = [r for r in gpu["rows"] if r["C"] == 8]
        for backend in ("cuda", "cuda_multilaunch", "torch", "attention"):
            pts = [
                (r["H=W"] ** 2, r[f"{backend} fwd ms"]) for r in rows if f"{backend} fwd ms" in r
            ]
            ax_g.loglog(*zip(*pts, strict=True), "o-", label=backend)
        ax_g.set(xlabel="N = H·W", ylabel="forward ms", title="GPU, C = 8")
        ax_g.legend()
    else:
        ax_g.set_axis_off()
        ax_g.text(0.5, 0.5, "no GPU in this run", ha="center", va="center")
    return save_figure(fig, out / "bench.png")


def bench(
    *, quick: bool = False, device: str = "cpu", out: Path, sides: Sequence[int] | None = None
) -> dict[str, Any]:
    """The CPU tables always; the GPU tables when ``device`` is CUDA. ``sides`` overrides the CPU
    scaling sizes (for smoke tests)."""
    cpu = _cpu(quick, sides)
    gpu = _gpu(quick, device) if device.startswith("cuda") else None
    _plot(cpu, gpu, out)
    return {"device": device, "cpu": cpu, "gpu": gpu}
