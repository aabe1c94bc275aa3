"""Small-scale reproduction: ``dartquant reproduce [--quick] [--seed N] [--out DIR]``.

1. A transformers ``LlamaForCausalLM`` (d=64, 2 layers, 4 heads, h=16, vocab 96) is trained from
   scratch on seeded synthetic grammar text with a fixed offset on 4 residual channels (30x the
   channel RMS), then gets function-preserving x30 channel scalings at the R2 (v→o) and R4
   (up→down) points.
2. Every method of :data:`dartquant.METHODS` rotates it using 32 calibration sequences x 64
   tokens; validation perplexity is measured at W4A4KV4 and W4A8KV8 (RTN), with the calibration
   wall time and the peak memory of a short run of the same calibration
   (:func:`dartquant.bench.calibration_peak_bytes`: activation caches and per-step buffers,
   which do not grow with the number of steps).
3. A d-sweep on heavy-tailed synthetic activations: seconds for QR-Orth and Cayley SGD (same
   Whip loss, same lr and batches, random start) to reach a common Whip-loss target.

The claims are judged from these numbers by the rules written in each :class:`paperkit.Claim`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from dartquant.bench import MEMORY_PROBE, NOISE_RATIO, calibration_peak_bytes
from dartquant.calibrate import calibrate_rotation
from dartquant.data import heavy_tailed_acts, token_splits
from dartquant.fusion import inject_channel_outliers, quantized_copy
from dartquant.model import perplexity
from dartquant.recipe import METHODS, collect_activations, pipeline
from dartquant.training import random_windows, train_tiny_llama
from paperkit import Claim, Report, figure, print_table, progress, save_figure

__all__ = ["build_setting", "reproduce", "time_to_target"]

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
    """The short version of a method's calibration whose peak memory is measured."""
    if method == "spinquant_lite":
        return MEMORY_PROBE["spinquant_lite"]
    if method in ("dartquant", "cayley_whip"):
        return MEMORY_PROBE["dartquant"]
    return {}


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


def _untestable(statement: str, paper: str, missing: list[str]) -> Claim:
    return Claim(
        statement,
        paper=paper,
        measured=None,
        verdict="not testable here",
        why=f"method(s) {', '.join(missing)} not in this run",
    )


