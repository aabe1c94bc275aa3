"""Reproduction at small scale (card, "Reproduction"): ``hbp reproduce [--quick]``.

(a) Simulated epoch of 20k ``synth_lengths`` samples on 32 GPUs under ``CostModel.preset("8b")``:
    padding, naive 128K packing (SP 8), sorted bucketing (SP 8) and HBP: hours, speed-up, mean
    ABR, CR, padding ratio; the HBP speed-up's sensitivity to c_attn/c_lin (x0.5, x2).
(b) Calibration on real CPU compute: forward + backward of a transformer block on random packs
    with varlen attention; ``CostModel.calibrate``, its R², and (a) again with the fitted model.
(c) Loss weighting: a tiny causal LM (d = 32, one layer) trained with Ave-Token and with the
    per-pack mean under two packings of the same samples per step (2 emulated DP ranks).
(d) Measured epochs of real data-parallel training on 2 gloo processes (``hbp.measured``):
    naive, sorted and HBP plans of the same samples, wall time, measured ABR and loss.
"""

from __future__ import annotations

import copy
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from hbp.batching import balance_ranks, round_robin
from hbp.collate import pack_collate
from hbp.cost import PRESET_8B_ASSUMPTIONS, CostModel
from hbp.data import synth_lengths
from hbp.dist import step_gradient
from hbp.measured import measured_epochs
from hbp.model import Block, TinyCausalLM
from hbp.packing import greedy_fill, naive_pack
from hbp.simulate import simulate
from paperkit import figure, print_table, progress, save_figure

__all__ = ["calibration", "loss_weighting", "reproduce", "simulation"]

STRATEGY_ORDER = ("padding", "naive", "sorted", "hbp")
MEASURED_PACK_LEN = 1024


def simulation(
    lengths: np.ndarray, cost: CostModel, n_gpus: int = 32, seed: int = 0
) -> list[dict[str, Any]]:
    """One row per strategy: hours, speed-up over naive, mean ABR, CR, padding, groups."""
    reports = {s: simulate(s, lengths, n_gpus, cost, seed=seed) for s in STRATEGY_ORDER}
    base = reports["naive"].time_s
    rows = []
    for rep in reports.values():
        row = rep.summary()
        row["speed-up"] = base / rep.time_s
        rows.append(row)
    return rows


def _sensitivity(lengths: np.ndarray, cost: CostModel, seed: int) -> list[dict[str, Any]]:
    rows = []
    for factor in (0.5, 1.0, 2.0):
        scaled = replace(cost, c_attn=cost.c_attn * factor)
        naive = simulate("naive", lengths, 32, scaled, seed=seed).time_s
        hbp = simulate("hbp", lengths, 32, scaled, seed=seed)
        rows.append(
            {
                "c_attn/c_lin x": factor,
                "naive h": naive / 3600,
                "hbp h": hbp.hours,
                "speed-up": naive / hbp.time_s,
                "hbp groups": hbp.summary()["groups"],
            }
        )
    return rows


def _time_pack(block: Block, lengths: list[int], repeats: int) -> float:
    x = torch.randn(1, int(sum(lengths)), 64)
    cu = torch.tensor(np.concatenate([[0], np.cumsum(lengths)]), dtype=torch.int32)
    times = []
    for _ in range(repeats + 1):
        start = time.perf_counter()
        block(x, cu).sum().backward()
        times.append(time.perf_counter() - start)
    return min(times[1:])  # the minimum: other work on shared cores only adds time


def calibration(n_packs: int, pack_len: int, seed: int = 0) -> dict[str, Any]:
    """Time a d = 64, 4-head block on ``n_packs`` random packs; fit the cost model's coefficients.

    A pack holds 1-16 samples of log-uniform lengths in [16, ``pack_len``], cut to fit.
    """
    torch.manual_seed(seed)
    block = Block(64, 4)
    rng = np.random.default_rng(seed)
    measurements = []
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # one thread: timings do not depend on what else shares the cores
    for _ in progress(range(n_packs), "calibration"):
        count = int(np.exp(rng.uniform(0, np.log(17))))
        mix = np.exp(rng.uniform(np.log(16), np.log(pack_len), size=count)).astype(int)
        kept = mix[np.cumsum(mix) <= pack_len].tolist() or [int(mix[0])]
        measurements.append((kept, 1, False, _time_pack(block, kept, 3)))
    torch.set_num_threads(threads)
    fitted = CostModel.preset("8b").calibrate(measurements)
    return {
        "fitted": fitted,
        "r2": fitted.score(measurements),
        "r2_tokens_only": _tokens_only_r2(measurements),
        "measurements": measurements,
    }


