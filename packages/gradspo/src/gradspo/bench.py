"""Benchmark: the cost of data collection and of one update for GradSPO, SPO and Diffusion-DPO.

``gradspo bench [--quick]`` (CPU; the paper has no kernel) records :class:`paperkit.Measurement`
rows, timed in alternating rounds so that ratios come from one run:

1. ``collect``: one prompt batch (B = 16) — stepwise K = 4 collection with the EMA sampler
   (GradSPO), the same with the current model (SPO), K whole chains (Diffusion-DPO); prompts/s
   and the share of collection time spent in the reward;
2. ``update``: one optimiser step on 32 stored tuples — GradSPO evaluates θ, ref and EMA (three
   CFG forwards), SPO θ and ref (two), Diffusion-DPO θ and ref on winner and loser (no CFG);
3. ``vs K``: collection time against K (2, 4, 8, 16; the K candidates share one forward), with
   its log-log slope.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import numpy as np
import torch

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

RUNS: dict[bool, dict[str, Any]] = {
    True: {"Ks": [2, 4, 8, 16], "min_time": 0.5, "min_repeats": 5, "batch": 16},
    False: {"Ks": [2, 4, 8, 16, 32], "min_time": 2.0, "min_repeats": 10, "batch": 16},
}


def _trainers(batch: int, K: int = 4):
    from gradspo.scheduler import DDIMScheduler
    from gradspo.toy import MLPDenoiser, directional
    from gradspo.trainer import GradSPOTrainer

    torch.manual_seed(0)
    base = MLPDenoiser(hidden=128)
    s = DDIMScheduler(set_alpha_to_one=False)
    return {
        m: GradSPOTrainer(
            copy.deepcopy(base),
            base,
            directional(),
            s,
            K=K,
            method=m,
            cfg_scale=3.0,
            batch_size=batch,
            train_batch_size=32,
            seed=0,
        )
        for m in ("gradspo", "spo", "dpo")
    }


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Collection and update timings of the three methods; see the module docstring."""
    from gradspo.collect import collect_stepwise_pairs
    from gradspo.sampling import sample

    torch.set_num_threads(1)
    cfg = RUNS[quick]
    timer = {"min_time": cfg["min_time"], "min_repeats": cfg["min_repeats"]}
    B = cfg["batch"]
    tr = _trainers(B)
    cond = torch.arange(4).repeat(B // 4)
    reward_s: dict[str, list[float]] = {}

    def collect(m: str, K: int = 4):
        t = tr[m]
        sampler = t.ema if m == "gradspo" else t.model

        def run():
            p = collect_stepwise_pairs(
                sampler,
                t.scheduler,
                cond,
                t.reward_fn,
                K=K,
                cfg_scale=t.cfg_scale,
                generator=t.generator,
            )
            reward_s.setdefault(f"{m}-{K}", []).append(p.reward_seconds)
            return p

        return run

    def dpo_collect():
        t = tr["dpo"]
        x = sample(t.model, t.scheduler, cond.repeat(4), 20, t.cfg_scale, generator=t.generator)
        return t.reward_fn(x, 0, cond.repeat(4))

    rows = measure_interleaved(
        {"gradspo": collect("gradspo"), "spo": collect("spo"), "dpo": dpo_collect},
        B,
        case="collect",
        params={"K": 4, "steps": 20},
        **timer,
    )
    pairs = collect("gradspo")()
    idx = torch.arange(32)
    x_w, x_l, c = pairs.x_win[:32], pairs.x_lose[:32], pairs.cond[:32]
    hist: dict[str, list] = {"loss": [], "grad_norm": []}
    upd = measure_interleaved(
        {
            "gradspo": lambda: tr["gradspo"]._update(tr["gradspo"].stepwise_loss(pairs, idx), hist),
            "spo": lambda: tr["spo"]._update(tr["spo"].stepwise_loss(pairs, idx), hist),
            "dpo": lambda: tr["dpo"]._update(tr["dpo"].dpo_loss(x_w, x_l, c), hist),
        },
        32,
        case="update",
        params={"tuples": 32},
        **timer,
    )
    vs_k = []
    for K in progress(cfg["Ks"], "collection vs K"):
        vs_k += measure_interleaved(
            {"gradspo": collect("gradspo", K)}, K, case="vs K", memory=False, **timer
        )
    by = {(r.case, r.impl): r for r in rows + upd}

    def cpu(case: str, impl: str) -> float:
        return by[case, impl].cpu_seconds or by[case, impl].seconds

    def ratio(case: str, a: str, b: str) -> tuple[float, float]:
        """CPU-time ratio (what a loaded, shared machine does not distort) and the wall-time
        median of same-round ratios."""
        return cpu(case, a) / cpu(case, b), ratio_spread(by[case, a], by[case, b])[0]

    coll_ratio, dpo_ratio = ratio("collect", "gradspo", "spo"), ratio("collect", "dpo", "gradspo")
    upd_ratio, upd_dpo = ratio("update", "gradspo", "spo"), ratio("update", "dpo", "spo")
    share = float(np.mean(reward_s["gradspo-4"])) / by["collect", "gradspo"].seconds
    slope = scaling(vs_k, case="vs K")["gradspo"]["slope"]
    names = {"GradSPO": "gradspo", "SPO": "spo", "Diffusion-DPO": "dpo"}
    table = [
        {
            "what": f"collect, prompts per CPU second (B={B}, K=4, 20 steps)",
            **{k: B / cpu("collect", v) for k, v in names.items()},
        },
        {
            "what": "update (32 tuples), updates per CPU second",
            **{k: 1 / cpu("update", v) for k, v in names.items()},
        },
    ]
    print_table(table, title="GradSPO bench (CPU, one thread; rates from CPU seconds)")
    claims = [
        Claim(
            "One GradSPO update costs about 3/2 of an SPO update (θ, ref and EMA forwards vs θ "
            "and ref; one backward each).",
            "per stored tuple 3 model evaluations (θ, ref, EMA), ×2 with CFG",
            f"update CPU time GradSPO/SPO {upd_ratio[0]:.2f} (wall, same-round median "
            f"{upd_ratio[1]:.2f}); Diffusion-DPO/SPO {upd_dpo[0]:.2f}",
            "held" if 1.25 < upd_ratio[0] < 1.75 else "not held",
            "CPU-time ratio of one interleaved run; held within 1.5 ± 0.25. The "
            "toy MLP forward is so cheap that per-call overhead (argument checks, scheduler "
            "arithmetic, the optimiser step) weighs as much as the forwards",
        ),
        Claim(
            "GradSPO's collection costs the same as SPO's (only the sampler's weights differ).",
            "the EMA model replaces the current model as the sampler",
            f"collection CPU time GradSPO/SPO {coll_ratio[0]:.2f} (wall {coll_ratio[1]:.2f}); "
            f"Diffusion-DPO (K whole chains)/GradSPO {dpo_ratio[0]:.2f}",
            "held" if 0.8 < coll_ratio[0] < 1.25 else "not held",
            "held within ±25 %",
        ),
        Claim(
            "The K candidates are scored in one batched forward: collection time grows "
            "sublinearly in K.",
            "Performance: batch the K candidates",
            f"log-log slope of collection time vs K = {slope:.2f}; reward evaluation takes "
            f"{100 * share:.1f} % of collection time",
            "held" if slope < 1.0 else "not held",
            "the toy reward is a dot product; a learned preference model would dominate",
        ),
    ]
    fig = plot_scaling(
        vs_k,
        out / "collect_vs_K.png",
        case="vs K",
        xlabel="K",
        title="stepwise collection time vs K",
    )
    return Report(
        claims=claims,
        tables={"throughput": table},
        figures=[fig],
        settings={**cfg, "device": device, "hidden": 128, "steps": 20, "cfg_scale": 3.0},
        measurements=rows + upd + vs_k,
    )
