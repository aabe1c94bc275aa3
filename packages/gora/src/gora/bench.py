"""Benchmark: GoRA's set-up overhead, and its training cost against LoRA at the same budget.

``gora bench [--quick] [--device cpu|cuda]`` builds the reproduction's encoder at widths ``dim``
(4 blocks, adapters on q, k, v, o, fc1, fc2, r0 = 4) and measures, in one run per width:

- the GoRA set-up (N = 8 gradient batches of 32, importance, allocation, initialisation, peft
  wrapping) as a fraction of one fine-tuning epoch over 300 images (the reproduction's data) and
  over all 1797 digits (each the fastest of ``repeats`` timings);
- the time of one training step (batch 32, AdamW) of GoRA vs plain LoRA (both peft): the
  fastest of ``repeats`` interleaved medians;
- trainable parameters and the peak memory torch allocates during one training step, and
  during the gradient pass (one fp32 gradient per target weight).
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
from paperkit import figure, peak_memory, print_table, progress, save_figure, time_callable

__all__ = ["bench"]


def _lora(model: nn.Module, r0: int) -> nn.Module:
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=r0, lora_alpha=2 * r0, target_modules=TARGETS, modules_to_save=["head"])
    return get_peft_model(model, config)


def _step_fn(model: nn.Module, batch: tuple[torch.Tensor, torch.Tensor]):
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)

    def step() -> None:
        loss = cross_entropy_loss(model, batch)
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    step()  # optimizer state allocated before timing and memory
    return step


def _width(dim: int, device: str, repeats: int, min_time: float, r0: int = 4) -> dict[str, Any]:
    torch.manual_seed(0)
    base = DigitsEncoder(n_classes=5, dim=dim).to(device)
    tasks = digits_tasks(0)
    X, y = tasks.X_train.to(device), tasks.y_train.to(device)
    X_all = torch.cat([tasks.X_pre, tasks.X_train, tasks.X_test]).to(device)
    y_all = torch.cat([tasks.y_pre % 5, tasks.y_train, tasks.y_test]).to(device)
    grad_batches = [(X[i : i + 32], y[i : i + 32]) for i in range(0, 256, 32)]

    def setup() -> nn.Module:
        model = copy.deepcopy(base)
        plan = plan_gora(model, grad_batches, cross_entropy_loss, TARGETS, r0, 2 * r0, n_steps=8)
        return apply_plan(model, plan, "peft", modules_to_save=["head"])

    setup_s = min(
        time_callable(setup, device=device, warmup=1, min_run_time=min_time).median_s
        for _ in range(repeats)
    )
    gora = setup()
    lora = _lora(copy.deepcopy(base), r0)
    epoch = {}
    for label, (Xe, ye) in {"300": (X, y), "1797": (X_all, y_all)}.items():
        model = copy.deepcopy(gora)
        epoch[label] = min(
            train_epochs(model, Xe, ye, epochs=1, lr=1e-4, seed=k) for k in range(repeats)
        )
    batch = (X[:32], y[:32])
    fns = {"lora": _step_fn(lora, batch), "gora": _step_fn(gora, batch)}
    # Interleaved rounds, the fastest median of each: robust to other processes' load.
    steps = {name: float("inf") for name in fns}
    for _ in range(repeats):
        for name, step in fns.items():
            t = time_callable(step, device=device, min_run_time=min_time).median_s
            steps[name] = min(steps[name], t)
    memory = {name: peak_memory(step, device=device) for name, step in fns.items()}
    trainable = {
        name: sum(p.numel() for p in m.parameters() if p.requires_grad)
        for name, m in (("lora", lora), ("gora", gora))
    }
    grad_mem = peak_memory(
        lambda: collect_gradients(
            base, grad_batches, cross_entropy_loss, TARGETS, n_steps=8, device=device
        ),
        device=device,
    )
    return {
        "dim": dim,
        "setup_ms": 1e3 * setup_s,
        "epoch300_ms": 1e3 * epoch["300"],
        "setup/epoch300": setup_s / epoch["300"],
        "epoch1797_ms": 1e3 * epoch["1797"],
        "setup/epoch1797": setup_s / epoch["1797"],
        "lora_step_ms": 1e3 * steps["lora"],
        "gora_step_ms": 1e3 * steps["gora"],
        "step_ratio": steps["gora"] / steps["lora"],
        "lora_params": trainable["lora"],
        "gora_params": trainable["gora"],
        "lora_step_MiB": memory["lora"] / 2**20,
        "gora_step_MiB": memory["gora"] / 2**20,
        "grad_pass_MiB": grad_mem / 2**20,
    }


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: Path,
    dims: list[int] | None = None,
    repeats: int | None = None,
) -> dict[str, Any]:
    """The overhead and cost tables over widths ``dims`` and ``overhead.png``; ``dims`` and
    ``repeats`` (epochs timed per width) override the defaults for smoke tests."""
    dims = dims or ([64, 128] if quick else [64, 128, 256])
    repeats = repeats or (3 if quick else 5)
    min_time = 0.2 if quick else 0.5
    rows = [_width(d, device, repeats, min_time) for d in progress(dims, "bench")]
    overhead = [
        {k: r[k] for k in ("dim", "setup_ms", "epoch300_ms", "setup/epoch300")}
        | {k: r[k] for k in ("epoch1797_ms", "setup/epoch1797")}
        for r in rows
    ]
    cost = [{k: v for k, v in r.items() if k not in overhead[0] or k == "dim"} for r in rows]
    print_table(overhead, title=f"GoRA set-up (N=8) vs one fine-tuning epoch ({device})")
    print_table(cost, title="Training step and memory: GoRA vs LoRA at r0 = 4 (peft)")
    fig, ax = figure(size=(5.5, 4.0))
    ax.plot(dims, [r["setup/epoch300"] for r in rows], "o-", label="epoch of 300 images")
    ax.plot(dims, [r["setup/epoch1797"] for r in rows], "s-", label="epoch of 1797 images")
    ax.axhline(0.1, color="gray", ls="--", label="10%")
    ax.set_xlabel("model width d")
    ax.set_ylabel("GoRA set-up / one epoch")
    ax.legend()
    save_figure(fig, Path(out) / "overhead.png")
    return {"rows": rows, "device": device}
