"""The headline experiment at small scale.

``shadowopacity reproduce [--quick] [--seed N] [--out DIR]``:

1. ``make_shadow_scenes`` at 32x32: 1,500 training and 300 test scenes (soft and translucent
   shadows, so the true opacity is continuous);
2. train every method on one backbone (U-Net, base 8), batch 16, Adam 2e-3: the full run trains
   the five methods of :data:`shadowopacity.training.METHODS` for 800 steps each, ``--quick``
   BinaryShadowNet, DirectOpacityNet and the full model for 150 steps each;
3. on the test scenes: opacity MAE and RMSE, BER (%) of each method's binary mask against
   m = 1[alpha > 0.05], MAE in the soft (0.05, 0.35], mid (0.35, 0.65] and hard (0.65, 1] bins,
   instance-opacity Kendall tau, PSNR of shadow removal from the predicted alpha.

The generator renders shadows with exactly the image model the method assumes (and SOA re-renders
with it), which favours the opacity formulation by construction.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from paperkit import Claim, Report, figure, print_table, save_figure
from shadowopacity.data import make_shadow_scenes
from shadowopacity.training import METHODS, evaluate, train_method

__all__ = ["RUNS", "claims", "reproduce"]

#: Settings of the quick (``True``) and full (``False``) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "methods": ["BinaryShadowNet", "DirectOpacityNet", "ours"],
        "steps": 150,
        "n_train": 1500,
        "n_test": 300,
        "size": 32,
        "batch_size": 16,
        "base": 8,
    },
    False: {
        "methods": list(METHODS),
        "steps": 800,
        "n_train": 1500,
        "n_test": 300,
        "size": 32,
        "batch_size": 16,
        "base": 8,
    },
}
OURS = "ours"
COLUMNS = ("MAE", "RMSE", "BER", "MAE soft", "MAE mid", "MAE hard", "Kendall", "removal PSNR")


def _best(rows: dict[str, dict[str, float]], key: str, lower: bool) -> tuple[bool, str]:
    """Whether ours is the best (ties count as best) on ``key``, and the runner-up text."""
    ours = rows[OURS][key]
    others = {m: r[key] for m, r in rows.items() if m != OURS}
    best_other = min(others.items(), key=lambda kv: kv[1] if lower else -kv[1])
    won = ours <= best_other[1] if lower else ours >= best_other[1]
    return won, f"ours {ours:.4g} vs best other {best_other[0]} {best_other[1]:.4g}"


def claims(rows: dict[str, dict[str, float]]) -> list[Claim]:
    """The report's claims, computed from the per-method metrics ``rows``."""
    why = "one seed, 300 test scenes; the generator uses the method's own image model"
    out = []
    won, text = _best(rows, "MAE", lower=True)
    out.append(
        Claim(
            "The full model has the lowest opacity MAE of all methods",
            paper="outperforms the baselines on FSD (numbers not recovered)",
            measured=text,
            verdict="held" if won else "not held",
            why=why,
        )
    )
    soft, soft_t = _best(rows, "MAE soft", lower=True)
    mid, mid_t = _best(rows, "MAE mid", lower=True)
    out.append(
        Claim(
            "The full model has the lowest MAE on the soft and mid opacity bins",
            paper="fine-grained opacity of soft shadows and penumbrae (qualitative)",
            measured=f"soft: {soft_t}; mid: {mid_t}",
            verdict="held" if soft and mid else ("partly" if soft or mid else "not held"),
            why=why,
        )
    )
    for key, statement, paper in (
        (
            "Kendall",
            "The full model orders shadow instances by opacity best (Kendall tau)",
            "opacity variation between shadows (qualitative)",
        ),
        (
            "removal PSNR",
            "Removal from the full model's opacity gives the best PSNR",
            "opacity masks improve shadow removal (numbers not recovered)",
        ),
    ):
        won, text = _best(rows, key, lower=False)
        out.append(
            Claim(
                statement,
                paper=paper,
                measured=text,
                verdict="held" if won else "not held",
                why=why,
            )
        )
    ours_ber, bin_ber = rows[OURS]["BER"], rows["BinaryShadowNet"]["BER"]
    out.append(
        Claim(
            "The full model's binary mask has a BER no worse than the binary detector's",
            paper="opacity prediction does not cost detection accuracy",
            measured=f"BER ours {ours_ber:.2f} % vs BinaryShadowNet {bin_ber:.2f} %",
            verdict="held" if ours_ber <= bin_ber else "not held",
            why="BER against m = 1[alpha > 0.05]; the binary detector is trained on alpha > 0.5 "
            "labels, as binary data sets are annotated, so it is judged on faint shadows it "
            "was never taught",
        )
    )
    out.append(
        Claim(
            "Outperforms the baselines on the FSD data set (2,653 real scenes) and improves "
            "removal, editing and 3-D reconstruction",
            paper="abstract (numbers not recovered)",
            measured="not run: FSD cannot be downloaded here",
            verdict="not testable here",
            why="the synthetic scenes above are the small-scale analogue",
        )
    )
    return out


