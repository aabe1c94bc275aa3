r"""Benchmark: wall-time of hard token pruning against the full encoder on the CPU, and the
training-time cost of the Integrated-Gradients targets.

``adtp bench [--quick]`` builds the reproduction's encoder (6 layers, D=64, 4 heads, FFN 128,
prune layers 1-5) at max_len 512 and times, over sequence lengths n and batch sizes 1 and 32,

* ``full``: ``model(ids, mask)`` (no pruning);
* ``hard``: ``model(ids, mask, "hard", schedule)``, the geometric schedule
  :math:`r_k = 0.5^k` (predictor scores, top-k gather, re-padding after each gather: the real
  inference path),

in alternating rounds (``paperkit.measure_interleaved``), and reports the same-round speed-up
against the counted FLOPs reduction (:func:`adtp.flops.encoder_flops`), and the log-log slope of
seconds against n. Then the IG cost: one call of :func:`adtp.train.ig_targets` (m=16 right Riemann
steps) against one training step (forward + backward) on the same batch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from adtp.baselines import geometric_schedule
from adtp.data import needle_task
from adtp.model import PrunableEncoder
from adtp.train import ig_targets
from paperkit import (
    Claim,
    Report,
    measure_interleaved,
    plot_scaling,
    print_table,
    progress,
    ratio_spread,
    scaling,
)

__all__ = ["RUNS", "bench"]

#: Sizes per quick: sequence lengths (all tokens valid), batch sizes, seconds per timing, IG steps.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "lengths": [64, 128, 256],
        "batches": [1, 32],
        "min_time": 0.3,
        "ig_steps": 16,
        "ig_batch": 32,
    },
    False: {
        "lengths": [64, 128, 256, 512],
        "batches": [1, 32],
        "min_time": 0.5,
        "ig_steps": 16,
        "ig_batch": 32,
    },
}
MODEL = {
    "vocab": 200,
    "dim": 64,
    "depth": 6,
    "heads": 4,
    "ffn": 128,
    "max_len": 512,
    "num_classes": 2,
    "prune_layers": [1, 2, 3, 4, 5],
}
RHO = 0.5


def _batch(n: int, batch: int, seed: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    x = needle_task(batch, min_len=n, max_len=n, seed=seed)
    return x.input_ids, x.attention_mask, x.labels


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Time full against hard-pruned inference and the IG targets; see the module docstring."""
    run = RUNS[quick]
    torch.set_num_threads(1)
    torch.manual_seed(0)
    model = PrunableEncoder(**MODEL).eval()
    schedule = geometric_schedule(RHO, len(MODEL["prune_layers"]))
    rows, table = [], []
    cases = [(b, n) for b in run["batches"] for n in run["lengths"]]
    for b, n in progress(cases, "full vs hard pruning"):
        ids, mask, _ = _batch(n, b, seed=n + b)
        with torch.no_grad():
            counted = (
                model(ids, mask)["flops"].sum() / model(ids, mask, "hard", schedule)["flops"].sum()
            )

        def full(ids=ids, mask=mask):
            with torch.no_grad():
                return model(ids, mask)

        def hard(ids=ids, mask=mask):
            with torch.no_grad():
                return model(ids, mask, "hard", schedule)

        pair = measure_interleaved(
            {"full": full, "hard": hard},
            n,
            device=device,
            case=f"batch {b}",
            min_time=run["min_time"],
            memory=False,
        )
        rows += pair
        speedup, q1, q3 = ratio_spread(pair[0], pair[1])
        table.append(
            {
                "batch": b,
                "n": n,
                "full_ms": round(1e3 * pair[0].seconds, 3),
                "hard_ms": round(1e3 * pair[1].seconds, 3),
                "speedup": round(speedup, 2),
                "speedup_iqr": f"[{q1:.2f}, {q3:.2f}]",
                "flops_reduction": round(float(counted), 2),
            }
        )
    print_table(
        table, title=f"hard pruning (schedule 0.5^k) vs full, CPU, {torch.get_num_threads()} thread"
    )
    fits = {f"batch {b}": scaling(rows, baseline="full", case=f"batch {b}") for b in run["batches"]}
    slopes = [
        {"case": c, "impl": impl, "slope": round(f["slope"], 3)}
        for c, fit in fits.items()
        for impl, f in fit.items()
    ]
    print_table(slopes, title="log-log slope of seconds against n")
    figures = [
        plot_scaling(
            rows,
            out / f"scaling_batch{b}.png",
            case=f"batch {b}",
            xlabel="sequence length n",
            title=f"full vs hard pruning, batch {b}",
        )
        for b in run["batches"]
    ]

    # IG cost: ig_targets with m steps against one training step, same batch
    ids, mask, y = _batch(64, run["ig_batch"], seed=1)

    def train_step():
        model.zero_grad()
        torch.nn.functional.cross_entropy(model(ids, mask)["logits"], y).backward()

    def ig():
        return ig_targets(model, ids, mask, y, steps=run["ig_steps"], batch_size=run["ig_batch"])

    ig_rows = measure_interleaved(
        {"train step": train_step, f"IG m={run['ig_steps']}": ig},
        64,
        device=device,
        case="IG cost",
        min_time=run["min_time"],
        memory=False,
    )
    rows += ig_rows
    ig_ratio, iq1, iq3 = ratio_spread(ig_rows[1], ig_rows[0])
    ig_table = [{"what": r.impl, "ms": round(1e3 * r.seconds, 2)} for r in ig_rows]
    ig_table.append({"what": "ratio IG / train step", "ms": round(ig_ratio, 2)})
    print_table(ig_table, title=f"IG target cost, batch {run['ig_batch']}, n=64")

    big = [r for r in table if r["batch"] == max(run["batches"]) and r["n"] == max(run["lengths"])][
        0
    ]
    share = big["speedup"] / big["flops_reduction"]
    claims = [
        Claim(
            "Hard token pruning turns the FLOPs reduction into a wall-time speed-up",
            "7.8x FLOPs reduction on GLUE (the paper reports FLOPs)",
            f"batch {big['batch']}, n={big['n']}: {big['speedup']:.2f}x faster "
            f"(IQR {big['speedup_iqr']}) at {big['flops_reduction']:.2f}x fewer FLOPs "
            f"({100 * share:.0f}% of the counted reduction)",
            "held" if share >= 0.5 else ("partly" if big["speedup"] > 1 else "not held"),
            "same-round ratios of interleaved timings, one CPU thread; the gather and the "
            "predictors are included",
        ),
        Claim(
            "The IG targets cost m forward/backward passes, at training time only",
            "IG with m steps (training only)",
            f"IG m={run['ig_steps']} = {ig_ratio:.1f}x one training step "
            f"(IQR [{iq1:.1f}, {iq3:.1f}])",
            "held" if 0.3 * run["ig_steps"] <= ig_ratio <= 2 * run["ig_steps"] else "not held",
            "no parameter gradients in IG (input gradients only), so a path step costs less "
            "than a training step",
        ),
    ]
    return Report(
        claims=claims,
        tables={"speedup": table, "slopes": slopes, "ig_cost": ig_table},
        figures=figures,
        settings={
            "quick": quick,
            **run,
            "model": MODEL,
            "schedule": schedule,
            "threads": torch.get_num_threads(),
        },
        measurements=rows,
    )
