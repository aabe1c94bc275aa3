"""The headline comparison at small scale (paper Table 1 and the ablations of Tables 4-5):
``gaussianfusion reproduce [--quick] [--seed N] [--out DIR]``.

2,000 training and 300 test scenes of :func:`gaussianfusion.make_driving_scenes`. Three planners
(GaussianFusion, dense BEV fusion, flatten fusion) trained with the same optimiser (AdamW, lr
1e-3, cosine decay, batch 16) for the same number of steps; the full run adds three ablations of
GaussianFusion (explicit branch only, implicit branch only, a single-stage head). Metrics on the
test scenes: ADE, FDE, collision and off-road rates and mini-PDMS, each with a 95 % bootstrap
interval (1,000 resamples of the scenes), matmul/conv GFLOPs per frame
(``torch.utils.flop_counter``) and CPU latency per frame (batch 1, one thread).

Claims, headline first: GaussianFusion >= both baselines on mini-PDMS and collision rate with
fewer FLOPs than dense BEV fusion; explicit + implicit > either alone; 3 stages > 1.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from gaussianfusion.data import make_driving_scenes
from gaussianfusion.metrics import ade, fde, scene_scores
from gaussianfusion.models import BEVFusionPlanner, FlattenFusionPlanner, GaussianFusionPlanner
from paperkit import Claim, Report, figure, print_table, progress, save_figure

__all__ = ["METHODS", "evaluate", "reproduce", "train_planner"]

BATCH = 16
LR = 1e-3
TRAIN, TEST = 2000, 300
INPUTS = ("lidar", "camera", "ego", "command", "expert", "bev_sem")

#: label -> (constructor, is an ablation)
METHODS: dict[str, tuple[Any, bool]] = {
    "GaussianFusion": (lambda: GaussianFusionPlanner(), False),
    "BEV fusion (dense)": (lambda: BEVFusionPlanner(), False),
    "Flatten fusion (TransFuser-lite)": (lambda: FlattenFusionPlanner(), False),
    "GF explicit only": (lambda: GaussianFusionPlanner(branches="explicit"), True),
    "GF implicit only": (lambda: GaussianFusionPlanner(branches="implicit"), True),
    "GF single-stage head": (lambda: GaussianFusionPlanner(n_stages=1), True),
    "GF, ablation steps": (lambda: GaussianFusionPlanner(), True),
}


def _batch(data: dict, idx: torch.Tensor) -> dict:
    return {k: data[k][idx] for k in INPUTS}


def train_planner(
    model: nn.Module, train: dict, *, steps: int, seed: int, label: str = ""
) -> dict[str, Any]:
    """AdamW (lr 1e-3, weight decay 1e-4, 20-step warm-up then cosine decay), batches of 16
    drawn with replacement; returns the loss curve and the CPU seconds of training."""
    torch.manual_seed(seed)
    if hasattr(model, "set_anchors"):
        model.set_anchors(train["expert"], seed=seed)
    opt = torch.optim.AdamW(model.parameters(), lr=LR, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt,
        lambda i: min(1.0, (i + 1) / 20) * 0.5 * (1 + math.cos(math.pi * min(i, steps) / steps)),
    )
    gen = torch.Generator().manual_seed(seed)
    n = train["expert"].shape[0]
    curve, cpu0 = [], time.process_time()
    model.train()
    for step in progress(range(steps), f"train {label}"):
        batch = _batch(train, torch.randint(0, n, (BATCH,), generator=gen))
        loss, parts = model.loss(batch, model(batch))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 5.0)
        opt.step()
        sched.step()
        if step % 10 == 0 or step == steps - 1:
            curve.append((step, loss.item(), parts["plan"]))
    return {"curve": curve, "train_cpu_s": time.process_time() - cpu0}


def _bootstrap(x: np.ndarray, seed: int, reps: int = 1000) -> tuple[float, float]:
    rng = np.random.default_rng(seed)
    means = x[rng.integers(0, len(x), (reps, len(x)))].mean(1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def _cost(model: nn.Module, test: dict) -> tuple[float, float]:
    """(GFLOPs, CPU ms) of one frame's forward (batch 1, one thread)."""
    from torch.utils.flop_counter import FlopCounterMode

    one = _batch(test, torch.tensor([0]))
    model.train()  # the plain attention path, whose matmuls the counter sees (no dropout here)
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(one)
    model.eval()
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.no_grad():
            model(one)
            times = []
            for _ in range(10):
                t0 = time.process_time()
                model(one)
                times.append(time.process_time() - t0)
    finally:
        torch.set_num_threads(threads)
    return counter.get_total_flops() / 1e9, 1e3 * float(np.median(times))


