"""Small-scale reproduction: ``dartquant reproduce [--quick] [--seed N] [--out DIR]``.

1. A TinyLlama (d=64, 2 layers, 4 heads, h=16, vocab 96) is trained from scratch on seeded
   synthetic grammar text with a fixed offset on 4 residual channels (30x the channel RMS), then
   gets function-preserving x30 channel scalings at the R2 (v→o) and R4 (up→down) points.
2. Every method of :data:`dartquant.METHODS` rotates it using 32 calibration sequences x 64
   tokens; validation perplexity is measured at W4A4KV4 and W4A8KV8 (RTN), with the calibration
   wall time, and the peak memory of the calibration (torch allocations, from a short run of the
   same calibration under the profiler: activation caches dominate and do not grow with steps).
3. A d-sweep on heavy-tailed synthetic activations: seconds for QR-Orth and Cayley SGD (same
   Whip loss, same lr and batches, random start) to reach a common Whip-loss target.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from dartquant.calibrate import calibrate_rotation
from dartquant.data import heavy_tailed_acts, token_splits
from dartquant.fusion import inject_channel_outliers, quantized_copy
from dartquant.model import perplexity
from dartquant.pipeline import METHODS, calibrate_rotations, collect_activations, pipeline
from dartquant.training import random_windows, train_tiny_llama
from paperkit import figure, peak_memory, print_table, progress, save_figure

__all__ = ["reproduce", "time_to_target"]

#: Methods run once: "none" is deterministic, SpinQuant-lite is the expensive one.
SINGLE_SEED = ("none", "spinquant_lite")
E2E_LR = 0.02

LABELS = {
    "none": "no rotation (RTN)",
    "quarot": "QuaRot (random Hadamard)",
    "dartquant": "DartQuant (Whip + QR-Orth)",
    "cayley_whip": "Whip + Cayley SGD",
    "spinquant_lite": "SpinQuant-lite (end-to-end Cayley)",
}


def _memory_probe_kw(method: str) -> dict[str, Any]:
    """A short version of the method's calibration (same tensors, fewer steps) for the profiler."""
    if method == "spinquant_lite":
        return {"e2e_steps": 2}
    return {"r1_epochs": 1, "r2_epochs": 1}