def _claims(by: dict[str, dict[str, Any]], sweep: list[dict[str, Any]], e2e_steps: int) -> list:
    """The paper's claims, judged from the perplexity table (rows keyed by method) and the
    d-sweep; the headline first."""

    def need(*methods: str) -> list[str]:
        return [m for m in methods if m not in by]

    claims = []
    statement = (
        "Calibrating rotations locally (Whip loss + QR-Orth on cached activations) is far "
        "cheaper than end-to-end rotation training"
    )
    paper = "47x faster and 10x less memory for rotational optimisation on a 70B model (abstract)"
    if missing := need("dartquant", "spinquant_lite"):
        claims.append(_untestable(statement, paper, missing))
    else:
        local, e2e = by["dartquant"], by["spinquant_lite"]
        t_ratio = e2e["calib_s"] / local["calib_s"]
        measured = (
            f"{t_ratio:.3g}x faster ({local['calib_s']:.3g} s vs {e2e['calib_s']:.3g} s for "
            f"{e2e_steps} end-to-end steps)"
        )
        if local["calib_peak_bytes"]:
            m_ratio = e2e["calib_peak_bytes"] / local["calib_peak_bytes"]
            measured += f", {m_ratio:.3g}x less peak memory"
            verdict = "held" if t_ratio > 1 and m_ratio > 1 else "not held"
        else:
            measured += "; the local probe's resident-set growth was 0 bytes"
            verdict = "not testable here"
        claims.append(
            Claim(
                statement,
                paper=paper,
                measured=measured,
                verdict=verdict,
                why="held when both the time and the peak-memory ratio exceed 1; a d=64 "
                "LlamaForCausalLM on a shared CPU, so only the direction is tested: the 70B "
                "magnitudes (weights and activations of a full forward/backward against a layer's "
                "cache) cannot appear at this scale",
            )
        )
    statement = "DartQuant gives lower W4A4KV4 perplexity than QuaRot's random Hadamard rotation"
    paper = (
        "DartQuant 'demonstrates superior performance' over existing rotation methods (abstract)"
    )
    if missing := need("dartquant", "quarot"):
        claims.append(_untestable(statement, paper, missing))
    else:
        dq, qr = by["dartquant"], by["quarot"]
        claims.append(
            Claim(
                statement,
                paper=paper,
                measured=f"{dq['W4A4KV4_ppl']:.4g} ({dq['W4A4KV4_range']}) vs "
                f"{qr['W4A4KV4_ppl']:.4g} ({qr['W4A4KV4_range']})",
                verdict="held" if dq["w4a4_max"] < qr["w4a4_min"] else "not held",
                why=f"held when every DartQuant seed beats every QuaRot seed ({dq['seeds']} "
                "seeds each); overlapping ranges are a tie at this scale",
            )
        )
    statement = "Rotations make W4A4KV4 quantisation work: every rotation method beats RTN alone"
    paper = "rotated methods far below RTN without rotation in the paper's W4A4KV4 tables"
    rotated = [m for m in by if m != "none"]
    if (missing := need("none")) or not rotated:
        claims.append(_untestable(statement, paper, missing or ["any rotation"]))
    else:
        worst = max(by[m]["W4A4KV4_ppl"] for m in rotated)
        best = min(by[m]["W4A4KV4_ppl"] for m in rotated)
        base = by["none"]["W4A4KV4_ppl"]
        claims.append(
            Claim(
                statement,
                paper=paper,
                measured=f"{best:.4g}-{worst:.4g} with rotation vs {base:.4g} without",
                verdict="held" if worst < base else "not held",
                why="held when the worst rotation method's mean perplexity is below RTN's",
            )
        )
    statement = "The Whip loss flattens the rotated activations more than a random Hadamard"
    paper = "Whip loss pushes rotated activations towards a uniform, outlier-free distribution"
    if missing := need("dartquant", "quarot"):
        claims.append(_untestable(statement, paper, missing))
    else:
        dq, qr = by["dartquant"]["X1_max/rms_rotated"], by["quarot"]["X1_max/rms_rotated"]
        claims.append(
            Claim(
                statement,
                paper=paper,
                measured=f"residual-stream max/RMS {dq:.3g} (DartQuant R1) vs {qr:.3g} (QuaRot)",
                verdict="held" if dq < qr else "not held",
                why="held when the calibrated R1 gives the smaller mean max/RMS per token",
            )
        )
    statement = "End-to-end rotation training (SpinQuant) beats a random Hadamard (QuaRot)"
    paper = "SpinQuant, the end-to-end reference DartQuant is compared with, improves on QuaRot"
    if missing := need("spinquant_lite", "quarot"):
        claims.append(_untestable(statement, paper, missing))
    else:
        sq, qr = by["spinquant_lite"], by["quarot"]
        claims.append(
            Claim(
                statement,
                paper=paper,
                measured=f"{sq['W4A4KV4_ppl']:.4g} vs {qr['W4A4KV4_ppl']:.4g} "
                f"({qr['W4A4KV4_range']})",
                verdict="held" if sq["W4A4KV4_ppl"] < qr["w4a4_min"] else "not held",
                why=f"held when SpinQuant-lite beats QuaRot's best seed; {e2e_steps} steps at lr "
                f"{E2E_LR} on 32 sequences",
            )
        )
    speedups = [r["speedup"] for r in sweep]
    claims.append(
        Claim(
            "QR-Orth reaches a Whip-loss target faster than Cayley SGD",
            paper="QR-Orth replaces expensive alternating (Cayley) optimisation by a more "
            "efficient solution (abstract)",
            measured=f"speed-up {min(speedups):.3g}-{max(speedups):.3g} "
            f"(d = {sweep[0]['d']}..{sweep[-1]['d']})",
            verdict="held" if min(speedups) > NOISE_RATIO else "not held",
            why=f"held when QR-Orth is more than {NOISE_RATIO}x faster at every d (the timing "
            "noise of the shared machine); both reach the same final loss",
        )
    )
    return claims


