"""Benchmark: GoRA's set-up overhead, and its training cost against LoRA at the same budget.

``gora bench [--quick] [--out DIR]`` builds the reproduction's encoder at widths ``dim``
(4 blocks, adapters on q, k, v, o, fc1, fc2, r0 = 4, alpha = 8) and measures, in one run per
width, with :func:`paperkit.measure` (median seconds per call, interquartile spread, peak bytes):

- ``setup``: the GoRA set-up (N = 8 gradient batches of 32, importance, allocation,
  initialisation, peft wrapping), and ``grad_pass``: the gradient pass alone (its peak bytes are
  the fp32 gradient held per target weight);
- ``epoch300`` / ``epoch1797``: one fine-tuning epoch of the GoRA model (batch 32, AdamW) over
  the reproduction's 300 images and over all 1797 digits;
- ``step``: one training step (batch 32, AdamW) of GoRA and of plain LoRA (both peft).

Claims (efficiency, abstract: GoRA keeps "the efficiency of vanilla LoRA"):

1. The set-up is small next to training: held when it costs < 10% of one epoch for every epoch
   length measured, partly when for some, not held when for none.
2. A GoRA training step costs what a LoRA step costs: held when the step-time ratio is within
   10% of 1 at every width, partly when at some, not held when at none.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import torch
from torch import nn

from gora.data import digits_tasks
from gora.finetune import cross_entropy_loss, train_epochs
from gora.gradients import collect_gradients
from gora.model import TARGETS, DigitsEncoder
from gora.pipeline import apply_plan, plan_gora
from paperkit import Claim, Measurement, Report, figure, measure, print_table, progress, save_figure

__all__ = ["bench"]

R0, N_GRAD, BATCH = 4, 8, 32
SETUP_TARGET = 0.1  # set-up below 10% of one epoch
STEP_TOLERANCE = 0.1  # GoRA's step within 10% of LoRA's


def _lora(model: nn.Module) -> nn.Module:
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=R0, lora_alpha=2 * R0, target_modules=TARGETS, modules_to_save=["head"])
    return get_peft_model(model, config)


def _step_fn(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]):
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)

    def step() -> None:
        loss = cross_entropy_loss(model, batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return step


def _trainable(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters() if p.requires_grad)


def _width(dim: int, device: str, repeats: int, min_time: float) -> list[Measurement]:
    """Every measurement of one width (see the module docstring)."""
    torch.manual_seed(0)
    base = DigitsEncoder(n_classes=5, dim=dim).to(device)
    tasks = digits_tasks(0)
    X, y = tasks.X_train.to(device), tasks.y_train.to(device)
    X_all = torch.cat([tasks.X_pre, tasks.X_train, tasks.X_test]).to(device)
    y_all = torch.cat([tasks.y_pre % 5, tasks.y_train, tasks.y_test]).to(device)
    grad_batches = [(X[i : i + BATCH], y[i : i + BATCH]) for i in range(0, N_GRAD * BATCH, BATCH)]
    timer = {"device": device, "min_repeats": repeats, "min_time": min_time}

    def setup() -> nn.Module:
        model = copy.deepcopy(base)
        plan = plan_gora(
            model, grad_batches, cross_entropy_loss, TARGETS, R0, 2 * R0, n_steps=N_GRAD
        )
        return apply_plan(model, plan, "peft", modules_to_save=["head"])

    def grad_pass() -> None:
        collect_gradients(base, grad_batches, cross_entropy_loss, TARGETS, N_GRAD, device=device)

    rows = [
        measure("gora", dim, setup, case="setup", **timer),
        measure("gora", dim, grad_pass, case="grad_pass", **timer),
    ]
    gora = setup()
    lora = _lora(copy.deepcopy(base))
    params = {"gora": {"trainable": _trainable(gora)}, "lora": {"trainable": _trainable(lora)}}
    for case, (Xe, ye) in {"epoch300": (X, y), "epoch1797": (X_all, y_all)}.items():
        model = copy.deepcopy(gora)

        def epoch(model=model, Xe=Xe, ye=ye) -> None:
            train_epochs(model, Xe, ye, epochs=1, lr=1e-4, seed=0, batch=BATCH)

        rows.append(measure("gora", dim, epoch, case=case, memory=False, warmup=0, **timer))
    batch = (X[:BATCH], y[:BATCH])
    for name, model in (("lora", lora), ("gora", gora)):
        step = _step_fn(model, batch)
        rows.append(measure(name, dim, step, case="step", params=params[name], **timer))
    return rows


def _row(rows: list[Measurement], impl: str, case: str, dim: int) -> Measurement:
    return next(r for r in rows if (r.impl, r.case, r.size) == (impl, case, dim))


def _tables(rows: list[Measurement], dims: list[int]) -> dict[str, list[dict[str, Any]]]:
    """The two printed tables: set-up against an epoch, and step cost and memory."""
    overhead, cost = [], []
    for dim in dims:
        setup = _row(rows, "gora", "setup", dim).seconds
        e300 = _row(rows, "gora", "epoch300", dim).seconds
        e1797 = _row(rows, "gora", "epoch1797", dim).seconds
        overhead.append(
            {
                "dim": dim,
                "setup_ms": 1e3 * setup,
                "epoch300_ms": 1e3 * e300,
                "setup/epoch300": setup / e300,
                "epoch1797_ms": 1e3 * e1797,
                "setup/epoch1797": setup / e1797,
            }
        )
        lora, gora = _row(rows, "lora", "step", dim), _row(rows, "gora", "step", dim)
        cost.append(
            {
                "dim": dim,
                "lora_step_ms": 1e3 * lora.seconds,
                "gora_step_ms": 1e3 * gora.seconds,
                "step_ratio": gora.seconds / lora.seconds,
                "lora_params": lora.params["trainable"],
                "gora_params": gora.params["trainable"],
                "lora_step_peak_bytes": lora.peak_bytes,
                "gora_step_peak_bytes": gora.peak_bytes,
                "grad_pass_peak_bytes": _row(rows, "gora", "grad_pass", dim).peak_bytes,
            }
        )
    return {"overhead": overhead, "cost": cost}


def _verdict(hits: int, total: int) -> str:
    return "held" if hits == total else ("partly" if hits else "not held")


def _claims(tables: dict[str, list[dict[str, Any]]]) -> list[Claim]:
    """The efficiency claims of the module docstring, from the measured ratios."""
    overhead, cost = tables["overhead"], tables["cost"]
    shares = [r[k] for r in overhead for k in ("setup/epoch300", "setup/epoch1797")]
    ratios = [r["step_ratio"] for r in cost]
    efficiency = 'abstract: GoRA preserves "the efficiency of vanilla LoRA"'
    return [
        Claim(
            "GoRA's set-up (gradient pass, allocation, initialisation) is small next to training",
            paper=efficiency,
            measured="set-up / epoch: "
            + ", ".join(
                f"d={r['dim']}: {r['setup/epoch300']:.3g} (300 images), "
                f"{r['setup/epoch1797']:.3g} (1797 images)"
                for r in overhead
            ),
            verdict=_verdict(sum(s < SETUP_TARGET for s in shares), len(shares)),
            why=f"held when the set-up costs < {SETUP_TARGET:.0%} of one epoch for every epoch "
            f"measured; the set-up is N = {N_GRAD} forward and backward passes, so its share is "
            f"about N / steps per epoch and needs epochs of more than {N_GRAD / SETUP_TARGET:.0f} "
            "steps",
        ),
        Claim(
            "After the set-up a GoRA training step costs what a LoRA step costs",
            paper=efficiency,
            measured="GoRA / LoRA step time: "
            + ", ".join(f"d={r['dim']}: {r['step_ratio']:.3g}" for r in cost),
            verdict=_verdict(sum(abs(x - 1) <= STEP_TOLERANCE for x in ratios), len(ratios)),
            why=f"held when the ratio is within {STEP_TOLERANCE:.0%} of 1 at every width; GoRA is "
            "a plain peft LoRA model with other per-layer ranks; medians of one run",
        ),
    ]


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    dims: list[int] | None = None,
    repeats: int | None = None,
) -> Report:
    """The overhead and cost tables over widths ``dims`` and ``overhead.png``; ``dims`` and
    ``repeats`` (the fewest timed calls per measurement) override the defaults for smoke tests."""
    dims = list(dims or ([64, 128] if quick else [64, 128, 256]))
    repeats = repeats or (3 if quick else 5)
    min_time = 0.2 if quick else 0.5
    rows = [m for d in progress(dims, "bench") for m in _width(d, device, repeats, min_time)]
    tables = _tables(rows, dims)
    print_table(tables["overhead"], title=f"GoRA set-up (N={N_GRAD}) vs one epoch ({device})")
    print_table(tables["cost"], title="Training step and memory: GoRA vs LoRA at r0 = 4 (peft)")
    fig, ax = figure(size=(5.5, 4.0))
    ax.plot(dims, [r["setup/epoch300"] for r in tables["overhead"]], "o-", label="300 images")
    ax.plot(dims, [r["setup/epoch1797"] for r in tables["overhead"]], "s-", label="1797 images")
    ax.axhline(SETUP_TARGET, color="gray", ls="--", label=f"{SETUP_TARGET:.0%}")
    ax.set_xlabel("model width d")
    ax.set_ylabel("GoRA set-up / one epoch")
    ax.legend()
    path = save_figure(fig, Path(out) / "overhead.png")
    return Report(
        claims=_claims(tables),
        tables=tables,
        figures=[path],
        settings={
            "dims": dims,
            "min_repeats": repeats,
            "min_time_s": min_time,
            "r0": R0,
            "alpha": 2 * R0,
            "n_grad_batches": N_GRAD,
            "batch_size": BATCH,
            "device": device,
        },
        measurements=rows,
    )