def _plot(rows: dict[str, dict[str, float]], path: Path) -> Path:
    fig, axes = figure(1, 3, size=(15.0, 4.0))
    axes = np.atleast_1d(axes).ravel()
    names = list(rows)
    x = np.arange(len(names))
    bins = ["MAE", "MAE soft", "MAE mid", "MAE hard"]
    width = 0.8 / len(bins)
    for i, b in enumerate(bins):
        axes[0].bar(x + i * width, [rows[m][b] for m in names], width, label=b)
    axes[0].set_xticks(x + 0.4 - width / 2, names, rotation=20, fontsize="small")
    axes[0].set_ylabel("opacity MAE (lower is better)")
    axes[0].legend(fontsize="small")
    axes[1].bar(x, [rows[m]["Kendall"] for m in names], color="tab:green")
    axes[1].set_xticks(x, names, rotation=20, fontsize="small")
    axes[1].set_ylabel("instance-opacity Kendall tau")
    axes[2].bar(x, [rows[m]["removal PSNR"] for m in names], color="tab:purple")
    axes[2].set_xticks(x, names, rotation=20, fontsize="small")
    axes[2].set_ylabel("removal PSNR (dB)")
    lo = min(rows[m]["removal PSNR"] for m in names)
    axes[2].set_ylim(lo - 2.0, None)
    return save_figure(fig, path)


def reproduce(*, quick: bool = False, seed: int = 0, out: str | Path = ".") -> Report:
    """Run the experiment of the module docstring; print the table; return the report."""
    settings = RUNS[bool(quick)]
    cpu0 = time.process_time()
    size = settings["size"]
    train = make_shadow_scenes(settings["n_train"], size=size, seed=2 * seed)
    test = make_shadow_scenes(settings["n_test"], size=size, seed=2 * seed + 1)
    rows: dict[str, dict[str, float]] = {}
    cpu: dict[str, float] = {}
    for method in settings["methods"]:
        t0 = time.process_time()
        model = train_method(
            method,
            train,
            steps=settings["steps"],
            batch_size=settings["batch_size"],
            base=settings["base"],
            seed=seed,
        )
        cpu[method] = time.process_time() - t0
        rows[method] = evaluate(model, test)
    table = [
        {"method": m, **{c: round(r[c], 4) for c in COLUMNS}, "train cpu s": round(cpu[m], 1)}
        for m, r in rows.items()
    ]
    print_table(
        table, title=f"{size}x{size} synthetic shadows, {settings['steps']} steps per method"
    )
    report_claims = claims(rows)
    supported = all(c.verdict == "held" for c in report_claims[:5])
    print(f"claim_supported: {supported}")
    figure_path = _plot(rows, Path(out) / "shadowopacity.png")
    return Report(
        claims=report_claims,
        tables={"methods": table},
        figures=[figure_path],
        settings={**settings, "seed": seed, "lr": 2e-3, "t_m": 0.05},
        data={
            "cpu_s": time.process_time() - cpu0,
            "train_cpu_s": cpu,
            "claim_supported": supported,
        },
    )
