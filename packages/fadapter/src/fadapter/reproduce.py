r"""The headline experiment at small scale: ``fadapter reproduce [--quick] [--seed N]``.

Pretrain :class:`fadapter.OperatorNet` (4 past frames + 2 coordinates, 2x2 patches, width 64,
4 AFNO blocks of 8 channel blocks, 8 modes, MLP ratio 2: 78,404 parameters) on 2-D
Navier–Stokes at :math:`\nu = 10^{-3}` (:func:`fadapter.navier_stokes_2d`, 32x32, 20 frames per
trajectory, one every 0.5 time units), then adapt it to :math:`\nu = 10^{-4}` (more
high-frequency content) from a few trajectories with each method of the paper's comparison
(Sec. 5, Table 1): F-Adapter, the vanilla adapter at a matched trainable count (each in the
Fourier layers only, and "+MLP" with the official models' adapter beside every channel MLP),
LoRA (rank 2 and 8), the head only and full fine-tuning. Reported per method: trainable
parameters (and % of the backbone), one-step and 10-step rollout L2RE, the one-step error in 4
spectral bands, and training time; mean and s.d. over seeds. Plus the two theory probes
(:mod:`fadapter.theory`).
"""

from __future__ import annotations

import copy
import statistics
from itertools import pairwise
from pathlib import Path
from typing import Any

import torch

from fadapter.layers import OperatorNet
from fadapter.ns import navier_stokes_2d
from fadapter.peft import apply_peft, count_trainable
from fadapter.theory import adapter_width_probe, log_linear_fit, lora_depth_probe
from fadapter.train import evaluate, fit, windows
from paperkit import Claim, Report, figure, print_table, progress, save_figure

__all__ = ["METHODS", "PAIRS", "PEFT", "RUNS", "claims", "reproduce"]

IN_FRAMES, ROLLOUT = 4, 10
#: Solver steps (dt = 0.01) between recorded frames: one frame every 0.5 time units, so that a
#: step of the operator is a real prediction and the two viscosities separate (at 0.1 time units
#: per frame the nu=1e-3 model already predicts nu=1e-4 flows to 2% one-step error).
RECORD_EVERY = 50
#: name → (apply_peft method, options, learning rate)
#: The "+MLP" variants add the official models' parallel adapter beside every channel MLP
#: (width 4 = F-Adapter's adapter_dim, as the official code; the same width for both, so the
#: pair stays matched and differs only in the Fourier-layer adapters).
METHODS: dict[str, tuple[str, dict[str, Any], float]] = {
    "F-Adapter (d=4)": ("fadapter", {"adapter_dim": 4}, 3e-3),
    "Adapter (d=15)": ("adapter", {"adapter_dim": 15}, 3e-3),
    "F-Adapter (d=4) +MLP": ("fadapter", {"adapter_dim": 4, "mlp_adapter_dim": 4}, 3e-3),
    "Adapter (d=15) +MLP": ("adapter", {"adapter_dim": 15, "mlp_adapter_dim": 4}, 3e-3),
    "LoRA (r=2)": ("lora", {"rank": 2}, 3e-3),
    "LoRA (r=8)": ("lora", {"rank": 8}, 3e-3),
    "Head only": ("head", {}, 3e-3),
    "Full fine-tuning": ("full", {}, 1e-3),
}
#: (F-Adapter, vanilla adapter) pairs at a matched trainable count
PAIRS = (
    ("F-Adapter (d=4)", "Adapter (d=15)"),
    ("F-Adapter (d=4) +MLP", "Adapter (d=15) +MLP"),
)
PEFT = (*(m for pair in PAIRS for m in pair), "LoRA (r=2)", "LoRA (r=8)", "Head only")
#: Sizes of the quick (True) and full (False) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "pre_traj": 32,
        "pre_epochs": 4,
        "ft_traj": 8,
        "test_traj": 8,
        "ft_epochs": 8,
        "seeds": 1,
        "methods": ["F-Adapter (d=4)", "Adapter (d=15)", "LoRA (r=8)"],
        "depths": (1, 2, 4),
        "probe_steps": 100,
        "widths": (1, 2, 3, 4, 5, 6),
        "width_steps": 300,
    },
    False: {  # sized to about 8 CPU-minutes on one core (the paper's sizes need ~30x that)
        "pre_traj": 48,
        "pre_epochs": 6,
        "ft_traj": 16,
        "test_traj": 16,
        "ft_epochs": 5,
        "seeds": 3,
        "methods": list(METHODS),
        "depths": (1, 2, 4, 8),
        "probe_steps": 150,
        "widths": (1, 2, 3, 4, 5, 6),
        "width_steps": 500,
    },
}
PRE_LR = 2e-3
#: A LoRA rank change from 2 to 8 that improves the L2RE by less than this fraction counts as
#: a plateau; the probe's log-linear fit must reach this R^2.
PLATEAU, MIN_R2 = 0.10, 0.9


