"""Small-scale pre-training: ``alphadecay reproduce [--quick] [--seed N] [--out DIR]``.

Data: :func:`alphadecay.synthetic_corpus` (seeded grammar text, character tokens), 2M train and
200k held-out tokens. Model: TinyLlama d=64, 2 layers, 4 heads, SwiGLU, RMSNorm, context 64
(0.1M parameters), trained from scratch with AdamW, lr 1e-3, 10% warm-up then cosine, batch 16.
AlphaDecay: s1 = 2/3, s2 = 3, re-assignment every 100 steps, min_eigs = 8.

``--quick``: base decay 0.1, Uniform vs AlphaDecay, one seed, 300 steps. Full: base decay 0.1
with WD=0, Uniform, AWD, AdaDecay and AlphaDecay, base decay 0.05 with Uniform and AlphaDecay,
two seeds, 500 steps. Reported per scheme: held-out loss and perplexity (mean and std over
seeds), the spread (std) of the module exponents at the end, the mean exponent of attention and
MLP modules, wall time; then whether the paper's claims held.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from alphadecay.data import synthetic_corpus
from alphadecay.train import sample_batch, train_lm
from paperkit import figure, print_table, progress, save_figure

__all__ = ["FULL_CONFIGS", "QUICK_CONFIGS", "reproduce", "summarize"]

QUICK_CONFIGS = ((0.1, "Uniform"), (0.1, "AlphaDecay"))
FULL_CONFIGS = (
    (0.1, "WD=0"),
    (0.1, "Uniform"),
    (0.1, "AWD"),
    (0.1, "AdaDecay"),
    (0.1, "AlphaDecay"),
    (0.05, "Uniform"),
    (0.05, "AlphaDecay"),
)


def _mean_std(values: list[float]) -> tuple[float, float]:
    return float(np.mean(values)), float(np.std(values))


def summarize(runs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per (base decay, scheme): means and seed spreads of the runs."""
    rows = []
    keys = list(dict.fromkeys((r["base_wd"], r["scheme"]) for r in runs))
    for wd, scheme in keys:
        mine = [r for r in runs if (r["base_wd"], r["scheme"]) == (wd, scheme)]
        ppl, ppl_std = _mean_std([r["val_ppl"] for r in mine])
        rows.append(
            {
                "scheme": scheme,
                "base_wd": wd,
                "val_loss": float(np.mean([r["val_loss"] for r in mine])),
                "val_ppl": ppl,
                "ppl_std": ppl_std,
                "alpha_std": float(np.mean([r["alpha_std"] for r in mine])),
                "alpha_attn": float(np.mean([r["alpha_type_mean"]["attn"] for r in mine])),
                "alpha_mlp": float(np.mean([r["alpha_type_mean"]["mlp"] for r in mine])),
                "wall_s": float(np.mean([r["wall_s"] for r in mine])),
                "seeds": len(mine),
            }
        )
    return rows


def _claims(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for wd in sorted({r["base_wd"] for r in rows}, reverse=True):
        by = {r["scheme"]: r for r in rows if r["base_wd"] == wd}
        if "Uniform" not in by or "AlphaDecay" not in by:
            continue
        uni, ad = by["Uniform"], by["AlphaDecay"]
        gap = uni["val_ppl"] - ad["val_ppl"]
        spread = max(uni["ppl_std"], ad["ppl_std"])
        row = {
            "base_wd": wd,
            "ppl_gain_vs_uniform": gap,
            "seed_std": spread,
            "alphadecay_ppl_le_uniform": gap >= 0,
            "gain_exceeds_seed_std": gap > spread if spread > 0 else None,
            "alpha_std_smaller": ad["alpha_std"] < uni["alpha_std"],
            "attn_heavier_than_mlp": uni["alpha_attn"] < uni["alpha_mlp"],
        }
        if "AWD" in by:
            row["awd_not_better_than_uniform"] = by["AWD"]["val_ppl"] >= uni["val_ppl"]
        out.append(row)
    return out


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    steps: int | None = None,
    seeds: int | None = None,
    configs: tuple[tuple[float, str], ...] | None = None,
    n_tokens: int = 2_200_000,
    d: int = 64,
    n_layers: int = 2,
    update_every: int = 100,
) -> dict[str, Any]:
    """Run the comparison, print the tables, save ``curves.png``; return the results.

    Keyword overrides (``steps``, ``seeds``, ``configs``, ``n_tokens``, ``d``, ``n_layers``,
    ``update_every``) shrink the run for smoke tests.
    """
    steps = steps or (300 if quick else 500)
    n_seeds = seeds or (1 if quick else 2)
    configs = configs or (QUICK_CONFIGS if quick else FULL_CONFIGS)
    corpus = synthetic_corpus(n_tokens, seed=seed)
    n_val = max(n_tokens // 11, 2_000)
    train_data, held_out = corpus[:-n_val], corpus[-n_val:]
    gen = torch.Generator().manual_seed(seed + 7)
    val_batches = [sample_batch(held_out, gen, 32, 64) for _ in range(16)]
    jobs = [(wd, scheme, seed + s) for wd, scheme in configs for s in range(n_seeds)]
    runs = [
        train_lm(
            scheme,
            base_wd=wd,
            steps=steps,
            seed=run_seed,
            train_data=train_data,
            val_batches=val_batches,
            d=d,
            n_layers=n_layers,
            update_every=update_every,
            eval_every=max(1, steps // 6),
        )
        for wd, scheme, run_seed in progress(jobs, "train")
    ]
    rows = summarize(runs)
    title = (
        f"TinyLlama d={d}, {n_layers} layers, {steps} steps, {n_seeds} seed(s): held-out "
        "perplexity and module-exponent spread"
    )
    print_table(rows, title=title)
    claims = _claims(rows)
    print_table(claims, title="Paper's claims at this scale")
    fig, axes = figure(1, 2, size=(10.0, 4.0))
    ax_ppl, ax_alpha = axes[0]
    for r in runs:
        if r["seed"] != seed:
            continue
        label = f"{r['scheme']} wd={r['base_wd']}"
        ax_ppl.plot([c[0] for c in r["curve"]], [np.exp(c[1]) for c in r["curve"]], label=label)
        ax_alpha.plot([c[0] for c in r["alpha_std_curve"]], [c[1] for c in r["alpha_std_curve"]])
    ax_ppl.set(xlabel="step", ylabel="held-out perplexity", yscale="log", title="perplexity")
    ax_alpha.set(xlabel="step", ylabel="std of module alphas", title="spectral balance")
    ax_ppl.legend(fontsize=7)
    save_figure(fig, Path(out) / "curves.png")
    return {"summary": rows, "claims": claims, "runs": runs, "steps": steps}
