"""Small-scale pre-training: ``subtrack reproduce [--quick] [--seed N] [--out DIR]``.

A TinyLlama (d=128, 2 layers, 4 heads, context 64) is trained from scratch on the seeded synthetic
grammar corpus (batch 16, lr 1e-3 with 10% warm-up and cosine decay, rank 32 on every attention
and MLP matrix, subspace update interval 50, alpha 0.25) with full-rank AdamW, GaLore, Fira,
LDAdam-like, and the ablation SubTrack-Grad, SubTrack-Grad+PA (projection-aware moments) and
SubTrack++ (+PA +RS, recovery scaling). Reported per method: final held-out loss (mean and spread
over seeds), tokens/s, wall time, time in subspace updates, optimizer-state MB, and the training
time until the held-out loss first reaches the worst method's final loss. Then the
time of one subspace update (SVD for GaLore vs the geodesic step) over matrix sizes.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from paperkit import figure, print_table, progress, save_figure
from subtrack.bench import update_timing
from subtrack.data import ALPHABET, synthetic_corpus
from subtrack.model import TinyLlama
from subtrack.optimizer import SubTrackAdamW, make_param_groups, optimizer_state_bytes

__all__ = ["METHOD_GROUPS", "reproduce", "time_to_target", "train"]

SUBSPACE = {"subspace_lr": 10.0, "max_angle": 0.3}
METHOD_GROUPS: dict[str, dict[str, Any] | None] = {
    "AdamW": None,
    "GaLore": {"method": "galore"},
    "Fira": {"method": "fira"},
    "LDAdam-like": {"method": "ldadam_like"},
    "SubTrack-Grad": {
        "method": "subtrack",
        "projection_aware": False,
        "recovery_scaling": False,
        **SUBSPACE,
    },
    "SubTrack-Grad+PA": {
        "method": "subtrack",
        "projection_aware": True,
        "recovery_scaling": False,
        **SUBSPACE,
    },
    "SubTrack++": {"method": "subtrack", **SUBSPACE},  # +PA +RS
}
QUICK_METHODS = ("AdamW", "GaLore", "SubTrack++")


def _batch(data: torch.Tensor, gen: torch.Generator, batch: int, ctx: int) -> torch.Tensor:
    starts = torch.randint(0, len(data) - ctx - 1, (batch,), generator=gen)
    return torch.stack([data[i : i + ctx + 1] for i in starts.tolist()])


def _loss(model: TinyLlama, x: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(model(x[:, :-1]).flatten(0, 1), x[:, 1:].flatten())


def train(
    method: str,
    *,
    steps: int,
    seed: int,
    train_data: torch.Tensor,
    eval_batches: list[torch.Tensor],
    dim: int = 128,
    layers: int = 2,
    rank: int = 32,
    update_interval: int = 50,
    batch: int = 16,
    ctx: int = 64,
    lr: float = 1e-3,
    eval_every: int = 50,
) -> dict[str, Any]:
    """Train one model with ``method`` (a key of :data:`METHOD_GROUPS`); return its curves."""
    torch.manual_seed(seed)
    model = TinyLlama(len(ALPHABET), dim=dim, layers=layers, heads=4)
    extra = METHOD_GROUPS[method]
    groups: Any = (
        model.parameters()
        if extra is None
        else make_param_groups(model, rank, update_interval=update_interval, **extra)
    )
    opt = SubTrackAdamW(groups, lr=lr)
    warmup = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda s: (
            (s + 1) / warmup
            if s < warmup
            else 0.5 * (1 + math.cos(math.pi * (s - warmup) / max(1, steps - warmup)))
        ),
    )
    gen = torch.Generator().manual_seed(seed + 1000)

    def evaluate() -> float:
        with torch.no_grad():
            return float(np.mean([_loss(model, x).item() for x in eval_batches]))

    curve: list[tuple[int, float, float]] = []
    wall = 0.0
    for step in range(steps):
        x = _batch(train_data, gen, batch, ctx)
        start = time.perf_counter()
        loss = _loss(model, x)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        wall += time.perf_counter() - start
        if (step + 1) % eval_every == 0 or step + 1 == steps:
            curve.append((step + 1, wall, evaluate()))
    return {
        "method": method,
        "seed": seed,
        "final_eval_loss": curve[-1][2],
        "curve": curve,
        "wall_s": wall,
        "tokens_per_s": steps * batch * ctx / wall,
        "subspace_s": opt.subspace_time_s,
        "state_MB": optimizer_state_bytes(opt) / 2**20,
    }


def time_to_target(curve: list[tuple[int, float, float]], target: float) -> float | None:
    """Training wall time at the first evaluation with held-out loss <= ``target`` (None: never)."""
    return next((wall for _, wall, loss in curve if loss <= target), None)


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    steps: int | None = None,
    methods: tuple[str, ...] | None = None,
    seeds: int | None = None,
    sizes: list[int] | None = None,
    n_tokens: int = 2_000_000,
    dim: int = 128,
) -> dict[str, Any]:
    """Run the comparison; print the tables, save ``loss_curves.png``; return the results.

    Keyword overrides (``steps``, ``methods``, ``seeds``, ``sizes``, ``n_tokens``, ``dim``)
    shrink the run for smoke tests.
    """
    steps = steps or (200 if quick else 600)
    methods = methods or (QUICK_METHODS if quick else tuple(METHOD_GROUPS))
    n_seeds = seeds or (1 if quick else 2)
    sizes = sizes or ([256, 512, 1024] if quick else [256, 512, 1024, 2048])
    corpus = synthetic_corpus(n_tokens, seed=seed)
    split = int(0.95 * len(corpus))
    train_data, held_out = corpus[:split], corpus[split:]
    eval_gen = torch.Generator().manual_seed(seed + 7)
    eval_batches = [_batch(held_out, eval_gen, 32, 64) for _ in range(8)]
    runs = [
        train(
            m, steps=steps, seed=seed + s, train_data=train_data, eval_batches=eval_batches, dim=dim
        )
        for m, s in progress([(m, s) for m in methods for s in range(n_seeds)], "train")
    ]
    rows = []
    for m in methods:
        mine = [r for r in runs if r["method"] == m]
        losses = [r["final_eval_loss"] for r in mine]
        rows.append(
            {
                "method": m,
                "eval_loss": float(np.mean(losses)),
                "seed_spread": float(np.max(losses) - np.min(losses)),
                "tokens/s": float(np.mean([r["tokens_per_s"] for r in mine])),
                "wall_s": float(np.mean([r["wall_s"] for r in mine])),
                "subspace_s": float(np.mean([r["subspace_s"] for r in mine])),
                "state_MB": mine[0]["state_MB"],
            }
        )
    # the target every method reaches: the worst final loss, in every seed's run
    target = max(r["final_eval_loss"] for r in runs)
    for row in rows:
        times = [time_to_target(r["curve"], target) for r in runs if r["method"] == row["method"]]
        row["s_to_target"] = float(np.mean(times))
    title = f"TinyLlama d={dim}, {steps} steps, {n_seeds} seed(s), rank 32"
    print_table(rows, title=title)
    print(f"s_to_target: training seconds until the held-out loss first reaches {target:.4f}")
    timing = [update_timing(n, 64, min_run_time=0.1 if quick else 0.3) for n in sizes]
    print_table(timing, title="One subspace update: full SVD vs geodesic step (rank 64)")
    fig, ax = figure(size=(6.0, 4.0))
    for r in runs:
        if r["seed"] == seed:
            ax.plot([c[0] for c in r["curve"]], [c[2] for c in r["curve"]], label=r["method"])
    ax.set_xlabel("step")
    ax.set_ylabel("held-out loss")
    ax.set_title(title)
    ax.legend()
    save_figure(fig, Path(out) / "loss_curves.png")
    return {"summary": rows, "target_loss": target, "runs": runs, "subspace_timing": timing}