def _data(cfg: dict[str, Any], seed: int) -> dict[str, torch.Tensor]:
    pre = navier_stokes_2d(cfg["pre_traj"], nu=1e-3, record_every=RECORD_EVERY, seed=seed)
    ft = navier_stokes_2d(cfg["ft_traj"], nu=1e-4, record_every=RECORD_EVERY, seed=seed + 10_000)
    test = navier_stokes_2d(
        cfg["test_traj"], nu=1e-4, record_every=RECORD_EVERY, seed=seed + 20_000
    )
    scale = pre.std()
    return {"pre": pre / scale, "ft": ft / scale, "test": test / scale}


def _row(name: str, runs: list[dict[str, Any]], backbone: int) -> dict[str, Any]:
    def ms(key: str, i: int | None = None) -> tuple[float, float]:
        vals = [r[key] if i is None else r[key][i] for r in runs]
        return statistics.fmean(vals), (statistics.stdev(vals) if len(vals) > 1 else 0.0)

    row: dict[str, Any] = {"method": name, "trainable": runs[0]["trainable"]}
    row["% of backbone"] = 100.0 * runs[0]["trainable"] / backbone
    for key, label in (("l2re_1step", "L2RE 1-step"), ("l2re_rollout", "L2RE 10-step")):
        m, s = ms(key)
        row[label], row[label + " sd"] = m, s
    for b, label in enumerate(("E_low", "E_mid1", "E_mid2", "E_high")):
        row[label] = ms("band_errors", b)[0]
    row["train s"] = ms("seconds")[0]
    return row


def _plot(rows: list[dict[str, Any]], depth: list[dict], width: list[dict], path: Path) -> Path:
    fig, axes = figure(1, 3, size=(15, 4))
    axes = axes[0]
    names = [r["method"] for r in rows]
    xs = range(len(rows))
    axes[0].bar([x - 0.2 for x in xs], [r["L2RE 1-step"] for r in rows], 0.4, label="1-step")
    axes[0].bar([x + 0.2 for x in xs], [r["L2RE 10-step"] for r in rows], 0.4, label="10-step")
    axes[0].set_xticks(list(xs), names, rotation=30, ha="right", fontsize=7)
    axes[0].set(ylabel="L2RE (nu=1e-4 test)", title="Adaptation to nu = 1e-4")
    axes[0].legend(fontsize=7)
    for r in rows:
        axes[1].semilogy(
            range(4),
            [r[k] for k in ("E_low", "E_mid1", "E_mid2", "E_high")],
            "o-",
            label=r["method"],
        )
    axes[1].set_xticks(range(4), ["low", "mid1", "mid2", "high"])
    axes[1].set(ylabel="relative spectral error (1-step)", title="Error per frequency band")
    axes[1].legend(fontsize=6)
    ax2 = axes[2]
    ax2.semilogy(
        [r["width"] for r in width],
        [r["rel_error"] for r in width],
        "o-",
        label="adapter vs width (x axis)",
    )
    ax2.semilogy(
        [r["width"] for r in width],
        [r["best_linear"] for r in width],
        "k:",
        label="best rank-d map",
    )
    ax2.semilogy(
        [r["depth"] for r in depth],
        [r["rel_error"] for r in depth],
        "s--",
        label="LoRA vs depth (x axis)",
    )
    ax2.set(
        xlabel="adapter width d / stack depth L", ylabel="relative fit error", title="Theory probes"
    )
    ax2.legend(fontsize=7)
    return save_figure(fig, path)


def _verdict(parts: list[bool]) -> str:
    return "held" if all(parts) else ("partly" if any(parts) else "not held")


