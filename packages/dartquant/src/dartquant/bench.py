"""Benchmark: rotation-calibration cost of DartQuant vs SpinQuant-style optimisation.

``dartquant bench [--quick]`` measures, in one run (CPU, the package has no GPU code):

1. one optimisation step on a batch of 64 tokens, QR-Orth (matmul + QR, O(B d² + d³)) vs Cayley
   SGD (matmul + a d x d solve and extra products), over d, with log-log slopes;
2. on tiny LlamaForCausalLM models of growing hidden size (2 layers, 4 heads, 32 x 64 calibration
   tokens): the whole local DartQuant calibration (cache activations, R1 10 epochs, R2 5 epochs) vs
   end-to-end SpinQuant-lite (Cayley SGD through the quantised model, ``e2e_steps`` steps of
   8 sequences): wall time of one full run, and the peak memory of a short run of the same
   calibration (R1 / R2 one epoch, two end-to-end steps: the caches and per-step buffers that
   set the peak, not the step count), with their ratios (the paper's 47x / 10x on a 70B model,
   restated at small scale).

Peak memory is :func:`paperkit.peak_memory`: on the CPU the growth of the process's peak
resident set (the kit hands the C heap's free pages back to the system before each probe, so
pages freed by earlier calls and reused are counted again).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from dartquant.cayley import CayleySGD
from dartquant.losses import whip_loss
from dartquant.model import tiny_llama
from dartquant.qrorth import QROrth
from dartquant.recipe import calibrate_rotations
from paperkit import (
    Claim,
    Measurement,
    Report,
    check_choice,
    measure,
    peak_memory,
    plot_scaling,
    print_table,
    progress,
    scaling,
    time_callable,
)

__all__ = ["bench", "calibration_cost", "calibration_peak_bytes", "step_cost"]

#: Cayley/QR step-time ratio a claim needs before it counts as a speed-up: the timings of the
#: shared 2-core machine vary by 10-30% between runs.
NOISE_RATIO = 1.3
#: The short calibration whose peak memory is measured, per method (same tensors, fewer steps).
MEMORY_PROBE = {
    "dartquant": {"r1_epochs": 1, "r2_epochs": 1},
    "spinquant_lite": {"e2e_steps": 2},
}


def calibration_peak_bytes(
    model: torch.nn.Module, tokens: torch.Tensor, method: str, **kw: Any
) -> int:
    """Peak bytes of ``calibrate_rotations(model, tokens, method, **kw)`` above what was in use
    before (:func:`paperkit.peak_memory`)."""
    peak = peak_memory(lambda: calibrate_rotations(model, tokens, method, **kw))
    return int(peak or 0)


def step_cost(
    d: int, *, batch: int = 64, device: str = "cpu", min_time: float = 0.2
) -> list[Measurement]:
    """Median seconds of one Whip-loss step (forward, backward, update) with QR-Orth and with
    Cayley SGD at width d: two rows of case ``"whip_step"``."""
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

    params = {"batch": batch}
    return [
        measure(
            impl,
            d,
            fn,
            device=device,
            case="whip_step",
            memory=False,
            params=params,
            min_time=min_time,
        )
        for impl, fn in (("qr", step_qr), ("cayley", step_cayley))
    ]


def calibration_cost(
    dim: int, e2e_steps: int, *, seed: int = 0, device: str = "cpu"
) -> list[Measurement]:
    """Local DartQuant vs end-to-end SpinQuant-lite calibration of one tiny LlamaForCausalLM of
    width ``dim``: one timed full run each and the peak bytes of its short probe (case
    ``"calibration"``, impls ``"local"`` and ``"e2e"``)."""
    torch.manual_seed(seed)
    model = tiny_llama(96, dim, 2, 4).eval()
    with torch.no_grad():  # the reproduction's fixed outlier channels, folded into the embedding
        model.model.embed_tokens.weight[:, :4] += 30.0
    tokens = torch.randint(0, 96, (32, 64), generator=torch.Generator().manual_seed(seed))
    rows = []
    for impl, method, kw in (
        ("local", "dartquant", {}),
        ("e2e", "spinquant_lite", {"e2e_steps": e2e_steps}),
    ):
        timing = time_callable(
            lambda m=method, k=kw: calibrate_rotations(model, tokens, m, **k),
            device=device,
            warmup=0,
            min_time=0.0,
            min_repeats=1,
        )
        peak = calibration_peak_bytes(model, tokens, method, **MEMORY_PROBE[method])
        rows.append(
            Measurement(
                impl=impl,
                size=dim,
                seconds=timing.median_s,
                spread=timing.iqr_s,
                peak_bytes=peak,
                device=device,
                case="calibration",
                repeats=timing.calls,
                params={"method": method, **kw, "memory_probe": MEMORY_PROBE[method]},
            )
        )
    return rows


def _by(rows: list[Measurement], case: str) -> dict[tuple[str, Any], Measurement]:
    return {(r.impl, r.size): r for r in rows if r.case == case}


def _memory_ratio(costs: dict, d: Any) -> float:
    """End-to-end over local peak bytes at width d (0 when the local probe measured nothing)."""
    local = costs["local", d].peak_bytes
    return costs["e2e", d].peak_bytes / local if local else 0.0


def _claims(steps: dict, costs: dict, dims: list[int], model_dims: list[int]) -> list[Claim]:
    time_ratio = [costs["e2e", d].seconds / costs["local", d].seconds for d in model_dims]
    mem_ratio = [_memory_ratio(costs, d) for d in model_dims]
    step_ratio = [steps["cayley", d].seconds / steps["qr", d].seconds for d in dims]
    span = f"d = {model_dims[0]}..{model_dims[-1]}"
    return [
        Claim(
            "Local rotation calibration (Whip loss on cached activations) is far faster than "
            "end-to-end rotation training",
            paper="47x faster than end-to-end rotational optimisation on a 70B model (abstract)",
            measured=f"{min(time_ratio):.3g}x-{max(time_ratio):.3g}x faster ({span})",
            verdict="held" if min(time_ratio) > 1 else "not held",
            why="held when the end-to-end run is slower at every d; one timed run each on a "
            "2-layer LlamaForCausalLM, so only the direction (and its trend with d) is tested, "
            "not the 70B magnitude",
        ),
        Claim(
            "Local rotation calibration needs less memory than end-to-end rotation training",
            paper="10x less memory on a 70B model (abstract)",
            measured=f"{min(mem_ratio):.3g}x-{max(mem_ratio):.3g}x less peak memory ({span})"
            if all(mem_ratio)
            else "a local probe's resident-set growth was 0 bytes",
            verdict=("held" if min(mem_ratio) > 1 else "not held")
            if all(mem_ratio)
            else "not testable here",
            why="held when the end-to-end probe's peak is larger at every d; peaks are resident-"
            "set growth of short probes on a tiny model, whose weights are a small part of "
            "the end-to-end memory that dominates at 70B",
        ),
        Claim(
            "A QR-Orth step is cheaper than a Cayley SGD step",
            paper="QR-Orth replaces expensive alternating (Cayley) optimisation by a more "
            "efficient solution (abstract)",
            measured=f"Cayley/QR step time {min(step_ratio):.3g}-{max(step_ratio):.3g} "
            f"(d = {dims[0]}..{dims[-1]})",
            verdict="held" if min(step_ratio) > NOISE_RATIO else "not held",
            why=f"held when the Cayley step is more than {NOISE_RATIO}x slower at every d (the "
            "timing noise of the shared machine); our Cayley step is one LU solve, cheaper than "
            "SpinQuant's iterative Cayley loop",
        ),
    ]


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    dims: list[int] | None = None,
    model_dims: list[int] | None = None,
    e2e_steps: int | None = None,
) -> Report:
    """Print the tables, save the scaling plots; return the measurements and the efficiency
    claims. ``dims``, ``model_dims``, ``e2e_steps`` override the sizes (smoke tests)."""
    check_choice("device", "bench", device, ("cpu",))
    dims = dims or ([128, 256, 512, 1024] if quick else [128, 256, 512, 1024, 2048])
    model_dims = model_dims or ([64, 128] if quick else [64, 128, 256])
    e2e_steps = e2e_steps or (50 if quick else 100)
    min_time = 0.1 if quick else 0.3
    rows: list[Measurement] = []
    for d in progress(dims, "step time"):
        rows += step_cost(d, device=device, min_time=min_time)
    for d in progress(model_dims, "calibration cost"):
        rows += calibration_cost(d, e2e_steps, device=device)
    steps, costs = _by(rows, "whip_step"), _by(rows, "calibration")
    step_table = [
        {
            "d": d,
            "qr_ms": 1e3 * steps["qr", d].seconds,
            "cayley_ms": 1e3 * steps["cayley", d].seconds,
            "cayley/qr": steps["cayley", d].seconds / steps["qr", d].seconds,
        }
        for d in dims
    ]
    cost_table = [
        {
            "d": d,
            "local_s": costs["local", d].seconds,
            "local_MiB": costs["local", d].peak_bytes / 2**20,
            "e2e_s": costs["e2e", d].seconds,
            "e2e_MiB": costs["e2e", d].peak_bytes / 2**20,
            "time_ratio": costs["e2e", d].seconds / costs["local", d].seconds,
            "memory_ratio": _memory_ratio(costs, d),
        }
        for d in model_dims
    ]
    step_fit = scaling(rows, case="whip_step", baseline="qr")
    cost_fit = scaling(rows, case="calibration", baseline="e2e")
    slopes = {"qr_slope": step_fit["qr"]["slope"], "cayley_slope": step_fit["cayley"]["slope"]}
    if len(model_dims) >= 2:
        slopes["local_time_slope"] = cost_fit["local"]["slope"]
        slopes["e2e_time_slope"] = cost_fit["e2e"]["slope"]
    print_table(step_table, title=f"One Whip-loss step, batch 64 ({device}): QR-Orth vs Cayley SGD")
    print_table(
        cost_table,
        title="LlamaForCausalLM rotation calibration: local DartQuant vs end-to-end "
        f"({e2e_steps} steps)",
    )
    print_table([slopes], title="log-log slopes against d")
    figures = [
        plot_scaling(
            rows,
            Path(out) / "whip_step.png",
            case="whip_step",
            xlabel="d",
            title="One Whip-loss step: QR-Orth vs Cayley SGD",
        ),
        plot_scaling(
            rows,
            Path(out) / "calibration_cost.png",
            case="calibration",
            xlabel="LlamaForCausalLM d",
            title="Rotation calibration: local vs end-to-end",
        ),
    ]
    return Report(
        claims=_claims(steps, costs, dims, model_dims),
        tables={"whip_step": step_table, "calibration": cost_table, "slopes": [slopes]},
        figures=figures,
        settings={
            "device": device,
            "dims": dims,
            "step_batch": 64,
            "model_dims": model_dims,
            "model": {"vocab": 96, "n_layers": 2, "n_heads": 4, "embed_offset": 30.0},
            "calib_tokens": [32, 64],
            "local": {"r1_epochs": 10, "r2_epochs": 5},
            "e2e_steps": e2e_steps,
            "memory_probe": MEMORY_PROBE,
            "min_time": min_time,
            "noise_ratio": NOISE_RATIO,
        },
        measurements=rows,
        data={"scaling": {"whip_step": step_fit, "calibration": cost_fit}},
    )