def _tokens_only_r2(measurements: list) -> float:
    t = np.asarray([sum(m[0]) for m in measurements], dtype=np.float64)
    y = np.asarray([m[3] for m in measurements])
    A = np.stack([t, np.ones_like(t)], 1)
    coef, *_ = np.linalg.lstsq(A, y, rcond=None)
    return float(1 - ((y - A @ coef) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def _loss_step_samples(rng: np.random.Generator, n: int, vocab: int) -> list[torch.Tensor]:
    """Samples whose continuation depends on their length: after a random first token, short
    samples (< 16) repeat token 1 and long ones token 2 with probability 0.8, else noise."""
    out = []
    for m in rng.integers(4, 49, size=n).tolist():
        cls = 1 if m < 16 else 2
        body = np.where(rng.random(m) < 0.8, cls, rng.integers(3, vocab, size=m))
        body[0] = rng.integers(3, vocab)
        out.append(torch.from_numpy(body.astype(np.int64)))
    return out


def loss_weighting(steps: int, seed: int = 0, n: int = 16, vocab: int = 16) -> dict[str, Any]:
    """Train with each (loss, packing); the global token-mean training loss per step."""
    torch.manual_seed(seed)
    init = TinyCausalLM(vocab=vocab, dim=32, depth=1, heads=2, max_len=64).double()
    curves: dict[str, list[float]] = {}
    cost = CostModel.preset("8b")
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # tiny tensors: threads only add contention
    runs = [(loss, packing) for loss in ("ave_token", "mean") for packing in ("naive", "greedy")]
    for loss, packing in progress(runs, "loss weighting"):
        model = copy.deepcopy(init)
        opt = torch.optim.AdamW(model.parameters(), lr=3e-3)
        rng = np.random.default_rng(seed + 1)
        curve = []
        for _ in range(steps):
            samples = _loss_step_samples(rng, n, vocab)
            lengths = np.asarray([s.numel() for s in samples])
            if packing == "naive":
                packs = naive_pack(lengths, 64)
                split = [[packs[i] for i in r] for r in round_robin(len(packs), 2)]
            else:
                packs = greedy_fill(lengths, 96)
                split = [[packs[i] for i in r] for r in balance_ranks(packs, lengths, 2, cost)]
            with torch.no_grad():
                batch = pack_collate(samples)
                curve.append(float(model.token_loss(batch).sum() / batch.loss_mask.sum()))
            grad = step_gradient(model, samples, split, loss)
            offset = 0
            for p in model.parameters():
                p.grad = grad[offset : offset + p.numel()].view_as(p).clone()
                offset += p.numel()
            opt.step()
        curves[f"{loss}/{packing}"] = curve
    torch.set_num_threads(threads)
    return {
        "steps": steps,
        "curves": curves,
        "ave_token_max_gap": float(
            np.max(np.abs(np.subtract(curves["ave_token/naive"], curves["ave_token/greedy"])))
        ),
        "mean_max_gap": float(
            np.max(np.abs(np.subtract(curves["mean/naive"], curves["mean/greedy"])))
        ),
    }


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: Path,
    n_samples: int | None = None,
    calib_packs: int | None = None,
    calib_pack_len: int | None = None,
    loss_steps: int | None = None,
    measured_samples: int | None = None,
) -> dict[str, Any]:
    """Run (a), (b), (c), (d); print their tables, save ``hbp.png``, return the results.

    The keyword overrides shrink the run (for smoke tests).
    """
    n_samples = n_samples or 20000
    calib_packs = calib_packs or (40 if quick else 100)
    calib_pack_len = calib_pack_len or (4096 if quick else 8192)
    loss_steps = loss_steps or (100 if quick else 200)
    measured_samples = measured_samples or (1000 if quick else 4000)
    seeds = [seed] if quick else [seed, seed + 1, seed + 2]

    preset = CostModel.preset("8b")
    print_table(
        [{"coefficient": k, "value": v} for k, v in vars(preset).items()],
        title="CostModel.preset('8b'), from PRESET_8B_ASSUMPTIONS",
    )
    sim_rows = []
    for s in seeds:
        lengths = synth_lengths(n_samples, seed=s)
        for row in simulation(lengths, preset, seed=s):
            sim_rows.append({"seed": s, **row})
    print_table(sim_rows, title=f"(a) simulated epoch, {n_samples} samples, 32 GPUs, preset 8b")
    lengths = synth_lengths(n_samples, seed=seed)
    sens = _sensitivity(lengths, preset, seed)
    print_table(sens, title="(a) HBP speed-up over naive vs c_attn (x0.5, x1, x2)")

    calib = calibration(calib_packs, calib_pack_len, seed)
    fitted: CostModel = calib["fitted"]
    # time units of the CPU fit: the SP exchange and the fixed cost keep their ratio to c_lin
    scaled = replace(
        fitted,
        c_comm=preset.c_comm * fitted.c_lin / preset.c_lin,
        c_fix=preset.c_fix * fitted.c_lin / preset.c_lin,
    )
    calib_rows = [
        {
            "c_lin (s/token)": fitted.c_lin,
            "c_attn (s/token^2)": fitted.c_attn,
            "c_fix (s)": fitted.c_fix,
            "c_attn/c_lin": fitted.c_attn / fitted.c_lin if fitted.c_lin > 0 else float("nan"),
            "preset c_attn/c_lin": preset.c_attn / preset.c_lin,
            "R2": calib["r2"],
            "R2 tokens only": calib["r2_tokens_only"],
        }
    ]
    print_table(
        calib_rows, title=f"(b) calibration on {calib_packs} CPU packs of <= {calib_pack_len}"
    )
    fitted_rows = simulation(lengths, scaled, seed=seed)
    print_table(fitted_rows, title="(b) simulation (a) with the CPU-fitted cost model")

    loss = loss_weighting(loss_steps, seed)
    loss_rows = [
        {
            "loss": name.split("/")[0],
            "packing": name.split("/")[1],
            "first": curve[0],
            "last 10 mean": float(np.mean(curve[-10:])),
        }
        for name, curve in loss["curves"].items()
    ]
    loss_rows.append(
        {
            "loss": "max |gap| ave_token",
            "packing": "naive vs greedy",
            "first": loss["ave_token_max_gap"],
        }
    )
    loss_rows.append(
        {"loss": "max |gap| mean", "packing": "naive vs greedy", "first": loss["mean_max_gap"]}
    )
    print_table(loss_rows, title=f"(c) global token-mean training loss, {loss_steps} steps")

    measured = measured_epochs(2, measured_samples, MEASURED_PACK_LEN, cost=scaled)
    measured_rows = [{"plan": k, **v} for k, v in measured["plans"].items()]
    print_table(
        measured_rows,
        title=f"(d) measured epoch on 2 gloo processes: {measured_samples} samples "
        f"({measured['tokens']} tokens), packs of {MEASURED_PACK_LEN}, TinyCausalLM d=64",
    )

    fig, axes = figure(1, 4, size=(20, 4))
    ax_a, ax_b, ax_c, ax_d = axes[0, 0], axes[0, 1], axes[0, 2], axes[0, 3]
    first = [r for r in sim_rows if r["seed"] == seed]
    ax_a.bar([r["strategy"] for r in first], [r["hours"] for r in first])
    ax_a.set(ylabel="simulated hours per epoch", title="(a) 20k samples, 32 GPUs, preset 8b")
    meas = calib["measurements"]
    y = np.asarray([m[3] for m in meas]) * 1e3
    pred = np.asarray([fitted.pack_time(m[0]) for m in meas]) * 1e3
    ax_b.plot(y, pred, "o", ms=3)
    ax_b.plot([y.min(), y.max()], [y.min(), y.max()], "k--", lw=1)
    ax_b.set(
        xlabel="measured ms", ylabel="cost model ms", title=f"(b) calibration, R2={calib['r2']:.3f}"
    )
    for name, curve in loss["curves"].items():
        ax_c.plot(curve, label=name, lw=1)
    ax_c.set(xlabel="step", ylabel="token-mean loss", title="(c) loss weighting")
    ax_c.legend()
    ax_d.bar([r["plan"] for r in measured_rows], [r["epoch s"] for r in measured_rows])
    ax_d.set(ylabel="measured epoch seconds", title="(d) 2 gloo processes, real training")
    save_figure(fig, out / "hbp.png")
    return {
        "preset_8b": vars(preset),
        "preset_assumptions": PRESET_8B_ASSUMPTIONS,
        "simulation": sim_rows,
        "sensitivity": sens,
        "calibration": {**calib_rows[0], "fitted": vars(fitted)},
        "simulation_fitted": fitted_rows,
        "loss_weighting": loss,
        "measured": measured,
    }
