"""Benchmark: ``gspn2 bench [--quick] [--device cpu|cuda]``.

CPU: the per-pixel ``reference`` loop against the vectorised ``scan`` backend on the same inputs
(one → scan, C = 4, forward), as a ratio; then the ``scan`` four-direction scan, forward and
forward + backward, over N = H·W with the log-log slope of time against N (1 for O(N)).

GPU: the fused kernels (``cuda``: one launch per direction set) against one launch per line
(``cuda_multilaunch``, GSPN-1 style), the ``scan`` loop on the GPU and softmax attention (SDPA)
over the N tokens, forward and forward + backward of the four-direction scan, B = 1, at 64² to
1024² with C = 8 and at 512² with C = 32, 64. Also the kernel alone (one direction set, no layout
copies): its effective bandwidth, bytes read and written once (x, λ, 3 weight planes, h), against
the device's peak DRAM bandwidth.

Every timing is a :class:`paperkit.Measurement` (median seconds, interquartile range, peak bytes)
from :func:`paperkit.measure`; every ratio comes from one run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from functools import partial
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F

from gspn2.ops import DIRECTIONS, backend_module, gspn_4dir, gspn_scan, normalize_weights
from gspn2.reproduce import KERNEL_CLAIM, LINEAR_SLOPE
from paperkit import (
    Claim,
    Measurement,
    Report,
    measure,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["FULL", "QUICK", "BenchSettings", "bench", "peak_bandwidth_gbs"]


@dataclass(frozen=True)
class BenchSettings:
    """Map sides of the reference-vs-scan ratio and of the CPU sweep, and the (side, channels)
    configurations of the GPU tables."""

    reference_sides: tuple[int, ...]
    scan_sides: tuple[int, ...]
    gpu_configs: tuple[tuple[int, int], ...]


#: ``gspn2 bench --quick`` and ``gspn2 bench``.
QUICK = BenchSettings(
    reference_sides=(8,),
    scan_sides=(32, 64, 128),
    gpu_configs=((64, 8), (256, 8), (1024, 8), (512, 32), (512, 64)),
)
FULL = BenchSettings(
    reference_sides=(8, 12),
    scan_sides=(32, 64, 128, 256),
    gpu_configs=((64, 8), (128, 8), (256, 8), (512, 8), (1024, 8), (512, 32), (512, 64)),
)
#: Speed-up of the fused kernel over one launch per line that counts as an order of magnitude.
ORDER_OF_MAGNITUDE = 10.0
#: GPU sizes beyond which attention (N² memory) and the scan loop are not timed.
ATTENTION_MAX, SCAN_MAX = 256, 512


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
        if backward:
            gspn_4dir(**inputs, backend=backend).sum().backward()
        else:
            with torch.no_grad():
                gspn_4dir(**inputs, backend=backend)

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


def _by(rows: Sequence[Measurement], case: str) -> dict[tuple[str, Any], Measurement]:
    return {(m.impl, m.size): m for m in rows if m.case == case}


def _cpu(settings: BenchSettings) -> tuple[list[Measurement], dict[str, list]]:
    rows: list[Measurement] = []
    case = "one → scan forward, C=4"
    for side in settings.reference_sides:
        inputs = _inputs(side, 4, "cpu")
        args = (inputs["x"], *inputs["weights"]["lr"], inputs["lam"][:, 0])
        with torch.no_grad():
            for impl, warmup in (("reference", 0), ("scan", 1)):
                fn = partial(gspn_scan, *args, backend=impl)
                rows.append(measure(impl, side, fn, case=case, warmup=warmup))
    got = _by(rows, case)
    ratio = [
        {
            "H=W": s,
            "reference ms": 1e3 * got["reference", s].seconds,
            "scan ms": 1e3 * got["scan", s].seconds,
            "reference / scan": got["reference", s].seconds / got["scan", s].seconds,
        }
        for s in settings.reference_sides
    ]
    print_table(ratio, title="one → scan, C=4, forward: per-pixel reference vs vectorised scan")
    for side in progress(list(settings.scan_sides), "scan backend"):
        inputs = _inputs(side, 8, "cpu", grad=True)
        for case, backward in (("4-dir forward", False), ("4-dir forward+backward", True)):
            run = _runner("scan", inputs, backward)
            rows.append(measure("scan", side * side, run, case=case, params={"side": side}))
    fwd, both = _by(rows, "4-dir forward"), _by(rows, "4-dir forward+backward")
    sweep = [
        {
            "H=W": s,
            "N": s * s,
            "fwd ms": 1e3 * fwd["scan", s * s].seconds,
            "fwd+bwd ms": 1e3 * both["scan", s * s].seconds,
        }
        for s in settings.scan_sides
    ]
    print_table(sweep, title="4-direction scan, scan backend, B=1, C=8 (CPU)")
    return rows, {"reference_vs_scan": ratio, "scan_scaling": sweep}


def _kernel_alone(side: int, channels: int, device: str) -> list[Measurement]:
    """One direction set (→ ←) straight through each kernel's forward on the line layout."""
    gen = torch.Generator().manual_seed(side)
    shape = (1, 2, channels, side, side)
    xs, lam = (torch.rand(shape, generator=gen).to(device) for _ in range(2))
    ws = [torch.rand(1, 2, 1, side, side, generator=gen).to(device) for _ in range(3)]
    nbytes = 4 * (3 * xs.numel() + 3 * ws[0].numel())
    rows = []
    for impl in ("cuda", "cuda_multilaunch"):
        fn = partial(backend_module(impl).forward, xs, *ws, lam, side, (False, True))
        params = {"side": side, "C": channels, "bytes": nbytes}
        rows.append(
            measure(impl, side * side, fn, device=device, case="kernel alone", params=params)
        )
    return rows


