"""The headline experiments at small scale: ``zeros reproduce [--quick] [--seed N] [--out DIR]``.

(a) The contrast task: one single-head attention layer and a linear readout must output
    :math:`v_a - v_b`. ZeroS can place a positive weight on a and a negative one on b; softmax and
    positive-feature linear attention only mix convexly, so they plateau.
(b) Multi-query associative recall (T=32, 4 key-value pairs, vocabulary 64) with a 2-layer TinyLM
    (d=64, 4 heads, batch 32), every model with the same steps, warm-up and learning rate. The
    full run trains longer and adds ReLU linear attention and the ablations (first-order term
    only, higher-order term only, zero-order gate on every layer).

The report's claims, headline first: (b) ZeroS matches softmax (held when its MQAR accuracy is
within 0.02 of softmax's or above; partly when it only beats every linear attention), and (a)
signed mixing (held when ZeroS's contrast MSE is at most a tenth of every convex attention's).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import Claim, Report, figure, print_table, progress, save_figure
from zeros.data import IGNORE, contrast, mqar
from zeros.models import TinyLM, make_attention

__all__ = ["ContrastModel", "reproduce", "train_contrast", "train_mqar"]


class ContrastModel(nn.Module):
    """Input projection, one single-head attention layer, linear readout at the last position."""

    def __init__(self, attn: str, in_dim: int, out_dim: int, dim: int = 32, **attn_kwargs: Any):
        super().__init__()
        self.embed = nn.Linear(in_dim, dim)
        self.attn = make_attention(attn, dim, 1, 64, **attn_kwargs)
        self.readout = nn.Linear(dim, out_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.readout(self.attn(self.embed(x))[:, -1])


@dataclass
class Setting:
    label: str
    attn: str
    kwargs: dict[str, Any] = field(default_factory=dict)


def train_contrast(
    setting: Setting,
    *,
    steps: int,
    seed: int,
    seq_len: int = 32,
    value_dim: int = 8,
    dim: int = 32,
    batch: int = 64,
    lr: float = 3e-3,
) -> dict[str, Any]:
    """Train on fresh batches of the contrast task (Adam); test MSE on 2048 held-out
    sequences."""
    torch.manual_seed(seed)
    model = ContrastModel(setting.attn, value_dim + 2, value_dim, dim=dim, **setting.kwargs)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x_test, y_test = contrast(2048, seq_len, value_dim, seed=10_000 + seed)
    curve, start = [], time.perf_counter()
    for step in progress(range(steps), f"contrast · {setting.label}"):
        x, y = contrast(batch, seq_len, value_dim, seed=seed * 1_000_003 + step)
        loss = F.mse_loss(model(x), y)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        if step % 25 == 0 or step == steps - 1:
            curve.append((step, loss.item()))
    seconds = time.perf_counter() - start
    with torch.no_grad():
        mse = F.mse_loss(model(x_test), y_test).item()
    return {
        "task": "contrast",
        "model": setting.label,
        "test_mse": mse,
        "seconds": seconds,
        "curve": curve,
    }


def train_mqar(
    setting: Setting,
    *,
    steps: int,
    seed: int,
    seq_len: int,
    num_kv: int,
    vocab: int,
    batch: int = 32,
    lr: float = 3e-3,
    warmup: int = 300,
    dim: int = 64,
    depth: int = 2,
    heads: int = 4,
) -> dict[str, Any]:
    """Train a TinyLM on fresh MQAR batches (AdamW, linear warm-up over ``warmup`` steps, then a
    constant rate); recall accuracy on 1024 held-out sequences."""
    torch.manual_seed(seed)
    model = TinyLM(
        vocab, dim, depth, heads, attn=setting.attn, max_seq_len=seq_len, **setting.kwargs
    )
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.1)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda i: min(1.0, (i + 1) / max(1, warmup)))
    tokens_test, targets_test = mqar(1024, seq_len, num_kv, vocab, seed=10_000 + seed)
    curve, start = [], time.perf_counter()
    for step in progress(range(steps), f"MQAR · {setting.label}"):
        tokens, targets = mqar(batch, seq_len, num_kv, vocab, seed=seed * 1_000_003 + step)
        loss = F.cross_entropy(model(tokens).flatten(0, 1), targets.flatten(), ignore_index=IGNORE)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        if step % 25 == 0 or step == steps - 1:
            curve.append((step, loss.item()))
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        pred = model(tokens_test).argmax(-1)
    scored = targets_test != IGNORE
    accuracy = (pred[scored] == targets_test[scored]).float().mean().item()
    return {
        "task": "mqar",
        "model": setting.label,
        "accuracy": accuracy,
        "seconds": seconds,
        "curve": curve,
    }


#: The settings of each task, shared by the quick and the full run.
CONTRAST_TASK = {"seq_len": 32, "value_dim": 8, "dim": 32, "batch": 64, "lr": 3e-3}
MQAR_TASK = {
    "seq_len": 32,
    "num_kv": 4,
    "vocab": 64,
    "dim": 64,
    "depth": 2,
    "heads": 4,
    "batch": 32,
    "lr": 3e-3,
    "warmup": 300,
}

CONTRAST = [
    Setting("ZeroS", "zeros"),
    Setting("ZeroS, use_norm=False", "zeros", {"use_norm": False}),
    Setting("softmax", "softmax"),
    Setting("linear elu+1", "linear"),
    Setting("linear relu", "linear_relu"),
]
MQAR_QUICK = [
    Setting("ZeroS", "zeros"),
    Setting("softmax", "softmax"),
    Setting("linear elu+1", "linear"),
]
MQAR_FULL = [
    *MQAR_QUICK,
    Setting("linear relu", "linear_relu"),
    Setting("ZeroS, first-order only", "zeros", {"terms": "first"}),
    Setting("ZeroS, higher-order only", "zeros", {"terms": "higher"}),
    Setting("ZeroS, zero order on every layer", "zeros", {"zero_order": "all"}),
]


def _plot(contrast_rows: list[dict], mqar_rows: list[dict], out: Path, title: str) -> Path:
    fig, axes = figure(1, 3, size=(15, 4.2))
    ax_c, ax_l, ax_a = axes[0]
    ax_c.barh(
        [r["model"] for r in contrast_rows],
        [r["test_mse"] for r in contrast_rows],
        color="tab:blue",
    )
    ax_c.set(xscale="log", xlabel="test MSE (log)", title="contrast: output v_a - v_b (1 head)")
    ax_c.invert_yaxis()
    for r in mqar_rows:
        steps, losses = zip(*r["curve"], strict=True)
        ax_l.plot(steps, losses, label=r["model"])
    ax_l.set(yscale="log", xlabel="step", ylabel="training loss", title=f"MQAR: {title}")
    ax_l.legend(fontsize=7)
    ax_a.barh(
        [r["model"] for r in mqar_rows], [r["accuracy"] for r in mqar_rows], color="tab:green"
    )
    ax_a.set(xlim=(0, 1), xlabel="recall accuracy", title="MQAR: held-out accuracy")
    ax_a.invert_yaxis()
    return save_figure(fig, out / "zeros.png")


def _signed_mix_claim(rows: list[dict[str, Any]]) -> Claim:
    """(a): held when ZeroS's MSE is at most a tenth of every convex attention's."""
    zeros = next(r["test_mse"] for r in rows if r["model"] == "ZeroS")
    convex = {r["model"]: r["test_mse"] for r in rows if not r["model"].startswith("ZeroS")}
    best = min(convex, key=convex.get)
    ratio = convex[best] / zeros
    if ratio >= 10:
        verdict = "held"
    elif ratio > 1:
        verdict = "partly"
    else:
        verdict = "not held"
    return Claim(
        "One ZeroS layer can mix values with signed weights (output v_a - v_b), which convex "
        "attentions (softmax, positive-feature linear) cannot",
        paper="abstract and motivation: zero-sum weights can be negative; convex combinations "
        "cannot subtract (qualitative, no number)",
        measured=f"test MSE ZeroS {zeros:.3g} vs best convex ({best}) {convex[best]:.3g}: "
        f"{ratio:.0f}x lower",
        verdict=verdict,
        why="held when ZeroS's MSE is at most a tenth of every convex attention's (partly when "
        "merely lower); one seed, one layer, T=32; predicting 0 gives MSE 2",
    )


def _mqar_claim(rows: list[dict[str, Any]], steps: int) -> Claim:
    """(b): held when ZeroS is within 0.02 of softmax's accuracy or above it; partly when it
    only beats every linear attention."""
    acc = {r["model"]: r["accuracy"] for r in rows}
    zeros, softmax = acc["ZeroS"], acc["softmax"]
    linear = {m: a for m, a in acc.items() if m.startswith("linear")}
    if zeros >= softmax - 0.02:
        verdict = "held"
    elif all(zeros > a for a in linear.values()):
        verdict = "partly"
    else:
        verdict = "not held"
    shown = ", ".join(f"{m} {a:.3f}" for m, a in linear.items())
    return Claim(
        "ZeroS matches or exceeds standard softmax attention across sequence modelling "
        "benchmarks, at linear cost",
        paper="abstract: 'matches or exceeds standard softmax attention across various sequence "
        "modeling benchmarks' (the result tables could not be retrieved here)",
        measured=f"MQAR recall accuracy ZeroS {zeros:.3f}, softmax {softmax:.3f}, {shown}",
        verdict=verdict,
        why="MQAR only (T=32, 4 pairs, 2-layer d=64), one seed, "
        f"{steps} steps; held when ZeroS is within 0.02 of softmax or above, partly when it "
        "beats every linear attention but not softmax",
    )


def reproduce(*, quick: bool, seed: int, out: Path, steps: int | None = None) -> Report:
    """Run (a) the contrast task and (b) MQAR; print the tables, write ``zeros.png``.

    ``steps`` overrides the number of training steps of both tasks (for smoke tests).
    """
    contrast_steps = steps or (300 if quick else 600)
    # Full: more steps and the ablations at the same size. At T=64 with 8 pairs, softmax did not
    # learn the task within 2000 steps here (see the README), so the full run keeps the size where
    # the comparison is informative.
    mqar_steps = steps or (800 if quick else 1500)
    mqar_models = MQAR_QUICK if quick else MQAR_FULL
    contrast_runs = [
        train_contrast(s, steps=contrast_steps, seed=seed, **CONTRAST_TASK) for s in CONTRAST
    ]
    mqar_runs = [train_mqar(s, steps=mqar_steps, seed=seed, **MQAR_TASK) for s in mqar_models]
    contrast_table = [
        {"model": r["model"], "test MSE": r["test_mse"], "train s": r["seconds"]}
        for r in contrast_runs
    ]
    mqar_table = [
        {"model": r["model"], "accuracy": r["accuracy"], "train s": r["seconds"]} for r in mqar_runs
    ]
    print_table(
        contrast_table, title=f"(a) contrast, T=32, value_dim=8, 1 head, {contrast_steps} steps"
    )
    task = MQAR_TASK
    desc = (
        f"T={task['seq_len']}, {task['num_kv']} kv pairs, vocab {task['vocab']}, {mqar_steps} steps"
    )
    print_table(mqar_table, title=f"(b) MQAR, 2-layer TinyLM d=64, 4 heads, batch 32, {desc}")
    figure_path = _plot(contrast_runs, mqar_runs, out, desc)
    return Report(
        claims=[_mqar_claim(mqar_runs, mqar_steps), _signed_mix_claim(contrast_runs)],
        tables={"contrast": contrast_table, "mqar": mqar_table},
        figures=[figure_path],
        settings={
            "contrast": {
                **CONTRAST_TASK,
                "steps": contrast_steps,
                "heads": 1,
                "optimizer": "Adam",
                "test_sequences": 2048,
                "models": [s.label for s in CONTRAST],
            },
            "mqar": {
                **MQAR_TASK,
                "steps": mqar_steps,
                "optimizer": "AdamW, weight decay 0.1, gradient clip 1.0",
                "test_sequences": 1024,
                "models": [s.label for s in mqar_models],
            },
        },
        data={
            "contrast_curves": {r["model"]: r["curve"] for r in contrast_runs},
            "mqar_curves": {r["model"]: r["curve"] for r in mqar_runs},
        },
    )