def claims(rows: list[dict[str, Any]], depth: list[dict], width: list[dict]) -> list[Claim]:
    """The claims, headline first, each verdict computed from the run's table and probes."""
    by = {r["method"]: r for r in rows}
    fa = by["F-Adapter (d=4)"]
    pairs = [(by[f], by[a]) for f, a in PAIRS if f in by and a in by]
    peft = [by[n] for n in PEFT if n in by]
    ours = [r for r in peft if r["method"].startswith("F-Adapter")]
    others = [r for r in peft if not r["method"].startswith("F-Adapter")]
    keys = ("L2RE 1-step", "L2RE 10-step")

    def best(group: list[dict[str, Any]], k: str) -> dict[str, Any]:
        return min(group, key=lambda r: r[k])

    out = [
        Claim(
            "F-Adapter has the lowest error among the PEFT methods",
            paper="F-Adapter is best among PEFT methods on 3-D Navier–Stokes with DPOT-H (Table 1)",
            measured="; ".join(
                f"{k}: best F-Adapter {best(ours, k)['method']} {best(ours, k)[k]:.5f}, best "
                f"other PEFT {best(others, k)['method']} {best(others, k)[k]:.5f}"
                for k in keys
            ),
            verdict=_verdict([best(ours, k)[k] < best(others, k)[k] for k in keys]),
            why=f"{len(peft)} PEFT methods ({len(ours)} F-Adapter variants), mean over seeds; "
            "held when an F-Adapter variant is lowest in both the 1-step and the 10-step "
            "L2RE, partly in one",
        ),
        Claim(
            "F-Adapter beats the vanilla adapter at an equal trainable count",
            paper="F-Adapter < Adapter in L2RE at matched budgets (Table 1)",
            measured="; ".join(
                f"{f['method']} vs {a['method']} ({f['trainable']} vs {a['trainable']} "
                "parameters): " + ", ".join(f"{k} {f[k]:.5f} vs {a[k]:.5f}" for k in keys)
                for f, a in pairs
            ),
            verdict=_verdict([f[k] < a[k] for f, a in pairs for k in keys]),
            why=f"{len(pairs)} matched pair(s), mean over seeds; held when F-Adapter is lower "
            "in both metrics for every pair, partly in some",
        ),
    ]
    bands = ("E_low", "E_mid1")
    out.append(
        Claim(
            "F-Adapter's gain over the vanilla adapter is in the low, energy-dominant bands",
            paper="wider adapters on low-frequency modes carry the improvement (Sec. 4)",
            measured="; ".join(
                f"{f['method']} vs {a['method']}: "
                + ", ".join(f"{b} {f[b]:.5f} vs {a[b]:.5f}" for b in (*bands, "E_mid2", "E_high"))
                for f, a in pairs
            ),
            verdict=_verdict([f[b] < a[b] for f, a in pairs for b in bands]),
            why="one-step relative spectral error per Chebyshev band (low first); held when "
            "F-Adapter is lower in the low and the first mid band for every pair",
        )
    )
    loras = [by[n] for n in ("LoRA (r=2)", "LoRA (r=8)") if n in by]
    adapters = min(r["L2RE 1-step"] for pair in pairs for r in pair)
    if len(loras) == 2:
        gain = 1 - loras[1]["L2RE 1-step"] / loras[0]["L2RE 1-step"]
        plateau = gain < PLATEAU
        measured = (
            f"1-step L2RE r=2 {loras[0]['L2RE 1-step']:.4f}, r=8 "
            f"{loras[1]['L2RE 1-step']:.4f} ({100 * gain:.1f}% better); best adapter "
            f"{adapters:.4f}"
        )
        parts = [plateau, min(r["L2RE 1-step"] for r in loras) > adapters]
        verdict = _verdict(parts)
    else:
        measured = (
            f"1-step L2RE LoRA r=8 {loras[0]['L2RE 1-step']:.4f}, best adapter {adapters:.4f}"
        )
        verdict = "partly" if loras[0]["L2RE 1-step"] > adapters else "not held"
        measured += " (one rank only: the plateau is not tested in this run)"
    out.append(
        Claim(
            "LoRA barely improves with rank and stays worse than adapters",
            paper="LoRA L2RE 0.63-0.64 for every rank vs full fine-tuning 0.54 (Table 1)",
            measured=measured,
            verdict=verdict,
            why=f"plateau: rank 2 -> 8 improves the 1-step L2RE by less than {PLATEAU:.0%}",
        )
    )
    rises = all(b["rel_error"] > a["rel_error"] for a, b in pairwise(depth))
    out.append(
        Claim(
            "LoRA's approximation-error floor in a Fourier-layer stack grows with depth",
            paper="depth-amplified lower bound of stacked LoRA in Fourier layers (Sec. 3.2)",
            measured=", ".join(f"L={r['depth']}: {r['rel_error']:.3f}" for r in depth),
            verdict="held" if rises else "not held",
            why="rank-2 LoRA per layer fitted to a full-rank perturbation of every layer "
            "(16 channels); held when the held-out relative error rises at every depth step",
        )
    )
    fitw = log_linear_fit([r["width"] for r in width], [r["rel_error"] for r in width])
    out.append(
        Claim(
            "An adapter's error on a spectrally concentrated target decays exponentially with "
            "its width",
            paper="exponentially decaying adapter error in the bottleneck width (Sec. 3)",
            measured=f"error ratio per unit width {fitw['ratio']:.3f}, R^2 {fitw['r2']:.3f}; "
            + ", ".join(f"d={r['width']}: {r['rel_error']:.3g}" for r in width),
            verdict="held" if fitw["r2"] > MIN_R2 and fitw["ratio"] < 1 else "not held",
            why=f"target singular values 0.6^j; log-linear fit, held when R^2 > {MIN_R2}",
        )
    )
    out.append(
        Claim(
            "F-Adapter needs under 2% trainable parameters",
            paper="< 2% of DPOT-H's ~1B parameters",
            measured=f"{fa['trainable']} = {fa['% of backbone']:.1f}% of a 78k backbone",
            verdict="not testable here",
            why="per-block, per-band, per-position adapters cost ~3·2C·sum(d_b) per layer while "
            "this backbone's spectral weights are tiny; only the comparison at an equal "
            "trainable count is tested",
        )
    )
    return out