def _gpu(settings: BenchSettings, device: str) -> tuple[list[Measurement], dict[str, list]]:
    rows: list[Measurement] = []
    for side, channels in progress(list(settings.gpu_configs), "gpu"):
        for impl in ("cuda", "cuda_multilaunch", "scan", "attention"):
            if (impl == "attention" and side > ATTENTION_MAX) or (
                impl == "scan" and side > SCAN_MAX
            ):
                continue
            inputs = _inputs(side, channels, device, grad=True)
            for case, backward in (
                ("gpu 4-dir forward", False),
                ("gpu 4-dir forward+backward", True),
            ):
                params = {"side": side, "C": channels}
                run = _runner(impl, inputs, backward)
                rows.append(
                    measure(impl, side * side, run, device=device, case=case, params=params)
                )
    table = []
    for side, channels in settings.gpu_configs:
        row: dict[str, Any] = {"H=W": side, "C": channels}
        for m in rows:
            if m.params == {"side": side, "C": channels}:
                row[f"{m.impl} {m.case.removeprefix('gpu 4-dir ')} ms"] = 1e3 * m.seconds
        for case in ("forward", "forward+backward"):
            row[f"multilaunch / cuda {case}"] = (
                row[f"cuda_multilaunch {case} ms"] / row[f"cuda {case} ms"]
            )
        table.append(row)
    print_table(table, title=f"4-direction scan, B=1, fp32, {torch.cuda.get_device_name()}")
    peak = peak_bandwidth_gbs()
    bandwidth = []
    for side, channels in settings.gpu_configs:
        alone = _kernel_alone(side, channels, device)
        rows += alone
        row = {"H=W": side, "C": channels}
        for m in alone:
            gbs = m.params["bytes"] / m.seconds / 1e9
            row[f"{m.impl} ms"], row[f"{m.impl} GB/s"] = 1e3 * m.seconds, gbs
            if m.impl == "cuda" and peak:
                row["cuda % of peak"] = 100 * gbs / peak
        bandwidth.append(row)
    print_table(bandwidth, title=f"kernel alone, one direction set (→ ←), peak {peak} GB/s")
    return rows, {"gpu": table, "bandwidth": bandwidth, "peak_GBs": peak}


def _cost_claim(rows: Sequence[Measurement]) -> Claim:
    fwd = scaling(rows, case="4-dir forward")["scan"]
    both = scaling(rows, case="4-dir forward+backward")["scan"]
    slope = fwd["slope"]
    return Claim(
        "The propagation costs O(N) in the number of pixels N",
        paper="linear-time propagation against quadratic self-attention",
        measured=(
            f"log-log slope of the CPU scan's time against N: {slope:.2f} forward, "
            f"{both['slope']:.2f} forward + backward (N = {fwd['sizes'][0]:,}-{fwd['sizes'][-1]:,})"
        ),
        verdict="held" if slope <= LINEAR_SLOPE else "not held",
        why=f"held when the forward slope is at most {LINEAR_SLOPE}; scan backend, B = 1, C = 8",
    )


def _kernel_claim(tables: dict[str, list]) -> Claim:
    row = max((r for r in tables["gpu"] if r["C"] == 8), key=lambda r: r["H=W"])
    ratio = row["multilaunch / cuda forward"]
    if ratio >= ORDER_OF_MAGNITUDE:
        verdict = "held"
    else:
        verdict = "partly" if ratio > 1 else "not held"
    return Claim(
        KERNEL_CLAIM.statement,
        paper=KERNEL_CLAIM.paper,
        measured=(
            f"{row['H=W']}×{row['H=W']}×8 forward: {row['cuda_multilaunch forward ms']:.3g} ms "
            f"-> {row['cuda forward ms']:.3g} ms ({ratio:.3g}x; forward + backward "
            f"{row['multilaunch / cuda forward+backward']:.3g}x)"
        ),
        verdict=verdict,
        why=(
            f"held at a forward speed-up of at least {ORDER_OF_MAGNITUDE:g}x, partly above 1x; "
            f"B = 1, fp32, {torch.cuda.get_device_name()}"
        ),
    )


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """The CPU tables always; the GPU tables when ``device`` is CUDA. Sizes: :data:`QUICK` or
    :data:`FULL`."""
    settings = QUICK if quick else FULL
    rows, tables = _cpu(settings)
    figures = [plot_scaling(rows, out / "bench.png", case="4-dir forward", xlabel="N = H·W")]
    claims = [_cost_claim(rows)]
    data: dict[str, Any] = {"fits": scaling(rows, case="4-dir forward")}
    if device.startswith("cuda"):
        gpu_rows, gpu_tables = _gpu(settings, device)
        rows += gpu_rows
        data["peak_GBs"] = gpu_tables.pop("peak_GBs")
        tables.update(gpu_tables)
        claims.insert(0, _kernel_claim(tables))
        c8 = [m for m in gpu_rows if m.params.get("C") == 8]
        figures.append(
            plot_scaling(
                c8, out / "bench_gpu.png", case="gpu 4-dir forward", xlabel="N = H·W, C = 8"
            )
        )
    else:
        claims.insert(0, KERNEL_CLAIM)
    return Report(
        claims=claims,
        tables=tables,
        figures=figures,
        settings={**asdict(settings), "device": device, "dtype": "float32", "batch": 1},
        measurements=rows,
        data=data,
    )