def evaluate(model: nn.Module, test: dict, seed: int = 0) -> dict[str, Any]:
    """Per-scene metrics on ``test`` and their means with 95 % bootstrap intervals."""
    model.eval()
    with torch.no_grad():
        trajs = torch.cat(
            [
                model(_batch(test, torch.arange(i, min(i + 100, len(test["expert"])))))["traj"]
                for i in range(0, len(test["expert"]), 100)
            ]
        )
    sc = scene_scores(
        trajs,
        test["obstacles"],
        test["drivable"],
        float(test["extent"]),
        test["expert"],
        test["ego"][:, 0],
    )
    per = {
        "ade": ade(trajs, test["expert"]),
        "fde": fde(trajs, test["expert"]),
        "collision": 1.0 - sc["nc"],
        "offroad": 1.0 - sc["dac"],
        "pdms": sc["pdms"],
    }
    out: dict[str, Any] = {}
    for k, v in per.items():
        arr = v.double().numpy()
        out[k] = float(arr.mean())
        out[k + "_ci"] = _bootstrap(arr, seed)
    return out


def _ci(m: dict, key: str, scale: float = 1.0, fmt: str = ".3f") -> str:
    lo, hi = m[key + "_ci"]
    return f"{scale * m[key]:{fmt}} [{scale * lo:{fmt}}, {scale * hi:{fmt}}]"


def _headline(res: dict) -> Claim:
    gf, bev, flat = (res[k] for k in list(METHODS)[:3])
    pdms_ok = gf["pdms"] >= max(bev["pdms"], flat["pdms"])
    coll_ok = gf["collision"] <= min(bev["collision"], flat["collision"])
    flops_ok = gf["gflops"] < bev["gflops"]
    verdict = (
        "held"
        if pdms_ok and coll_ok and flops_ok
        else ("partly" if flops_ok and (pdms_ok or coll_ok) else "not held")
    )
    return Claim(
        "GaussianFusion plans better than dense BEV fusion and flatten fusion (mini-PDMS and "
        "collision rate) at lower cost than dense BEV fusion",
        paper="Table 1 (NAVSIM navtest): GaussianFusion 88.9 PDMS, above TransFuser (84.0) and "
        "the BEV-based planners; Sec. 1: sparse Gaussians cost less than a dense BEV grid",
        measured=(
            f"mini-PDMS GF {gf['pdms']:.3f}, BEV {bev['pdms']:.3f}, flatten {flat['pdms']:.3f}; "
            f"collision GF {100 * gf['collision']:.1f} %, BEV {100 * bev['collision']:.1f} %, "
            f"flatten {100 * flat['collision']:.1f} %; GFLOPs GF {gf['gflops']:.3f}, "
            f"BEV {bev['gflops']:.3f}"
        ),
        verdict=verdict,
        why="held when GF's mean PDMS >= both baselines', its collision rate <= both and its "
        "FLOPs < dense BEV's; partly when the FLOPs and one of the two metrics hold. One seed, "
        "300 test scenes (bootstrap intervals in the table), CPU-sized models and training",
    )


def _ablation_claims(res: dict) -> list[Claim]:
    if "GF explicit only" not in res:
        why = "the ablations run only in the full run (without --quick)"
        return [
            Claim(
                "Explicit + implicit Gaussian features beat either alone",
                paper="Table 4",
                measured="not run",
                verdict="not testable here",
                why=why,
            ),
            Claim(
                "The 3-stage cascade head beats a single stage",
                paper="Table 5",
                measured="not run",
                verdict="not testable here",
                why=why,
            ),
        ]
    # the reference is the full model trained for the ablations' (shorter) schedule
    gf, ex, im, one = (
        res[k]
        for k in (
            "GF, ablation steps",
            "GF explicit only",
            "GF implicit only",
            "GF single-stage head",
        )
    )
    both = gf["pdms"] > max(ex["pdms"], im["pdms"])
    branch = (
        "held" if both else ("partly" if gf["pdms"] > min(ex["pdms"], im["pdms"]) else "not held")
    )
    return [
        Claim(
            "Explicit + implicit Gaussian features beat either alone",
            paper="Table 4 (NAVSIM): removing either branch lowers PDMS",
            measured=f"mini-PDMS both {gf['pdms']:.3f}, explicit only {ex['pdms']:.3f}, "
            f"implicit only {im['pdms']:.3f}",
            verdict=branch,
            why="held when both > each alone, partly when > one of them; every model of the "
            f"ablation (the full one included) trains {gf['steps']} steps, one seed",
        ),
        Claim(
            "The 3-stage cascade head beats a single stage",
            paper="Table 5 (NAVSIM): the cascade raises PDMS over one stage",
            measured=f"mini-PDMS 3 stages {gf['pdms']:.3f}, 1 stage {one['pdms']:.3f}",
            verdict="held" if gf["pdms"] > one["pdms"] else "not held",
            why=f"mean mini-PDMS over the 300 test scenes, {gf['steps']} steps each, one seed",
        ),
    ]