def time_to_target(
    d: int, *, n_tokens: int = 4096, epochs: int = 10, seed: int = 0, eval_every: int = 5
) -> dict[str, Any]:
    """QR-Orth vs Cayley SGD on heavy-tailed activations of width d (RMS-normalised, random
    start): the seconds each needs to reach 80% of the smaller of their two Whip-loss drops."""
    acts = heavy_tailed_acts(n_tokens, d, seed=seed)
    runs = {
        p: calibrate_rotation(
            acts,
            epochs=epochs,
            init="random",
            normalize="rms",
            parametrization=p,
            seed=seed,
            eval_every=eval_every,
        )[1]
        for p in ("qr", "cayley")
    }
    start = runs["qr"]["initial_loss"]
    drop = min(start - min(e[2] for e in h["eval"]) for h in runs.values())
    target = start - 0.8 * drop
    row: dict[str, Any] = {"d": d, "start": start, "target": target}
    for p, h in runs.items():
        row[f"{p}_s"] = next(t for _, t, loss in h["eval"] if loss <= target)
        row[f"{p}_ms_per_step"] = 1e3 * h["seconds"] / h["steps"]
        row[f"{p}_final"] = h["final_loss"]
    row["speedup"] = row["cayley_s"] / row["qr_s"]
    return row


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    train_steps: int | None = None,
    n_chars: int = 400_000,
    methods: tuple[str, ...] = METHODS,
    e2e_steps: int | None = None,
    sweep_dims: list[int] | None = None,
    rotation_seeds: int = 3,
    e2e_lr: float = E2E_LR,
) -> dict[str, Any]:
    """Run the comparison; print the tables, save ``ppl.png``; return the results. Keyword
    overrides (``train_steps``, ``n_chars``, ``methods``, ``e2e_steps``, ``sweep_dims``,
    ``rotation_seeds``) shrink the run for smoke tests. Rotation methods other than
    :data:`SINGLE_SEED` run with ``rotation_seeds`` seeds (random signs / calibration subsets);
    the table gives the mean and range of their perplexities."""
    train_steps = train_steps or (200 if quick else 1000)
    e2e_steps = e2e_steps or (50 if quick else 200)
    sweep_dims = sweep_dims or ([64, 128, 256] if quick else [64, 128, 256, 512])
    train_ids, val_ids = token_splits(n_chars, seed=seed)
    model, losses = train_tiny_llama(train_ids, steps=train_steps, seed=seed)
    inject_channel_outliers(model, 30.0, 2, seed=seed)
    gen = torch.Generator().manual_seed(seed + 1)
    calib = random_windows(train_ids, 32, 64, gen)
    val = val_ids[: 16_000 if quick else 40_000]
    X1, X2 = collect_activations(model, calib)
    ratio = lambda x: float((x.abs().amax(-1) / x.pow(2).mean(-1).sqrt()).mean())  # noqa: E731
    down_in = []
    hook = model.layers[0].mlp.down_proj.register_forward_pre_hook(
        lambda _m, a: down_in.append(a[0])
    )
    with torch.no_grad():
        model(calib[:8])
    hook.remove()
    outliers = {
        "residual_X1_max_over_rms": ratio(X1),
        "o_proj_input_max_over_rms": ratio(torch.cat(X2).flatten(1)),
        "down_proj_input_max_over_rms": ratio(down_in[0].flatten(0, 1)),
    }
    fp = perplexity(model, val)
    rows: list[dict[str, Any]] = [
        {"method": "FP (no quantisation)", "W4A4KV4_ppl": fp, "W4A8KV8_ppl": fp}
    ]
    details = {}
    for method in progress(methods, "methods"):
        seeds = [seed] if method in SINGLE_SEED else [seed + k for k in range(rotation_seeds)]
        runs = []
        for s in seeds:
            res = pipeline(model, calib, method, seed=s, e2e_steps=e2e_steps, e2e_lr=e2e_lr)
            runs.append(
                {
                    "w4a4": perplexity(res.model, val),
                    "w4a8": perplexity(quantized_copy(res.fp_model, 4, 8, 8), val),
                    "x1": ratio(X1 @ res.R1) if res.R1 is not None else ratio(X1),
                    "calib_s": res.calib_seconds,
                    "info": {k: v for k, v in res.info.items() if k != "e2e_loss"},
                }
            )
        mem = peak_memory(
            lambda m=method: calibrate_rotations(model, calib, m, seed=seed, **_memory_probe_kw(m))
        )
        w4a4, w4a8 = [r["w4a4"] for r in runs], [r["w4a8"] for r in runs]
        rows.append(
            {
                "method": LABELS[method],
                "seeds": len(seeds),
                "W4A4KV4_ppl": float(np.mean(w4a4)),
                "W4A4KV4_range": f"{min(w4a4):.3g}-{max(w4a4):.3g}",
                "W4A8KV8_ppl": float(np.mean(w4a8)),
                "W4A8KV8_range": f"{min(w4a8):.3g}-{max(w4a8):.3g}",
                "X1_max/rms_rotated": float(np.mean([r["x1"] for r in runs])),
                "calib_s": float(np.mean([r["calib_s"] for r in runs])),
                "calib_peak_MB": mem / 2**20,
            }
        )
        details[method] = runs
    title = f"TinyLlama d=64, {train_steps} training steps, validation PPL (RTN weights)"
    print_table(rows, title=title)
    print_table([outliers], title="Outliers of the cached activations (mean max/RMS per token)")
    sweep = [time_to_target(d, seed=seed) for d in progress(sweep_dims, "d-sweep")]
    print_table(sweep, title="Seconds to a common Whip-loss target: QR-Orth vs Cayley SGD")
    fig, axes = figure(1, 2, size=(10.0, 4.0))
    ax1, ax2 = axes[0]
    names = [r["method"].split(" (")[0] for r in rows]
    xs = range(len(rows))
    ax1.bar([x - 0.2 for x in xs], [r["W4A4KV4_ppl"] for r in rows], 0.4, label="W4A4KV4")
    ax1.bar([x + 0.2 for x in xs], [r["W4A8KV8_ppl"] for r in rows], 0.4, label="W4A8KV8")
    ax1.set_xticks(list(xs), names, rotation=30, ha="right", fontsize=7)
    ax1.set_ylabel("validation perplexity")
    ax1.legend()
    ax2.loglog([r["d"] for r in sweep], [r["qr_s"] for r in sweep], "o-", label="QR-Orth")
    ax2.loglog([r["d"] for r in sweep], [r["cayley_s"] for r in sweep], "s--", label="Cayley SGD")
    ax2.set_xlabel("d")
    ax2.set_ylabel("seconds to Whip-loss target")
    ax2.legend()
    save_figure(fig, Path(out) / "ppl.png")
    return {
        "table": rows,
        "outliers": outliers,
        "details": details,
        "d_sweep": sweep,
        "train_loss": losses[-20:],
    }
