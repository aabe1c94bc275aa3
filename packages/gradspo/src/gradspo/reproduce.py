"""The toy reproduction: GradSPO vs SPO vs Diffusion-DPO (and ablations) on 8 Gaussians.

A class-conditional DDPM (MLPDenoiser, 1000-step scaled-linear schedule) is trained once per
run on 8 Gaussians (4 classes of two modes); each method then fine-tunes a LoRA (rank 4) of it
toward the directional reward r_c(x) = <x, u_c> − 0.5 ||x|| at the same number of prompt
batches, sampled chains and optimiser updates, for several seeds. Evaluation: mean reward of
2000 samples (DDIM 20 steps, CFG 3), squared MMD to the base model's samples (drift), mode
coverage, the across-seed std of the reward and the variance of the per-update gradient norm.
"""

from __future__ import annotations

import copy
import math
import time
from pathlib import Path

import numpy as np
import torch

from paperkit import Claim, Report, figure, print_table, progress, save_figure

RUNS = {
    True: {"base_steps": 3000, "seeds": 2, "batches": 15, "methods": ("gradspo", "spo", "dpo")},
    False: {
        "base_steps": 4000,
        "seeds": 5,
        "batches": 30,
        "methods": (
            "gradspo",
            "spo",
            "dpo",
            "gradspo K=2",
            "gradspo no EMA",
            "spo lr×2",
            "spo lr×4",
        ),
    },
}
COMMON = {
    "hidden": 128,
    "base_batch": 256,
    "base_lr": 2e-3,
    "lr": 1e-4,
    "batch_size": 16,
    "train_batch_size": 32,
    "K": 4,
    "steps": 20,
    "start_step": 4,
    "cfg_scale": 3.0,
    "beta": 10.0,
    "clip": 0.1,
    "gamma": 0.5,
    "ema_decay": 0.9,
    "lora_rank": 4,
    "dpo_beta": 5000.0,
    "eval_samples": 2000,
}
VARIANTS = {
    "gradspo": {"method": "gradspo"},
    "spo": {"method": "spo"},
    "dpo": {"method": "dpo"},
    "gradspo K=2": {"method": "gradspo", "K": 2},
    "gradspo no EMA": {"method": "gradspo", "use_ema": False},
    "spo lr×2": {"method": "spo", "lr_mult": 2.0},
    "spo lr×4": {"method": "spo", "lr_mult": 4.0},
}


def _mean_se(values: list[float]) -> tuple[float, float]:
    a = np.asarray(values, dtype=float)
    se = float(a.std(ddof=1) / math.sqrt(len(a))) if len(a) > 1 else float("nan")
    return float(a.mean()), se


def _compare(a: list[float], b: list[float]) -> tuple[float, float]:
    """Difference of means and its standard error (independent seeds)."""
    (ma, sa), (mb, sb) = _mean_se(a), _mean_se(b)
    return ma - mb, math.sqrt(sa**2 + sb**2)


