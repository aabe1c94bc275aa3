r"""Benchmark: inference cost of F-Adapter against the backbone, the vanilla adapter and LoRA.

``fadapter bench [--quick]`` times the forward pass (no gradient, batch 8) of the reproduction's
:class:`fadapter.OperatorNet` (4 blocks, width 64, 8 modes) on 32x32 and 64x64 grids (16² and
32² tokens) as ``backbone``, ``+F-Adapter`` (d=4, [6, 4, 2, 2]), ``+Adapter`` (d=15) and
``+LoRA`` (r=8, unmerged), one :class:`paperkit.Measurement` per (impl, grid) with median
seconds, the median CPU seconds of the process per call (``Measurement.cpu_seconds``, one
thread: on an idle machine the same as the wall time, on a shared one not inflated by other
processes; the claims use it) and peak bytes. The four models of a grid run in alternating
rounds (``paperkit.measure_interleaved``), so a load change hits them alike. Adapters act on the
(2K-1)·K kept modes only, a cost :math:`O(B K^2 c\, d_b)` per layer independent of the grid, so
their relative overhead should be modest and shrink as the grid grows. Also reported:
trainable-parameter ratios.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch

from fadapter.layers import OperatorNet
from fadapter.peft import apply_peft, count_trainable
from paperkit import (
    Claim,
    Measurement,
    Report,
    measure_interleaved,
    plot_scaling,
    print_table,
    progress,
    scaling,
)

__all__ = ["IMPLS", "RUNS", "bench", "overheads"]

#: impl → (apply_peft method, options); None: the backbone itself.
IMPLS: dict[str, tuple[str, dict[str, Any]] | None] = {
    "backbone": None,
    "+F-Adapter": ("fadapter", {"adapter_dim": 4}),
    "+Adapter": ("adapter", {"adapter_dim": 15}),
    "+LoRA": ("lora", {"rank": 8}),
}
#: Grid sides and seconds per timing, per quick flag.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"grids": [32, 64], "batch": 8, "min_time": 0.2, "min_repeats": 7},
    False: {"grids": [32, 64, 128], "batch": 8, "min_time": 1.0, "min_repeats": 15},
}
#: An inference overhead below this fraction counts as modest.
MODEST = 0.5


def _models() -> dict[str, torch.nn.Module]:
    torch.manual_seed(0)
    base = OperatorNet().eval()
    out = {}
    for name, spec in IMPLS.items():
        model = copy.deepcopy(base)
        if spec is not None:
            apply_peft(model, spec[0], **spec[1])
        out[name] = model.eval()
    return out


def overheads(rows: list[Measurement]) -> list[dict[str, Any]]:
    """Per (impl, grid): CPU and wall time and peak memory relative to the backbone."""
    index = {(r.impl, r.size): r for r in rows}

    def cpu(r: Measurement) -> float:  # CPU seconds where measured, else the wall time
        return r.cpu_seconds if r.device == "cpu" and r.cpu_seconds else r.seconds

    table = []
    for r in rows:
        if r.impl == "backbone":
            continue
        b = index[("backbone", r.size)]
        table.append(
            {
                "impl": r.impl,
                "grid": f"{r.size}x{r.size}",
                "backbone cpu ms": 1e3 * cpu(b),
                "cpu ms": 1e3 * cpu(r),
                "time overhead %": 100 * (cpu(r) / cpu(b) - 1),
                "wall ms": 1e3 * r.seconds,
                "backbone wall ms": 1e3 * b.seconds,
                "peak MiB": (r.peak_bytes or 0) / 2**20,
                "backbone peak MiB": (b.peak_bytes or 0) / 2**20,
            }
        )
    return table


def bench(*, quick: bool = False, device: str = "cpu", out: Path | str = Path(".")) -> Report:
    """Time the forward passes; return the :class:`paperkit.Report` with the measurements."""
    cfg = RUNS[bool(quick)]
    out = Path(out)
    models = _models()
    params = {name: count_trainable(m) for name, m in models.items()}
    backbone_params = sum(p.numel() for p in models["backbone"].parameters())
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    rows = []
    try:
        for grid in progress(cfg["grids"], "forward timings"):
            x = torch.randn(cfg["batch"], grid, grid, 4, device=device)
            calls = {}
            for name, model in models.items():
                model.to(device)

                def run(model=model, x=x) -> None:
                    with torch.no_grad():
                        model(x)

                calls[name] = run
            found = measure_interleaved(
                calls,
                grid,
                device=device,
                case="forward",
                min_time=cfg["min_time"],
                min_repeats=cfg["min_repeats"],
                warmup=2,
                params={"batch": cfg["batch"]},
            )
            for row in found:
                row.params["trainable"] = params[row.impl]
            rows += found
    finally:
        torch.set_num_threads(threads)
    table = overheads(rows)
    print_table(table, title="Forward pass, batch 8 (one thread; overhead from CPU time)")
    ratio_rows = [
        {"impl": n, "trainable": params[n], "% of backbone": 100 * params[n] / backbone_params}
        for n in IMPLS
        if n != "backbone"
    ]
    print_table(ratio_rows, title="Trainable parameters")
    fits = scaling(rows, baseline="backbone", case="forward")
    fa = [r for r in table if r["impl"] == "+F-Adapter"]
    largest, smallest = fa[-1], fa[0]
    claims = [
        Claim(
            "F-Adapter's inference overhead over the backbone is modest",
            paper="adapters act on the kept modes only, cost O(B K^2 c d_b) per layer, small "
            "against the FFT (Sec. 4)",
            measured=", ".join(f"{r['grid']}: +{r['time overhead %']:.0f}%" for r in fa),
            verdict="held"
            if all(r["time overhead %"] < 100 * MODEST for r in fa)
            else ("partly" if largest["time overhead %"] < 100 * MODEST else "not held"),
            why=f"median CPU time of the forward, batch 8, one thread; modest: under {MODEST:.0%}",
        ),
        Claim(
            "The adapters' relative cost shrinks as the grid grows (it does not scale with HW)",
            paper="O(B K^2 c d_b) adapter cost vs O(HW log(HW) C) FFT (Sec. 4)",
            measured=f"overhead {smallest['time overhead %']:.0f}% at {smallest['grid']}, "
            f"{largest['time overhead %']:.0f}% at {largest['grid']}; time slopes vs grid side "
            + ", ".join(f"{k} {v['slope']:.2f}" for k, v in fits.items()),
            verdict="held"
            if largest["time overhead %"] < smallest["time overhead %"]
            else "not held",
            why="same run, CPU time; the slopes (wall time) are d log(s) / d log(grid side), "
            "2 for O(HW)",
        ),
    ]
    fig = plot_scaling(
        rows, out / "bench.png", case="forward", title="forward pass", xlabel="grid side"
    )
    return Report(
        claims=claims,
        tables={"overhead": table, "trainable": ratio_rows},
        figures=[fig],
        measurements=rows,
        settings={**cfg, "device": device, "torch_threads": 1, "backbone_params": backbone_params},
    )
