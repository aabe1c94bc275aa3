"""Small-scale pre-training: ``subtrack reproduce [--quick] [--seed N] [--out DIR]``.

A transformers ``LlamaForCausalLM`` (d=128, 2 layers, 4 heads, context 64) is trained from scratch
on the seeded synthetic grammar corpus (batch 16, lr 1e-3 with 10% warm-up and cosine decay, rank
32 on every attention and MLP matrix, subspace update interval 50, alpha 0.25) with full-rank
AdamW, GaLore, Fira, LDAdam-like, and the ablation SubTrack-Grad, SubTrack-Grad+PA (projection-
aware moments) and SubTrack++ (+PA +RS, recovery scaling). Reported per method: final held-out loss
(mean and spread over seeds), tokens/s, wall time, time in subspace updates, optimizer-state bytes,
and the training time until the held-out loss first reaches the worst method's final loss. Then the
time of one subspace update (SVD for GaLore vs the geodesic step) over matrix sizes.

The run's sizes are a :class:`Settings` (:data:`QUICK` or :data:`FULL`); the claims' verdicts
follow the rules written in :func:`claims`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit import (
    Claim,
    Report,
    figure,
    print_table,
    progress,
    save_figure,
)
from subtrack.bench import update_timing
from subtrack.data import synthetic_corpus
from subtrack.train import METHOD_GROUPS, SUBSPACE, batch_of, train

__all__ = [
    "FULL",
    "QUICK",
    "Settings",
    "claims",
    "reproduce",
    "time_to_target",
]

LOW_RANK_BASELINES = ("GaLore", "Fira", "LDAdam-like")
ABLATION = ("SubTrack-Grad", "SubTrack-Grad+PA", "SubTrack++")


@dataclass(frozen=True)
class Settings:
    """Every size of a run.

    Attributes:
        steps: training steps per run.
        methods: the arms of :data:`METHOD_GROUPS` trained.
        seeds: how many seeds per arm (``seed``, ``seed + 1``, ...).
        sizes: n of the n x n update-time table (rank 64).
        n_tokens: characters of the synthetic corpus (5 % held out).
        dim: model width (2 layers, 4 heads, context 64, batch 16, rank 32).
        timing_min_s: the least time each update is timed for.
    """

    steps: int = 600
    methods: tuple[str, ...] = tuple(METHOD_GROUPS)
    seeds: int = 2
    sizes: tuple[int, ...] = (256, 512, 1024, 2048)
    n_tokens: int = 2_000_000
    dim: int = 128
    timing_min_s: float = 0.3


FULL = Settings()
QUICK = Settings(
    steps=200,
    methods=("AdamW", "GaLore", "SubTrack++"),
    seeds=1,
    sizes=(256, 512, 1024),
    timing_min_s=0.1,
)


def time_to_target(curve: list[tuple[int, float, float]], target: float) -> float | None:
    """Training wall time at the first evaluation with held-out loss <= ``target`` (None: never)."""
    return next((wall for _, wall, loss in curve if loss <= target), None)


def _shown(rows: dict[str, dict[str, Any]], method: str) -> str:
    row = rows[method]
    spread = f" (seed spread {row['seed_spread']:.2g})" if row["seed_spread"] > 0 else ""
    return f"{method} {row['eval_loss']:.3f}{spread}"


def claims(rows: list[dict[str, Any]], timing: list[dict[str, Any]]) -> list[Claim]:
    """The paper's claims tested by the run, with the rule deciding each verdict.

    - Lowest loss: held when SubTrack++'s held-out loss is below every low-rank baseline's run
      here (GaLore, Fira, LDAdam-like) by more than the larger seed spread of the two, at the
      same optimizer-state bytes as GaLore; partly when below but within the spread.
    - Near full rank: held when SubTrack++'s loss is within 5 % of AdamW's.
    - Subspace time: held when SubTrack++ spends less time in subspace updates than GaLore and
      the geodesic step beats the SVD at every size of the timing table.
    - Wall time: held when SubTrack++'s training wall time is at least 10 % below GaLore's.
    - Ablation: held when SubTrack-Grad > +PA > SubTrack++ in loss, each step by more than the
      seed spread; partly when SubTrack++ is the best of the three; not testable here when an
      arm was not run.
    """
    by = {r["method"]: r for r in rows}
    ours = by["SubTrack++"]
    baselines = [m for m in LOW_RANK_BASELINES if m in by]
    margins = [
        by[m]["eval_loss"] - ours["eval_loss"] - max(by[m]["seed_spread"], ours["seed_spread"])
        for m in baselines
    ]
    same_memory = "GaLore" not in by or by["GaLore"]["state_bytes"] == ours["state_bytes"]
    if baselines and same_memory and min(margins) > 0:
        lowest = "held"
    elif baselines and all(by[m]["eval_loss"] > ours["eval_loss"] for m in baselines):
        lowest = "partly"
    else:
        lowest = "not held" if baselines else "not testable here"
    out = [
        Claim(
            "SubTrack++ reaches a lower evaluation loss than the other low-rank optimizers at the "
            "same optimizer-state memory",
            paper="lowest evaluation loss, same memory footprint (abstract; Llama pre-training)",
            measured="held-out loss "
            + ", ".join(_shown(by, m) for m in ("SubTrack++", *baselines))
            + f"; state {ours['state_bytes']} bytes"
            + (f" (GaLore {by['GaLore']['state_bytes']})" if "GaLore" in by else ""),
            verdict=lowest,
            why="held needs a gap larger than the seed spread to every baseline run here; "
            "LlamaForCausalLM d=128 on synthetic text, rank 32",
        )
    ]
    if "AdamW" in by:
        ratio = ours["eval_loss"] / by["AdamW"]["eval_loss"]
        out.append(
            Claim(
                "SubTrack++ comes close to full-rank AdamW",
                paper="close to full-rank training in the paper's pre-training comparison",
                measured=f"held-out loss {_shown(by, 'SubTrack++')} vs {_shown(by, 'AdamW')} "
                f"({ratio:.2f}x)",
                verdict="held" if ratio <= 1.05 else "not held",
                why="held needs a loss within 5 % of AdamW's; rank 32 of 128 on a short run",
            )
        )
    if "GaLore" in by:
        faster = all(r["speedup"] > 1 for r in timing)
        cheaper = ours["subspace_s"] < by["GaLore"]["subspace_s"]
        speedups = [r["speedup"] for r in timing]
        out.append(
            Claim(
                "Tracking the subspace on the Grassmannian costs less time than GaLore's SVDs",
                paper="wall time reduced by up to 65 % against the best earlier method (abstract)",
                measured=f"time in subspace updates {ours['subspace_s']:.3g} s vs GaLore "
                f"{by['GaLore']['subspace_s']:.3g} s; one update {min(speedups):.3g}-"
                f"{max(speedups):.3g}x faster than an SVD for n = {timing[0]['n']}.."
                f"{timing[-1]['n']} (rank 64)",
                verdict="held" if faster and cheaper else "not held",
                why="held needs less subspace time in training and a faster update at every size",
            )
        )
        wall = ours["wall_s"] / by["GaLore"]["wall_s"]
        out.append(
            Claim(
                "SubTrack++ trains in less wall time than GaLore",
                paper="pre-training wall time reduced by up to 65 % (abstract)",
                measured=f"training wall time {ours['wall_s']:.3g} s vs GaLore "
                f"{by['GaLore']['wall_s']:.3g} s ({wall:.2f}x)",
                verdict="held" if wall <= 0.9 else "not held",
                why="held needs at least 10 % less wall time; at d=128 an SVD costs about a "
                "millisecond, so the update's saving hardly shows; shared CPU cores add noise",
            )
        )
    if all(m in by for m in ABLATION):
        grad, pa, full = (by[m] for m in ABLATION)
        spread = max(r["seed_spread"] for r in (grad, pa, full))
        if (
            grad["eval_loss"] - pa["eval_loss"] > spread
            and pa["eval_loss"] - full["eval_loss"] > spread
        ):
            order = "held"
        else:
            order = (
                "partly"
                if full["eval_loss"] < min(grad["eval_loss"], pa["eval_loss"])
                else "not held"
            )
        measured = ", ".join(_shown(by, m) for m in ABLATION)
    else:
        order, measured = "not testable here", "the ablation arms were not run (quick run)"
    out.append(
        Claim(
            "Each part of SubTrack++ helps: projection-aware moments, then recovery scaling",
            paper="the paper's ablation: SubTrack-Grad, + projection-aware Adam, + recovery "
            "scaling",
            measured=measured,
            verdict=order,
            why="held needs each step of the order to beat the seed spread",
        )
    )
    return out


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Run the comparison at the sizes of :data:`QUICK` or :data:`FULL`; print the tables, save
    ``loss_curves.png``; return the claims, tables and settings."""
    settings = QUICK if quick else FULL
    corpus = synthetic_corpus(settings.n_tokens, seed=seed)
    split = int(0.95 * len(corpus))
    train_data, held_out = corpus[:split], corpus[split:]
    eval_gen = torch.Generator().manual_seed(seed + 7)
    eval_batches = [batch_of(held_out, eval_gen, 32, 64) for _ in range(8)]
    arms = [(m, s) for m in settings.methods for s in range(settings.seeds)]
    runs = [
        train(
            m,
            steps=settings.steps,
            seed=seed + s,
            train_data=train_data,
            eval_batches=eval_batches,
            dim=settings.dim,
        )
        for m, s in progress(arms, "train")
    ]
    rows = []
    for m in settings.methods:
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
                "state_bytes": mine[0]["state_bytes"],
            }
        )
    # the target every method reaches: the worst final loss, in every seed's run
    target = max(r["final_eval_loss"] for r in runs)
    for row in rows:
        times = [time_to_target(r["curve"], target) for r in runs if r["method"] == row["method"]]
        row["s_to_target"] = float(np.mean(times))
    title = (
        f"LlamaForCausalLM d={settings.dim}, {settings.steps} steps, "
        f"{settings.seeds} seed(s), rank 32"
    )
    print_table(rows, title=title)
    print(f"s_to_target: training seconds until the held-out loss first reaches {target:.4f}")
    timing = [update_timing(n, 64, min_time=settings.timing_min_s) for n in settings.sizes]
    print_table(timing, title="One subspace update: full SVD vs geodesic step (rank 64)")
    fig, ax = figure(size=(6.0, 4.0))
    for r in runs:
        if r["seed"] == seed:
            ax.plot([c[0] for c in r["curve"]], [c[2] for c in r["curve"]], label=r["method"])
    ax.set_xlabel("step")
    ax.set_ylabel("held-out loss")
    ax.set_title(title)
    ax.legend()
    path = save_figure(fig, Path(out) / "loss_curves.png")
    return Report(
        claims=claims(rows, timing),
        tables={"methods": rows, "subspace_update": timing},
        figures=[path],
        settings={
            **asdict(settings),
            "layers": 2,
            "heads": 4,
            "rank": 32,
            "update_interval": 50,
            "batch": 16,
            "context": 64,
            "lr": 1e-3,
            "schedule": "10% linear warm-up, cosine decay",
            "subspace": SUBSPACE,
            "eval": "8 held-out batches of 32 x 64 characters",
        },
        data={
            "target_loss": target,
            "curves": {f"{r['method']}/seed{r['seed']}": r["curve"] for r in runs},
        },
    )