def _fine_tune(base, scheduler, reward, variant: str, seed: int, cfg: dict, eval_set):
    from gradspo.metrics import mean_reward, mmd_rbf, mode_coverage
    from gradspo.sampling import sample
    from gradspo.trainer import GradSPOTrainer

    opts = {"K": cfg["K"], "use_ema": True, **VARIANTS[variant]}
    model = copy.deepcopy(base)
    trainer = GradSPOTrainer(
        model,
        base,
        reward,
        scheduler,
        lr=cfg["lr"] * opts.get("lr_mult", 1.0),
        ema_decay=cfg["ema_decay"],
        lora_rank=cfg["lora_rank"],
        K=opts["K"],
        method=opts["method"],
        beta=cfg["beta"],
        clip=cfg["clip"],
        gamma=cfg["gamma"],
        dpo_beta=cfg["dpo_beta"],
        steps=cfg["steps"],
        start_step=cfg["start_step"],
        cfg_scale=cfg["cfg_scale"],
        use_ema=opts["use_ema"],
        batch_size=cfg["batch_size"],
        train_batch_size=cfg["train_batch_size"],
        seed=seed,
    )
    conds = torch.arange(4).repeat(cfg["batches"] * cfg["batch_size"] // 4)
    tic = time.process_time()
    hist = trainer.train(conds, epochs=1)
    cpu = time.process_time() - tic
    cond, base_x, centers, eval_seed = eval_set
    x = sample(
        trainer.model,
        scheduler,
        cond,
        cfg["steps"],
        cfg["cfg_scale"],
        generator=torch.Generator().manual_seed(eval_seed),
    )
    gn = np.asarray(hist["grad_norm"])
    return {
        "reward": mean_reward(reward, x, cond),
        "mmd": mmd_rbf(x, base_x),
        "coverage": mode_coverage(x, centers),
        "grad_norm_var": float(gn.var()),
        "loss_var": float(np.var(hist["loss"])),
        "updates": len(hist["loss"]),
        "cpu_s": cpu,
        "curve": hist["reward"],
        "samples": x[:400].numpy(),
    }


def _verdict(diffs: list[tuple[float, float]]) -> tuple[str, int]:
    shown = sum(d > 2 * se for d, se in diffs)
    return ("held" if shown == len(diffs) else "partly" if shown else "not held"), shown


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Run the comparison; returns the claims, the table, the figure and every setting."""
    from gradspo.losses import implied_step_weights
    from gradspo.metrics import mean_reward, mode_coverage
    from gradspo.sampling import sample
    from gradspo.scheduler import DDIMScheduler
    from gradspo.toy import EightGaussians, MLPDenoiser, directional, train_ddpm

    torch.set_num_threads(1)
    cfg = {**COMMON, **RUNS[quick]}
    scheduler = DDIMScheduler(1000, "scaled_linear", set_alpha_to_one=False)
    data = EightGaussians(radius=2.0, std=0.1)
    reward = directional(n_cond=4, weight=0.5)
    torch.manual_seed(seed)
    base = MLPDenoiser(dim=2, hidden=cfg["hidden"], n_cond=4)
    tic = time.process_time()
    train_ddpm(
        base,
        data,
        scheduler,
        steps=cfg["base_steps"],
        batch_size=cfg["base_batch"],
        lr=cfg["base_lr"],
        generator=torch.Generator().manual_seed(seed),
    )
    base_cpu = time.process_time() - tic
    cond = torch.arange(4).repeat(cfg["eval_samples"] // 4)
    eval_seed = 10_000 + seed
    base_x = sample(
        base,
        scheduler,
        cond,
        cfg["steps"],
        cfg["cfg_scale"],
        generator=torch.Generator().manual_seed(eval_seed + 1),
    )
    eval_set = (cond, base_x, data.centers, eval_seed)
    base_reward = mean_reward(reward, base_x, cond)
    base_cov = mode_coverage(base_x, data.centers)

    jobs = [(m, s) for m in cfg["methods"] for s in range(cfg["seeds"])]
    runs: dict[str, list[dict]] = {m: [] for m in cfg["methods"]}
    for method, s in progress(jobs, "fine-tuning"):
        runs[method].append(
            _fine_tune(base, scheduler, reward, method, 1000 * seed + s, cfg, eval_set)
        )

    def col(m: str, key: str) -> list[float]:
        return [r[key] for r in runs[m]]

    rows = [
        {
            "method": "base (no fine-tuning)",
            "reward": f"{base_reward:.3f}",
            "MMD² to base": "0",
            "mode coverage": f"{base_cov:.3f}",
        }
    ]
    for m in cfg["methods"]:
        (rw, rse), (mm, mse), (cv, cse) = (
            _mean_se(col(m, k)) for k in ("reward", "mmd", "coverage")
        )
        rows.append(
            {
                "method": m,
                "reward": f"{rw:.3f} ± {rse:.3f}",
                "MMD² to base": f"{mm:.4f} ± {mse:.4f}",
                "mode coverage": f"{cv:.3f} ± {cse:.3f}",
                "seed std of reward": f"{np.std(col(m, 'reward'), ddof=1):.3f}",
                "grad-norm var": f"{np.mean(col(m, 'grad_norm_var')):.4g}",
                "updates": int(np.mean(col(m, "updates"))),
                "CPU s / run": f"{np.mean(col(m, 'cpu_s')):.1f}",
            }
        )
    print_table(rows, title=f"GradSPO on 8 Gaussians ({cfg['seeds']} seeds, mean ± s.e.)")

    w = implied_step_weights(scheduler, cfg["gamma"], 2, cfg["beta"])
    stoch = np.isfinite(w["spo"]) & (np.arange(len(w["spo"])) >= cfg["start_step"])
    idx = np.flatnonzero(stoch)
    late = idx[len(idx) // 2 :]

    def late_share(v: np.ndarray) -> float:
        return float(v[late].sum() / v[idx].sum())

    weight_rows = [
        {
            "step": int(i),
            "t": int(w["timesteps"][i]),
            "gradspo": float(w["gradspo"][i]),
            "spo": float(w["spo"][i]),
            "sigma": float(w["sigma"][i]),
        }
        for i in idx
    ]

    claims = _claims(runs, col, cfg, late_share(w["gradspo"]), late_share(w["spo"]), base_reward)
    fig_path = _figure(runs, cfg, base_x, w, idx, Path(out))
    return Report(
        claims=claims,
        tables={"methods": rows, "implied_step_weights": weight_rows},
        figures=[fig_path],
        settings={
            **cfg,
            "methods": list(cfg["methods"]),
            "seed": seed,
            "base_cpu_s": round(base_cpu, 1),
            "schedule": "scaled_linear 0.00085-0.012",
            "reward": "r_c(x) = <x, u_c> - 0.5 ||x||, u_c at angle (2c+1)pi/4",
        },
        data={
            m: {
                k: [r[k] for r in v]
                for k in ("reward", "mmd", "coverage", "grad_norm_var", "curve")
            }
            for m, v in runs.items()
        },
    )


def _claims(runs, col, cfg, g_late: float, s_late: float, base_reward: float) -> list[Claim]:
    seeds = cfg["seeds"]
    d_spo, d_dpo = (
        _compare(col("gradspo", "reward"), col("spo", "reward")),
        _compare(col("gradspo", "reward"), col("dpo", "reward")),
    )
    verdict, _ = _verdict([d_spo, d_dpo])
    claims = [
        Claim(
            "GradSPO reaches a higher mean reward than SPO and Diffusion-DPO at equal budget.",
            "GradSPO above SPO and Diffusion-DPO on human-preference metrics (PickScore, HPSv2, "
            "ImageReward, "
            "aesthetics (SD 1.5, SDXL)",
            f"reward difference vs SPO {d_spo[0]:+.3f} ± {d_spo[1]:.3f}, vs Diffusion-DPO "
            f"{d_dpo[0]:+.3f} ± {d_dpo[1]:.3f} (s.e., {seeds} seeds)",
            verdict,
            "a difference counts when it exceeds 2 s.e.; toy 2-D task with an exact, hand-made "
            "step-aware reward (one of the noise sources the paper targets is absent)",
        )
    ]
    m_spo = _compare(col("gradspo", "mmd"), col("spo", "mmd"))
    m_dpo = _compare(col("gradspo", "mmd"), col("dpo", "mmd"))
    ok = [d <= 2 * se for d, se in (m_spo, m_dpo)]
    claims.append(
        Claim(
            "GradSPO's gain comes at similar or lower drift from the base model (MMD).",
            "not quantified in the paper (qualitative: stable training, no collapse)",
            f"MMD² difference vs SPO {m_spo[0]:+.4f} ± {m_spo[1]:.4f}, vs DPO {m_dpo[0]:+.4f} ± "
            f"{m_dpo[1]:.4f}",
            "held" if all(ok) else "partly" if any(ok) else "not held",
            "'similar' = not more than 2 s.e. above; a higher reward on this unbounded reward "
            "needs a larger move, so drift and reward are not independent",
        )
    )
    std = {m: float(np.std(col(m, "reward"), ddof=1)) for m in ("gradspo", "spo", "dpo")}
    gvar = {m: float(np.mean(col(m, "grad_norm_var"))) for m in ("gradspo", "spo", "dpo")}
    lower = [std["gradspo"] < std[m] for m in ("spo", "dpo")]
    gain = {m: float(np.mean(col(m, "reward"))) - base_reward for m in std}
    rel = {m: std[m] / gain[m] if gain[m] > 0 else float("inf") for m in std}
    claims.append(
        Claim(
            "GradSPO trains more stably: lower across-seed variance than SPO and Diffusion-DPO.",
            "abstract: the variance-informed noise reduction enhances training stability",
            f"across-seed std of the reward: GradSPO {std['gradspo']:.3f}, SPO {std['spo']:.3f}, "
            f"DPO {std['dpo']:.3f}; grad-norm variance {gvar['gradspo']:.3g} / {gvar['spo']:.3g} / "
            f"{gvar['dpo']:.3g}",
            "held" if all(lower) else "partly" if any(lower) else "not held",
            f"std over {seeds} seeds is itself noisy; relative to the mean reward gain over the "
            f"base model the std is GradSPO {rel['gradspo']:.2f}, SPO {rel['spo']:.2f}, DPO "
            f"{rel['dpo']:.2f}; grad-norm variances of different losses are on different scales "
            "(shown, not judged)",
        )
    )
    if "gradspo K=2" in runs:
        k2 = _compare(col("gradspo", "reward"), col("gradspo K=2", "reward"))
        ne = _compare(col("gradspo", "reward"), col("gradspo no EMA", "reward"))
        gv_ne = float(np.mean(col("gradspo no EMA", "grad_norm_var")))
        v, _ = _verdict([k2, ne])
        claims.append(
            Claim(
                "The noise-reduction mechanisms help: K = 2 candidates and no EMA anchor degrade "
                "GradSPO.",
                "ablations: fewer candidates and no EMA reduce the preference scores",
                f"GradSPO minus K=2: {k2[0]:+.3f} ± {k2[1]:.3f}; minus no-EMA: {ne[0]:+.3f} ± "
                f"{ne[1]:.3f}; grad-norm var no-EMA {gv_ne:.3g} vs {gvar['gradspo']:.3g}",
                v,
                "reward differences over 2 s.e. count",
            )
        )
    else:
        claims.append(
            Claim(
                "The noise-reduction mechanisms help: K = 2 candidates and no EMA anchor degrade "
                "GradSPO.",
                "ablations: fewer candidates and no EMA reduce the preference scores",
                "not run",
                "not testable here",
                "the quick run skips the ablations; the full run (`gradspo reproduce`) has them",
            )
        )
    claims.append(_matched_drift_claim(runs, col))
    claims.append(
        Claim(
            "SPO's likelihood loss implies a biased per-step weighting with too little weight on "
            "the late (low-noise) generative steps, unlike GradSPO's sqrt(1 - abar_t).",
            "abstract: SPO uses biased temporal weighting, giving too little weight to later "
            "generative steps",
            f"share of the total logit weight on the later half of the trained steps: GradSPO "
            f"{g_late:.3f}, SPO {s_late:.3f}",
            "held" if s_late < g_late else "not held",
            "coefficients of <eps_theta - eps_ref, g_t> in each unclipped logit with SPO's code "
            "normalisation (mean over D); the paper's exact normalisation was not available",
        )
    )
    return claims


def _matched_drift_claim(runs, col) -> Claim:
    """GradSPO against the SPO run (of the lr sweep) whose drift is closest to GradSPO's."""
    statement = (
        "At matched drift from the base model, GradSPO still reaches a higher reward "
        "than SPO (the gain is not only a larger effective step)."
    )
    paper = "better human-preference scores than SPO at the same training budget"
    sweep = [m for m in runs if m == "spo" or m.startswith("spo lr")]
    if len(sweep) < 2:
        return Claim(
            statement,
            paper,
            "not run",
            "not testable here",
            "the quick run has no SPO learning-rate sweep; the full run has it",
        )
    g_mmd = float(np.mean(col("gradspo", "mmd")))
    near = min(sweep, key=lambda m: abs(float(np.mean(col(m, "mmd"))) - g_mmd))
    d_r = _compare(col("gradspo", "reward"), col(near, "reward"))
    d_m = _compare(col("gradspo", "mmd"), col(near, "mmd"))
    verdict = "held" if d_r[0] > 2 * d_r[1] and d_m[0] <= 2 * d_m[1] else "not held"
    return Claim(
        statement,
        paper,
        f"closest-drift SPO run: {near}; GradSPO minus it: reward {d_r[0]:+.3f} ± {d_r[1]:.3f}, "
        f"MMD² {d_m[0]:+.4f} ± {d_m[1]:.4f}",
        verdict,
        "SPO at lr ×1, ×2, ×4 traces its reward-drift curve; held when GradSPO's reward is "
        "over 2 s.e. higher and its MMD² not over 2 s.e. higher than the closest SPO run",
    )


def _figure(runs, cfg, base_x, w, idx, out: Path) -> Path:
    fig, axes = figure(1, 3, size=(14, 4))
    axes = axes.ravel()
    for m, rs in runs.items():
        curves = np.asarray([r["curve"] for r in rs])
        axes[0].plot(curves.mean(0), label=m)
    axes[0].set(
        xlabel="prompt batch",
        ylabel="mean final reward of sampled chains",
        title="training curves (mean over seeds)",
    )
    axes[0].legend(fontsize=7)
    axes[1].plot(w["timesteps"][idx], w["gradspo"][idx], "o-", label="GradSPO 4βγ√(1−ᾱ)/D")
    axes[1].plot(w["timesteps"][idx], w["spo"][idx], "s-", label="SPO 2β|b_t|/(σ_t D)")
    axes[1].invert_xaxis()
    axes[1].set(
        xlabel="timestep t (sampling order →)",
        ylabel="logit coefficient",
        title="implied per-step weights",
        yscale="log",
    )
    axes[1].legend(fontsize=7)
    bx = base_x[:400].numpy()
    axes[2].scatter(bx[:, 0], bx[:, 1], s=3, alpha=0.4, label="base")
    for m in ("gradspo", "spo"):
        x = runs[m][0]["samples"]
        axes[2].scatter(x[:, 0], x[:, 1], s=3, alpha=0.4, label=m)
    axes[2].set(title="samples (seed 0)", aspect="equal")
    axes[2].legend(fontsize=7, markerscale=3)
    return save_figure(fig, out / "gradspo.png")