def reproduce(*, quick: bool = False, seed: int = 0, out: Path | str = Path(".")) -> Report:
    """Run the experiment (sizes in :data:`RUNS`) and return its :class:`paperkit.Report`."""
    cfg = RUNS[bool(quick)]
    out = Path(out)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: one thread is faster, and so are shared machines
    try:
        torch.manual_seed(seed)
        data = _data(cfg, seed)
        x_pre, y_pre = windows(data["pre"], IN_FRAMES)
        x_ft, y_ft = windows(data["ft"], IN_FRAMES)
        backbone = OperatorNet(in_frames=IN_FRAMES)
        n_backbone = count_trainable(backbone)
        pre = fit(
            backbone,
            x_pre,
            y_pre,
            epochs=cfg["pre_epochs"],
            lr=PRE_LR,
            seed=seed,
            desc="pretraining (nu=1e-3)",
        )
        zero_shot = evaluate(backbone, data["test"], IN_FRAMES, ROLLOUT)
        runs: dict[str, list[dict[str, Any]]] = {m: [] for m in cfg["methods"]}
        jobs = [(m, s) for s in range(cfg["seeds"]) for m in cfg["methods"]]
        for name, s in progress(jobs, "fine-tuning (nu=1e-4)"):
            method, kw, lr = METHODS[name]
            torch.manual_seed(seed + 100 * s + 1)
            model = apply_peft(copy.deepcopy(backbone), method, **kw)
            trained = fit(
                model, x_ft, y_ft, epochs=cfg["ft_epochs"], lr=lr, seed=seed + s, desc=name
            )
            result = evaluate(model, data["test"], IN_FRAMES, ROLLOUT)
            runs[name].append({**result, **trained, "trainable": count_trainable(model)})
        rows = [_row(n, r, n_backbone) for n, r in runs.items()]
        depth = lora_depth_probe(cfg["depths"], steps=cfg["probe_steps"], seed=seed)
        width = adapter_width_probe(cfg["widths"], steps=cfg["width_steps"], seed=seed)
    finally:
        torch.set_num_threads(threads)
    zs = {
        "method": "Pretrained, no fine-tuning",
        "trainable": 0,
        "% of backbone": 0.0,
        "L2RE 1-step": zero_shot["l2re_1step"],
        "L2RE 10-step": zero_shot["l2re_rollout"],
    }
    print_table([zs, *rows], title="Adapting a nu=1e-3 operator to nu=1e-4 (test set)")
    print_table(depth, title="Theory probe (a): rank-2 LoRA fit error vs depth")
    print_table(width, title="Theory probe (b): adapter fit error vs width")
    fig = _plot(rows, depth, width, out / "fadapter.png")
    return Report(
        claims=claims(rows, depth, width),
        tables={"adaptation": [zs, *rows], "lora_depth": depth, "adapter_width": width},
        figures=[fig],
        settings={
            **{k: list(v) if isinstance(v, tuple) else v for k, v in cfg.items()},
            "res": 32,
            "frames": 20,
            "dt": 1e-2,
            "record_every": RECORD_EVERY,
            "in_frames": IN_FRAMES,
            "rollout": ROLLOUT,
            "pretrain_lr": PRE_LR,
            "method_options": {
                m: {"method": METHODS[m][0], **METHODS[m][1], "lr": METHODS[m][2]}
                for m in cfg["methods"]
            },
            "backbone_params": n_backbone,
            "pretrain": pre,
            "torch_threads": 1,
            "batch_size": 32,
            "weight_decay": 1e-4,
        },
        data={"runs": runs, "zero_shot": zero_shot},
    )
