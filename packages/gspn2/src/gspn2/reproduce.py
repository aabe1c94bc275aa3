"""The headline experiments at small scale: ``gspn2 reproduce [--quick] [--seed N] [--out DIR]``.

(a) Claim (i), compact propagation keeps accuracy: the same small classifier (sklearn digits
    upsampled to 16×16, patch 2 -> 8×8 map, dims 32-64, one block per stage) with the GSPN-2 mixer
    (channel-shared weights, proxy 8), the GSPN-1 mixer (per-channel weights, no proxy) and softmax
    attention, trained with the same optimiser and epochs over several seeds; test accuracy
    (mean ± std), parameters (total, and those of the propagation-weight heads) and time.
(b) Claim (ii) on the CPU, linear cost: the four-direction scan (torch backend, B=1, C=8) over
    N = H·W against torch's softmax attention (SDPA) and the dense N×N affinity matmul it equals;
    the log-log slope of time against N.
The GPU claim (fused kernel vs one launch per line) is measured by ``gspn2 bench`` on a GPU.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from gspn2.data import load_digits_images
from gspn2.models import MIXERS, GSPNClassifier
from gspn2.ops import DIRECTIONS, gspn_4dir, normalize_weights
from paperkit import figure, loglog_slope, print_table, progress, save_figure, time_callable

__all__ = ["reproduce", "scan_scaling", "train_classifier"]


def train_classifier(
    mixer: str,
    data: tuple[torch.Tensor, ...],
    *,
    epochs: int,
    seed: int,
    batch_size: int = 32,
    lr: float = 2e-3,
    dims: Sequence[int] = (32, 64),
    depths: Sequence[int] = (1, 1),
) -> dict[str, Any]:
    """Train a :class:`GSPNClassifier` with AdamW (weight decay 0.05, cosine schedule); return
    its test accuracy, parameter counts and training time."""
    x_train, y_train, x_test, y_test = data
    torch.manual_seed(seed)
    model = GSPNClassifier(x_train.shape[-1], x_train.shape[1], 10, dims, depths, mixer=mixer)
    steps = epochs * ((len(x_train) + batch_size - 1) // batch_size)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.05)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    gen = torch.Generator().manual_seed(seed)
    start = time.perf_counter()
    for _ in progress(range(epochs), f"{mixer} · seed {seed}"):
        model.train()
        perm = torch.randperm(len(x_train), generator=gen)
        for i in range(0, len(x_train), batch_size):
            idx = perm[i : i + batch_size]
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
    seconds = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        accuracy = (model(x_test).argmax(-1) == y_test).float().mean().item()
    propagation = sum(
        m.propagation_parameters() for m in model.modules() if hasattr(m, "propagation_parameters")
    )
    return {
        "mixer": mixer,
        "seed": seed,
        "accuracy": accuracy,
        "params": sum(p.numel() for p in model.parameters()),
        "propagation_params": propagation,
        "train_s": seconds,
    }


def _scan_inputs(side: int, channels: int, gen: torch.Generator) -> dict[str, Any]:
    shape = (1, channels, side, side)
    x = torch.randn(shape, generator=gen)
    weights = {
        d: normalize_weights(
            *torch.randn(3, 1, 1, side, side, generator=gen), axis=-2 if d in ("lr", "rl") else -1
        )
        for d in DIRECTIONS
    }
    lam, u, d = (torch.rand(1, 4, *shape[1:], generator=gen) for _ in range(3))
    return {"x": x, "weights": weights, "lam": lam, "u": u, "d": d, "mix": torch.full((4,), 0.25)}


def scan_scaling(
    sides: Sequence[int], *, attention_max: int, dense_max: int, channels: int = 8
) -> list[dict[str, Any]]:
    """Forward time (ms) of the 4-direction scan, SDPA attention over the N tokens and the dense
    affinity matmul (N×N @ N×C), at N = side² for each side."""
    gen = torch.Generator().manual_seed(0)
    rows = []
    for side in progress(list(sides), "scan scaling"):
        n = side * side
        inputs = _scan_inputs(side, channels, gen)
        with torch.no_grad():
            t = time_callable(lambda inputs=inputs: gspn_4dir(**inputs, backend="torch"))
            row: dict[str, Any] = {"side": side, "N": n, "gspn_ms": 1e3 * t.median_s}
            if side <= attention_max:
                q = torch.randn(1, 1, n, channels, generator=gen)
                t = time_callable(lambda q=q: F.scaled_dot_product_attention(q, q, q))
                row["attention_ms"] = 1e3 * t.median_s
            if side <= dense_max:
                dense = torch.rand(n, n, generator=gen)
                vec = torch.randn(n, channels, generator=gen)
                t = time_callable(lambda dense=dense, vec=vec: dense @ vec)
                row["dense_ms"] = 1e3 * t.median_s
        rows.append(row)
    return rows


def _plot(summary: list[dict], scaling: list[dict], slopes: dict, out: Path) -> Path:
    fig, axes = figure(1, 2, size=(10, 4))
    ax_a, ax_s = axes[0]
    names = [r["mixer"] for r in summary]
    ax_a.bar(
        names,
        [100 * r["accuracy_mean"] for r in summary],
        yerr=[100 * r["accuracy_std"] for r in summary],
        color=["tab:green", "tab:blue", "tab:gray"][: len(names)],
        capsize=4,
    )
    low = min(100 * r["accuracy_mean"] for r in summary)
    ax_a.set(ylim=(max(0, low - 10), 100), ylabel="test accuracy (%)", title="(a) digits 16×16")
    for key, label in (("gspn_ms", "GSPN 4-dir scan"), ("attention_ms", "softmax attention")):
        pts = [(r["N"], r[key]) for r in scaling if key in r]
        ax_s.loglog(*zip(*pts, strict=True), "o-", label=f"{label} (slope {slopes[key]:.2f})")
    pts = [(r["N"], r["dense_ms"]) for r in scaling if "dense_ms" in r]
    ax_s.loglog(
        *zip(*pts, strict=True), "s--", label=f"dense affinity (slope {slopes['dense_ms']:.2f})"
    )
    ax_s.set(xlabel="N = H·W", ylabel="forward ms (CPU)", title="(b) cost against N, C = 8")
    ax_s.legend(fontsize=8)
    return save_figure(fig, out / "gspn2.png")


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    epochs: int | None = None,
    seeds: int | None = None,
    sides: Sequence[int] | None = None,
    subset: int | None = None,
) -> dict[str, Any]:
    """Run (a) and (b); print the tables and write ``gspn2.png``. ``epochs``, ``seeds``,
    ``sides`` and ``subset`` (train and test on the first n images of each split) override the
    defaults (for smoke tests)."""
    epochs = epochs or (5 if quick else 10)
    n_seeds = seeds or (2 if quick else 3)
    x_train, y_train, x_test, y_test = load_digits_images()
    data = (x_train[:subset], y_train[:subset], x_test[:subset], y_test[:subset])
    runs = [
        train_classifier(m, data, epochs=epochs, seed=seed + k)
        for k in range(n_seeds)
        for m in MIXERS
    ]
    summary = []
    for m in MIXERS:
        mine = [r for r in runs if r["mixer"] == m]
        acc = np.array([r["accuracy"] for r in mine])
        summary.append(
            {
                "mixer": m,
                "accuracy_mean": float(acc.mean()),
                "accuracy_std": float(acc.std(ddof=1)) if len(acc) > 1 else 0.0,
                "params": mine[0]["params"],
                "propagation_params": mine[0]["propagation_params"],
                "train_s": float(np.mean([r["train_s"] for r in mine])),
            }
        )
    print_table(
        summary, title=f"(a) digits 16×16, {epochs} epochs, {n_seeds} seeds (mean, std over seeds)"
    )
    sides = list(sides or ([32, 64, 128] if quick else [32, 64, 128, 256]))
    attention_max, dense_max = (64, 64) if quick else (128, 64)
    scaling = scan_scaling(sides, attention_max=attention_max, dense_max=dense_max)
    print_table(scaling, title="(b) forward time on the CPU (ms), B=1, C=8")
    slopes = {}
    for key in ("gspn_ms", "attention_ms", "dense_ms"):
        pts = [(r["N"], r[key]) for r in scaling if key in r]
        slopes[key] = loglog_slope(*zip(*pts, strict=True)) if len(pts) > 1 else float("nan")
    print_table(
        [{"path": k.removesuffix("_ms"), "slope": v} for k, v in slopes.items()],
        title="log-log slope of time against N",
    )
    _plot(summary, scaling, slopes, out)
    return {
        "classification": {"epochs": epochs, "seeds": n_seeds, "runs": runs, "summary": summary},
        "scaling": {"rows": scaling, "slopes": slopes},
    }