def _plot(res: dict, out: Path, title: str) -> Path:
    fig, axes = figure(1, 2, size=(13, 4.2))
    ax_b, ax_c = axes[0]
    names = list(res)
    means = [res[k]["pdms"] for k in names]
    err = np.array(
        [
            [res[k]["pdms"] - res[k]["pdms_ci"][0], res[k]["pdms_ci"][1] - res[k]["pdms"]]
            for k in names
        ]
    ).T
    ax_b.barh(names, means, xerr=err, color="tab:blue")
    ax_b.set(xlabel="mini-PDMS (95 % bootstrap CI)", title=f"test scenes: {title}")
    ax_b.invert_yaxis()
    for k in names:
        steps, _, plan = zip(*res[k]["curve"], strict=True)
        ax_c.plot(steps, plan, label=k)
    ax_c.set(yscale="log", xlabel="step", ylabel="planning loss", title="training")
    ax_c.legend(fontsize=7)
    return save_figure(fig, out / "gaussianfusion.png")


def reproduce(
    *,
    quick: bool,
    seed: int,
    out: Path,
    steps: int | None = None,
    ablation_steps: int | None = None,
) -> Report:
    """Train and evaluate the planners (module docstring); ``steps`` overrides the planners'
    steps and ``ablation_steps`` the ablations' (smoke tests, longer runs)."""
    # Full: 300 + 150 steps instead of 600 + 400, to fit the CPU time of a shared machine
    # (README, Deviations)
    main_steps = steps or (100 if quick else 300)
    abl_steps = ablation_steps or steps or 150
    out = Path(out)
    cpu0 = time.process_time()
    train = make_driving_scenes(TRAIN, seed=seed)
    test = make_driving_scenes(TEST, seed=seed + 10_000)
    methods = [k for k, (_, abl) in METHODS.items() if not (quick and abl)]
    res: dict[str, dict[str, Any]] = {}
    for label in methods:
        make, abl = METHODS[label]
        torch.manual_seed(seed)
        model = make()
        n_steps = abl_steps if abl else main_steps
        fit = train_planner(model, train, steps=n_steps, seed=seed, label=label)
        metrics = evaluate(model, test, seed=seed)
        gflops, ms = _cost(model, test)
        res[label] = {**metrics, **fit, "gflops": gflops, "ms": ms, "steps": n_steps}
    rows = [
        {
            "method": k,
            "steps": r["steps"],
            "ADE (m)": _ci(r, "ade", fmt=".2f"),
            "FDE (m)": _ci(r, "fde", fmt=".2f"),
            "collision %": _ci(r, "collision", 100, ".1f"),
            "off-road %": _ci(r, "offroad", 100, ".1f"),
            "mini-PDMS": _ci(r, "pdms"),
            "GFLOPs": round(r["gflops"], 4),
            "ms/frame": round(r["ms"], 2),
            "train CPU s": round(r["train_cpu_s"], 1),
        }
        for k, r in res.items()
    ]
    title = f"{TRAIN} train / {TEST} test scenes, {main_steps} steps"
    print_table(rows, title=f"GaussianFusion vs fusion baselines ({title})")
    claims = [
        _headline(res),
        *_ablation_claims(res),
        Claim(
            "88.9 PDMS on NAVSIM navtest with a light backbone; strong closed-loop Bench2Drive",
            paper="abstract, Table 1",
            measured="not run",
            verdict="not testable here",
            why="NAVSIM/nuPlan and CARLA data and simulators are not available offline",
        ),
    ]
    figure_path = _plot(res, out, title)
    return Report(
        claims=claims,
        tables={"planners": rows},
        figures=[figure_path],
        settings={
            "train_scenes": TRAIN,
            "test_scenes": TEST,
            "steps": main_steps,
            "ablation_steps": None if quick else abl_steps,
            "batch": BATCH,
            "lr": LR,
            "optimizer": "AdamW wd 1e-4, 20-step warm-up, cosine decay, grad clip 5",
            "gaussians": "8x8, d_e = d_m = 32, 2 layers, 4 sigma points, L_sem on 32x32",
            "head": "16 k-means anchors, 3 stages, d 32",
            "run_cpu_s": time.process_time() - cpu0,
        },
        data=res,
    )