def build_setting(
    seed: int, train_steps: int, n_chars: int, val_chars: int
) -> tuple[torch.nn.Module, list[float], torch.Tensor, torch.Tensor]:
    """The reproduction's model, training losses, calibration windows and validation ids.

    A tiny ``LlamaForCausalLM`` trained ``train_steps`` steps on synthetic text, with channel
    outliers injected; 32 calibration windows of 64 tokens from the training text; ``val_chars``
    held-out ids.
    """
    train_ids, val_ids = token_splits(n_chars, seed=seed)
    model, losses = train_tiny_llama(train_ids, steps=train_steps, seed=seed)
    inject_channel_outliers(model, 30.0, 2, seed=seed)
    gen = torch.Generator().manual_seed(seed + 1)
    calib = random_windows(train_ids, 32, 64, gen)
    return model, losses, calib, val_ids[:val_chars]


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
) -> Report:
    """Run the comparison; print the tables, save ``ppl.png``; return the claims and tables.

    Keyword overrides (``train_steps``, ``n_chars``, ``methods``, ``e2e_steps``, ``sweep_dims``,
    ``rotation_seeds``) shrink the run for smoke tests. Rotation methods other than
    :data:`SINGLE_SEED` run with ``rotation_seeds`` seeds (random signs / calibration subsets);
    the table gives the mean and range of their perplexities."""
    train_steps = train_steps or (200 if quick else 1000)
    e2e_steps = e2e_steps or (50 if quick else 200)
    sweep_dims = sweep_dims or ([64, 128, 256] if quick else [64, 128, 256, 512])
    val_chars = 16_000 if quick else 40_000
    model, losses, calib, val = build_setting(seed, train_steps, n_chars, val_chars)
    X1, X2 = collect_activations(model, calib)
    ratio = lambda x: float((x.abs().amax(-1) / x.pow(2).mean(-1).sqrt()).mean())  # noqa: E731
    down_in = []
    hook = model.model.layers[0].mlp.down_proj.register_forward_pre_hook(
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
    by_method: dict[str, dict[str, Any]] = {}
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
        peak = calibration_peak_bytes(model, calib, method, seed=seed, **_memory_probe_kw(method))
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
                "calib_peak_MiB": peak / 2**20,
            }
        )
        by_method[method] = {
            **rows[-1],
            "w4a4_min": min(w4a4),
            "w4a4_max": max(w4a4),
            "calib_peak_bytes": peak,
        }
        details[method] = runs
    title = f"LlamaForCausalLM d=64, {train_steps} training steps, validation PPL (RTN weights)"
    print_table(rows, title=title)
    print_table([outliers], title="Outliers of the cached activations (mean max/RMS per token)")
    sweep = [time_to_target(d, seed=seed) for d in progress(sweep_dims, "d-sweep")]
    print_table(sweep, title="Seconds to a common Whip-loss target: QR-Orth vs Cayley SGD")
    claims = _claims(by_method, sweep, e2e_steps)
    print_table(
        [{"verdict": c.verdict, "claim": c.statement, "measured": c.measured} for c in claims],
        title="The paper's claims at this scale",
    )
    figure_path = _plot(rows, sweep, Path(out) / "ppl.png")
    return Report(
        claims=claims,
        tables={"perplexity": rows, "outliers": [outliers], "time_to_target": sweep},
        figures=[figure_path],
        settings={
            "quick": quick,
            "seed": seed,
            "train_steps": train_steps,
            "n_chars": n_chars,
            "val_chars": val_chars,
            "methods": list(methods),
            "rotation_seeds": rotation_seeds,
            "e2e_steps": e2e_steps,
            "e2e_lr": e2e_lr,
            "sweep_dims": sweep_dims,
            "model": {"dim": 64, "n_layers": 2, "n_heads": 4, "vocab": 96, "outliers": 30.0},
            "calib_tokens": [32, 64],
            "bits": {"W4A4KV4": [4, 4, 4], "W4A8KV8": [4, 8, 8], "weights": "rtn"},
            "memory_probe": {m: _memory_probe_kw(m) for m in methods},
            "noise_ratio": NOISE_RATIO,
        },
        data={
            "details": details,
            "calib_peak_bytes": {m: r["calib_peak_bytes"] for m, r in by_method.items()},
            "train_loss": losses[-20:],
        },
    )


def _plot(rows: list[dict[str, Any]], sweep: list[dict[str, Any]], path: Path) -> Path:
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
    return save_figure(fig, path)
