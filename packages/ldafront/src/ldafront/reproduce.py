"""The headline experiment at small scale: ``ldafront reproduce [--quick] [--seed N] [--out DIR]``.

(a) Synthetic population (:class:`ldafront.SyntheticLDA`, known posterior): the claimant trains
7 small MLPs (width 64) on n_s in {250, 500, 1000, 2000} training rows (4 unconstrained, 3
DP-penalised at 2000), fits the scaling law and predicts the frontier of the contested scale
n = 16 000. The ground truth is the frontier of a lambda sweep of big models (12; 6 in the
quick run) trained on the 16 000 rows; every model is audited on one set of 200 000 fresh test
rows (paired comparisons). Baselines: the chord to the constant predictor (with the
scaling-law L0 and Delta0), "no scaling" (the law with the largest small model's own values)
and the expensive ground truth itself. Six contested models are tested for an LDA (tau, eps):
3 on the big frontier where cutting eps of DP costs more than tau (truth: no LDA) and 3 off it
(the unconstrained model and two trained with a negative lambda; truth: LDA).

(b) statsmodels ``fair`` (full run only): 3 000 test rows, the big model on the 3 366 other
rows; the frontier-prediction error with bootstrap CIs (no decisions: the test loss's standard
error is above tau).

Diagnostics (to tell the law's shape from its extrapolation): the law with the big model's own
L0, Delta0 and Fisher V, the frontier of post-processing the big model's scores, and (full run)
the unregularised training (weight decay 0) and the protocol's variants on the same big frontier
(other claimant seeds, seed-averaged small models, V(s) per scale, L0 floored at the Bayes risk,
larger small scales, logistic small models), with a claim on the seeds.

BLAS runs single-threaded throughout (see :func:`reproduce`).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np

from ldafront.audit import ScalingLawLDA
from ldafront.data import SyntheticLDA, fair_data
from ldafront.frontier import empirical_frontier
from ldafront.law import chord_bound, frontier_law
from ldafront.metrics import binary_entropy
from ldafront.postprocess import postprocessed_frontier
from ldafront.powerlaw import fit_power_law, power_law
from ldafront.training import train_dp_penalized
from paperkit import Claim, Report, figure, print_table, progress, save_figure

__all__ = ["RUNS", "reproduce"]

#: Sizes of the quick (True) and full (False) runs. ``sweep``: the big models' lambdas as
#: fractions of Delta0 / V_F of the unconstrained big model (by the law a penalty mu cuts the
#: gap by about mu V); ``negative``: the suboptimal contested models' fractions; ``variants``:
#: the protocol's variants (``claimant_seeds`` seeds, ``larger_scales``), see ``_variants``.
RUNS: dict[bool, dict[str, Any]] = {
    True: {
        "n_big": 16_000,
        "n_test": 200_000,
        "sweep": [0.0, 0.3, 0.5, 0.7, 0.9, 1.2],
        "negative": [-0.25, -0.5],
        "scales": [250, 500, 1000, 2000],
        "n_boot": 100,
        "real": False,
        "ablation": False,
        "variants": False,
    },
    False: {
        "n_big": 16_000,
        "n_test": 200_000,
        "sweep": [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.05, 1.25],
        "negative": [-0.25, -0.5],
        "scales": [250, 500, 1000, 2000],
        "n_boot": 200,
        "real": True,
        "ablation": True,
        "variants": True,
        "claimant_seeds": 5,
        "larger_scales": [[500, 1000, 2000, 4000], [1000, 2000, 4000, 8000]],
    },
}
TAU, EPS = 0.002, 0.02
HIDDEN, EPOCHS, LR = 64, 300, 1e-2
#: L2 weight decay of every model (Deviations: without it the small MLPs overfit, see README).
WEIGHT_DECAY = 1e-2
#: Targets of the frontier error (nats): synthetic, real.
TARGET = {"synthetic": 0.005, "fair": 0.01}
N_GRID = 25


def _audit(scores: np.ndarray, y: np.ndarray, A: np.ndarray, idx: np.ndarray | None = None):
    """Losses and DP gaps ``(m,)`` of the score rows ``(m, n)`` (on rows ``idx``)."""
    if idx is not None:
        scores, y, A = scores[:, idx], y[idx], A[idx]
    p1 = A.mean()
    w = np.where(A == 1, 1 / p1, -1 / (1 - p1))
    loss = np.mean(-y * np.log(scores) - (1 - y) * np.log1p(-scores), axis=1)
    return loss, np.abs(scores @ w / len(y)), scores @ (w * w) / len(y)


def _audit_model(options: dict[str, Any]) -> ScalingLawLDA:
    """The claimant's audit with the reproduction's training settings and ``options``."""
    return ScalingLawLDA(
        tau=TAU, eps=EPS, hidden=HIDDEN, epochs=EPOCHS, lr=LR, weight_decay=WEIGHT_DECAY, **options
    )


def _train_big(X, y, A, lam, seed) -> tuple[Any, float]:
    model, stats = train_dp_penalized(
        X,
        y,
        A,
        lam,
        model="mlp",
        hidden=HIDDEN,
        epochs=EPOCHS,
        lr=LR,
        weight_decay=WEIGHT_DECAY,
        seed=seed,
    )
    return model, stats["seconds"]


def _big_sweep(X, y, A, Xe, Ae, fractions, seed, label) -> tuple[list[float], np.ndarray, float]:
    """The big models: lambda = fraction * Delta0 / V_F of the unconstrained big model (first
    fraction must be 0). Returns the lambdas, their scores on the test rows and the seconds."""
    lams, scores, seconds = [], [], 0.0
    for fraction in progress(fractions, f"{label}: big models"):
        if fraction == 0.0 or not scores:
            lam = 0.0
        else:
            f0 = scores[0]
            w = np.where(Ae == 1, 1 / Ae.mean(), -1 / (1 - Ae.mean()))
            d0, v0 = float(np.mean(w * f0)), float(np.mean(w * w * f0 * (1 - f0)))
            lam = float(np.sign(d0) * fraction * abs(d0) / v0)
        model, sec = _train_big(X, y, A, lam, seed)
        lams.append(lam)
        scores.append(model.predict_proba(Xe, Ae))
        seconds += sec
    return lams, np.array(scores), seconds


def _frontier_errors(aud, big_scores, y, A, scale, H, idx=None) -> dict[str, Any]:
    """Mean and max abs error of the law and the baselines against the empirical big frontier
    on a grid of N_GRID gaps from the least big-model gap to Delta0 of the big model."""
    s_loss, s_dp, _ = _audit(aud.eval_scores_, y, A, idx)
    b_loss, b_dp, b_fisher = _audit(big_scores, y, A, idx)
    law = aud.law_from_audit(scale, s_loss, s_dp)
    L0, D0, V = law["L0"], law["D0"], law["V"]
    grid = np.linspace(max(b_dp.min(), 0.0), b_dp[0], N_GRID)
    truth = empirical_frontier(b_dp, b_loss, grid)
    curves = {
        "scaling law (7 small models)": frontier_law(L0, D0, V, grid),
        "chord (scaling-law L0, Delta0)": chord_bound(L0, D0, H, grid),
        "no scaling (largest small model)": frontier_law(law["L_small"], law["D_small"], V, grid),
        "law with the big model's own L0, Delta0, V_F": frontier_law(
            b_loss[0], b_dp[0], b_fisher[0], grid
        ),
    }
    errors = {name: np.abs(c - truth) for name, c in curves.items()}
    return {"grid": grid, "truth": truth, "curves": curves, "errors": errors, "law": (L0, D0, V)}


def _error_rows(aud, big_scores, y, A, scale, H, n_boot, seed, label, extra=None):
    """The frontier-error table with bootstrap 95 % CIs over the test rows."""
    base = _frontier_errors(aud, big_scores, y, A, scale, H)
    rng = np.random.default_rng([seed, 11])
    boot = {name: [] for name in base["errors"]}
    for _ in progress(range(n_boot), f"{label}: bootstrap"):
        idx = rng.integers(0, len(y), len(y))
        for name, err in _frontier_errors(aud, big_scores, y, A, scale, H, idx)["errors"].items():
            boot[name].append(float(np.mean(err)))
    rows = []
    for name, err in base["errors"].items():
        lo, hi = np.quantile(boot[name], [0.025, 0.975])
        rows.append(
            {
                "data": label,
                "predictor": name,
                "mean abs err": float(np.mean(err)),
                "CI low": float(lo),
                "CI high": float(hi),
                "max abs err": float(np.max(err)),
            }
        )
    for name, curve in (extra or {}).items():
        err = np.abs(curve(base["grid"]) - base["truth"])
        rows.append(
            {
                "data": label,
                "predictor": name,
                "mean abs err": float(np.mean(err)),
                "CI low": None,
                "CI high": None,
                "max abs err": float(np.max(err)),
            }
        )
    return rows, base


def _contested(aud, lams, big_scores, neg_scores, neg_lams, y, A, scale):
    """The six contested models and the LDA decisions against the empirical big frontier:
    the table's rows and the cases ``(kind, lambda, L_c, Delta_c, truth)`` for the variants."""
    loss, dp, _ = _audit(big_scores, y, A)
    n_loss, n_dp, _ = _audit(neg_scores, y, A)
    all_dp, all_loss = np.concatenate([dp, n_dp]), np.concatenate([loss, n_loss])

    def truth(L_c: float, D_c: float) -> bool:
        target = D_c - EPS
        if target < all_dp.min():
            return False
        return bool(empirical_frontier(all_dp, all_loss, [target])[0] <= L_c + TAU)

    # on the frontier: penalised sweep models with no LDA by the truth, spread over that part
    on = [
        i for i in range(1, len(lams)) if dp[i] - EPS >= all_dp.min() and not truth(loss[i], dp[i])
    ]
    on = sorted(on, key=lambda i: -dp[i])
    pick = [on[j] for j in sorted({0, len(on) // 2, len(on) - 1})] if on else []
    cases = [("on frontier", lams[i], loss[i], dp[i], big_scores[i]) for i in pick]
    cases.append(("unconstrained", 0.0, loss[0], dp[0], big_scores[0]))
    cases += [
        ("negative lambda", lam, n_loss[j], n_dp[j], neg_scores[j])
        for j, lam in enumerate(neg_lams)
    ]
    rows, decided = [], []
    for kind, lam, L_c, D_c, scores in cases:
        test = aud.lda_test(scale, float(L_c), float(D_c), scores=scores, y=y, A=A)
        exists = truth(float(L_c), float(D_c))
        decided.append((kind, lam, float(L_c), float(D_c), exists))
        rows.append(
            {
                "contested": kind,
                "lambda": lam,
                "L_c": float(L_c),
                "Delta_c": float(D_c),
                "delta*": test["delta_star"],
                "margin": test["margin"],
                "declared LDA": test["exists"],
                "truth LDA": exists,
                "correct": test["exists"] == exists,
                "post-processed dL": test["constructive"]["loss_increase"],
            }
        )
    return rows, decided


def _synthetic(run: dict[str, Any], seed: int) -> dict[str, Any]:
    pop = SyntheticLDA.make(seed)
    rng = np.random.default_rng([seed, 1])
    X, y, A, _ = pop.sample(run["n_big"], rng)
    Xe, ye, Ae, eta_e = pop.sample(run["n_test"], rng)
    start = time.perf_counter()
    aud = _audit_model({"n_boot": run["n_boot"], "random_state": seed})
    aud.fit(X, y, A, scales=run["scales"], model="mlp", eval_data=(Xe, ye, Ae))
    small_wall = time.perf_counter() - start
    lams, big, big_seconds = _big_sweep(X, y, A, Xe, Ae, run["sweep"], seed, "synthetic")
    w = np.where(Ae == 1, 1 / Ae.mean(), -1 / (1 - Ae.mean()))
    v0 = float(np.mean(w * w * big[0] * (1 - big[0])))
    d0 = float(np.mean(w * big[0]))
    neg_lams = [float(np.sign(d0) * f * abs(d0) / v0) for f in run["negative"]]
    neg = []
    for lam in progress(neg_lams, "synthetic: suboptimal models"):
        model, _ = _train_big(X, y, A, lam, seed)
        neg.append(model.predict_proba(Xe, Ae))
    neg = np.array(neg)
    H = binary_entropy(float(ye.mean()))

    def postprocessed(grid: np.ndarray) -> np.ndarray:
        return postprocessed_frontier(big[0], Ae, grid, ye)

    errors, base = _error_rows(
        aud,
        big,
        ye,
        Ae,
        run["n_big"],
        H,
        run["n_boot"],
        seed,
        "synthetic",
        extra={"post-processed big unconstrained model": postprocessed},
    )
    contested, cases = _contested(aud, lams, big, neg, neg_lams, ye, Ae, run["n_big"])
    bayes = postprocessed_frontier(eta_e, Ae, base["grid"])
    return {
        "aud": aud,
        "errors": errors,
        "base": base,
        "contested": contested,
        "cases": cases,
        "bayes_risk": float(np.mean(-ye * np.log(eta_e) - (1 - ye) * np.log1p(-eta_e))),
        "lams": lams,
        "big": _audit(big, ye, Ae),
        "bayes": bayes,
        "small_wall": small_wall,
        "big_seconds": big_seconds,
        "X": X,
        "y": y,
        "A": A,
        "test": (Xe, ye, Ae),
    }


def _variants(syn: dict[str, Any], run: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """Variants of the claimant's protocol on the same big frontier and contested models:
    other claimant seeds, seed-averaged small models, V(s) per scale, L0 floored at the Bayes
    risk (an oracle: a claimant does not know it), larger small scales, logistic small models.
    Each row: the predicted L0 at the big scale, the frontier error and the decisions."""
    Xe, ye, Ae = syn["test"]
    grid, truth = syn["base"]["grid"], syn["base"]["truth"]
    n_big, scales = run["n_big"], run["scales"]
    b_loss = float(syn["big"][0][0])
    configs: list[tuple[str, dict[str, Any], list[int], str]] = [
        (f"paper protocol, claimant seed {seed + r}", {"random_state": seed + r}, scales, "mlp")
        for r in range(1, run["claimant_seeds"])
    ]
    configs += [
        (
            f"{run['claimant_seeds']} seeds averaged",
            {"repeats": run["claimant_seeds"]},
            scales,
            "mlp",
        ),
        ("V(s) per scale (3 penalised at each scale)", {"v_per_scale": True}, scales, "mlp"),
        ("L0 floor = Bayes risk (oracle)", {"L0_floor": syn["bayes_risk"]}, scales, "mlp"),
        *[(f"scales {s[0]}-{s[-1]}", {}, s, "mlp") for s in run["larger_scales"]],
        ("logistic small models", {}, scales, "logistic"),
    ]
    rows = [("paper protocol (headline), claimant seed " + str(seed), syn["aud"])]
    for name, options, s, model in progress(configs, "synthetic: variants"):
        settings = {"n_boot": run["n_boot"], "random_state": seed, **options}
        aud = _audit_model(settings).fit(
            syn["X"], syn["y"], syn["A"], scales=s, model=model, eval_data=(Xe, ye, Ae)
        )
        rows.append((name, aud))
    table = []
    for name, aud in rows:
        L0, D0, V = aud.law_at(n_big)
        err = np.abs(aud.predict_frontier(n_big, grid) - truth)
        right = sum(
            aud.lda_test(n_big, L_c, D_c)["exists"] == exists
            for _, _, L_c, D_c, exists in syn["cases"]
        )
        table.append(
            {
                "variant": name,
                "small models": len(aud.small_),
                "scales": f"{int(aud.scales_[0])}-{int(aud.scales_[-1])}",
                "train s": aud.train_seconds_,
                "L0 big predicted": L0,
                "L0 big error": L0 - b_loss,
                "Delta0 big": D0,
                "V big": V,
                "mean abs err": float(np.mean(err)),
                "max abs err": float(np.max(err)),
                "decisions right": f"{right}/{len(syn['cases'])}",
            }
        )
    return table


def _ablation(data: dict[str, Any], run: dict[str, Any], seed: int) -> list[dict[str, Any]]:
    """The unregularised training (weight decay 0): L0's extrapolation from the 4 small
    models to the big one, against the regularised default."""
    Xe, ye, Ae = data["test"]
    rows = []
    for wd in (0.0, WEIGHT_DECAY):
        losses = []
        for n in progress([*run["scales"], run["n_big"]], f"ablation wd={wd:g}"):
            model, _ = train_dp_penalized(
                data["X"][:n],
                data["y"][:n],
                data["A"][:n],
                0.0,
                model="mlp",
                hidden=HIDDEN,
                epochs=EPOCHS,
                lr=LR,
                weight_decay=wd,
                seed=seed,
            )
            f = model.predict_proba(Xe, Ae)
            losses.append(float(np.mean(-ye * np.log(f) - (1 - ye) * np.log1p(-f))))
        params = fit_power_law(run["scales"], losses[:-1])
        pred = float(power_law(run["n_big"], *params))
        rows.append(
            {
                "weight decay": wd,
                **{
                    f"L0 n={n}": v
                    for n, v in zip([*run["scales"], run["n_big"]], losses, strict=True)
                },
                "predicted L0 big": pred,
                "abs err": abs(pred - losses[-1]),
            }
        )
    return rows


def _fair(run: dict[str, Any], seed: int) -> dict[str, Any]:
    X, y, A = fair_data()
    rng = np.random.default_rng([seed, 2])
    order = rng.permutation(len(y))
    test, train = order[:3000], order[3000:]
    Xe, ye, Ae = X[test], y[test], A[test]
    Xt, yt, At = X[train], y[train], A[train]
    aud = _audit_model({"n_boot": run["n_boot"], "random_state": seed})
    aud.fit(Xt, yt, At, scales=run["scales"], model="mlp", eval_data=(Xe, ye, Ae))
    lams, big, _ = _big_sweep(Xt, yt, At, Xe, Ae, run["sweep"], seed, "fair")
    H = binary_entropy(float(ye.mean()))
    errors, base = _error_rows(aud, big, ye, Ae, len(train), H, run["n_boot"], seed, "fair")
    return {
        "aud": aud,
        "errors": errors,
        "base": base,
        "n_train": len(train),
        "big": _audit(big, ye, Ae),
    }


def _plot(syn: dict[str, Any], fair: dict[str, Any] | None, out: Path) -> Path:
    panels = [("synthetic (n = 16 000)", syn)] + ([("fair (full train)", fair)] if fair else [])
    fig, axes = figure(1, len(panels), size=(5.2 * len(panels), 4.0))
    axes = [axes] if len(panels) == 1 else list(axes[0])
    for ax, (title, res) in zip(axes, panels, strict=True):
        base = res["base"]
        loss, dp, _ = res["big"]
        ax.plot(dp, loss, "ko", ms=4, label="big models (lambda sweep)")
        ax.plot(base["grid"], base["truth"], "k-", lw=2, label="empirical big frontier")
        styles = ["C0-", "C1--", "C2:", "C3-."]
        for (name, curve), style in zip(base["curves"].items(), styles, strict=True):
            ax.plot(base["grid"], curve, style, label=name)
        if "bayes" in res:
            ax.plot(base["grid"], res["bayes"], "C4-", lw=1, label="Bayes frontier (true eta)")
        small = res["aud"].small_
        ax.plot([r["dp"] for r in small], [r["loss"] for r in small], "C0x", label="7 small models")
        ax.set_xlabel("DP gap Delta")
        ax.set_ylabel("test BCE (nats)")
        ax.set_title(title)
        top = float(np.nanmax(base["truth"])) + 0.03
        ax.set_ylim(float(np.nanmin(base["truth"])) - 0.02, top)
    axes[0].legend(fontsize="x-small")
    return save_figure(fig, out / "ldafront.png")


def _claims(syn, fair, variants) -> list[Claim]:
    rows = {r["predictor"]: r for r in syn["errors"]}
    law = rows["scaling law (7 small models)"]
    err, hi = law["mean abs err"], law["CI high"]
    verdict = (
        "held"
        if hi <= TARGET["synthetic"]
        else ("partly" if err <= TARGET["synthetic"] else "not held")
    )
    claims = [
        Claim(
            "A closed-form frontier law fitted on 7 small models predicts the big model's loss-DP "
            "frontier (synthetic data)",
            paper="fitted with as few as 7 small models (exact numbers not retrieved); "
            "target here: mean abs error <= 0.005 nats",
            measured=f"mean abs error {err:.4f} nats (95% CI {law['CI low']:.4f}-{hi:.4f}), "
            f"max {law['max abs err']:.4f}, over delta in [{syn['base']['grid'][0]:.3f}, "
            f"{syn['base']['grid'][-1]:.3f}]",
            verdict=verdict,
            why=f"MLP width 64, n_s = 250..2000 -> n = 16 000; truth from {len(syn['lams'])} big "
            "models on 200 000 test rows; CI: bootstrap over test rows",
        )
    ]
    correct = sum(r["correct"] for r in syn["contested"])
    total = len(syn["contested"])
    claims.append(
        Claim(
            "The LDA test decides correctly whether a less discriminatory alternative exists",
            paper="a claimant can predict whether the contested model is on its frontier; "
            "target here: >= 5/6 right",
            measured=f"{correct}/{total} decisions right (tau = {TAU}, eps = {EPS})",
            verdict="held"
            if correct >= 5 and total == 6
            else ("partly" if correct >= 4 else "not held"),
            why="3 on-frontier and 3 suboptimal contested models at n = 16 000; truth from the "
            "empirical big frontier",
        )
    )
    chord = rows["chord (scaling-law L0, Delta0)"]
    none = rows["no scaling (largest small model)"]
    worse = [b["mean abs err"] >= 2 * err and b["CI low"] > hi for b in (chord, none)]
    claims.append(
        Claim(
            "Both baselines (linear chord, no scaling) predict the big frontier clearly worse",
            paper="the law beats naive extrapolation (our target: baseline error >= 2x and CIs "
            "apart)",
            measured=f"chord {chord['mean abs err']:.4f}, no scaling {none['mean abs err']:.4f} vs "
            f"law {err:.4f} nats",
            verdict="held" if all(worse) else ("partly" if any(worse) else "not held"),
            why="mean abs error against the same empirical frontier, bootstrap CIs",
        )
    )
    if fair is None:
        claims.append(
            Claim(
                "The law predicts the frontier on real data (statsmodels fair)",
                paper="target here: mean abs error <= 0.01 nats",
                measured="not run",
                verdict="not testable here",
                why="the quick run is synthetic only; the full run tests it",
            )
        )
    else:
        fr = {r["predictor"]: r for r in fair["errors"]}["scaling law (7 small models)"]
        v = (
            "held"
            if fr["CI high"] <= TARGET["fair"]
            else ("partly" if fr["mean abs err"] <= TARGET["fair"] else "not held")
        )
        claims.append(
            Claim(
                "The law predicts the frontier on real data (statsmodels fair)",
                paper="target here: mean abs error <= 0.01 nats",
                measured=f"mean abs error {fr['mean abs err']:.4f} nats (95% CI "
                f"{fr['CI low']:.4f}-{fr['CI high']:.4f})",
                verdict=v,
                why=f"3 000 test rows, big model on {fair['n_train']} rows; no decisions (the "
                "loss's standard error exceeds tau)",
            )
        )
    ratio = syn["big_seconds"] / syn["aud"].train_seconds_
    claims.append(
        Claim(
            "The claimant's compute (7 small models) is a small part of tracing the big frontier",
            paper="audits under resource constraints",
            measured=f"{syn['aud'].train_seconds_:.1f} s vs {syn['big_seconds']:.1f} s "
            f"({ratio:.1f}x less)",
            verdict="held" if ratio >= 5 else "partly",
            why="training seconds on this machine's CPU, one run",
        )
    )
    claims.append(_seed_claim(variants))
    return claims


def _seed_claim(variants: list[dict[str, Any]] | None) -> Claim:
    """The paper protocol over the claimant's seeds (the headline's and the variants' other
    seeds): how many meet the synthetic error target and >= 5/6 decisions."""
    statement = (
        "The 7-model protocol holds across the claimant's draws of small training sets and "
        "initialisations (seeds)"
    )
    paper = "as few as 7 small models suffice (target here: each seed meets both targets)"
    if variants is None:
        return Claim(
            statement,
            paper=paper,
            measured="not run",
            verdict="not testable here",
            why="the quick run has no variants; the full run tests it",
        )
    rows = [r for r in variants if r["variant"].startswith("paper protocol")]
    good = [
        r["mean abs err"] <= TARGET["synthetic"] and r["decisions right"] in ("5/6", "6/6")
        for r in rows
    ]
    errors = ", ".join(f"{r['mean abs err']:.4f}" for r in rows)
    decisions = ", ".join(r["decisions right"] for r in rows)
    return Claim(
        statement,
        paper=paper,
        measured=f"{sum(good)}/{len(rows)} seeds meet both; mean abs errors {errors} nats; "
        f"decisions {decisions}",
        verdict="held" if all(good) else ("partly" if sum(good) > len(rows) / 2 else "not held"),
        why="same big frontier and contested models; each seed redraws the 7 small models' "
        "training subsets and initialisations (no bootstrap CIs)",
    )


def reproduce(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """Run (a) synthetic (and (b) fair in the full run) at the sizes of ``RUNS[quick]``; print
    the tables; write ``ldafront.png``. The claims are computed from the rows. BLAS runs
    single-threaded (``threadpoolctl``, a dependency of scikit-learn): the MLPs are small, and
    on shared cores threaded BLAS cost about 10 times more CPU time."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        return _reproduce(quick, seed, Path(out))


def _reproduce(quick: bool, seed: int, out: Path) -> Report:
    run = RUNS[quick]
    syn = _synthetic(run, seed)
    tables = {"synthetic_frontier_error": syn["errors"], "lda_decisions": syn["contested"]}
    law_rows = [{"data": "synthetic", **syn["aud"].summary()}]
    fair = None
    if run["real"]:
        fair = _fair(run, seed)
        tables["fair_frontier_error"] = fair["errors"]
        law_rows.append({"data": "fair", **fair["aud"].summary()})
    tables["fitted_law"] = law_rows
    tables["small_models"] = [{"data": "synthetic", **r} for r in syn["aud"].small_]
    if run["variants"]:
        tables["variants"] = _variants(syn, run, seed)
    if run["ablation"]:
        tables["ablation_weight_decay"] = _ablation(syn, run, seed)
    for name, rows in tables.items():
        print_table(rows, title=name)
    figure_path = _plot(syn, fair, out)
    return Report(
        claims=_claims(syn, fair, tables.get("variants")),
        tables=tables,
        figures=[figure_path],
        settings={
            **run,
            "tau": TAU,
            "eps": EPS,
            "hidden": HIDDEN,
            "epochs": EPOCHS,
            "lr": LR,
            "weight_decay": WEIGHT_DECAY,
            "grid_points": N_GRID,
            "small_model_seconds": syn["aud"].train_seconds_,
            "big_sweep_seconds": syn["big_seconds"],
        },
        data={
            "synthetic_grid": syn["base"]["grid"].tolist(),
            "synthetic_truth": syn["base"]["truth"].tolist(),
            "synthetic_bayes": syn["bayes"].tolist(),
            "bayes_risk": syn["bayes_risk"],
        },
    )
