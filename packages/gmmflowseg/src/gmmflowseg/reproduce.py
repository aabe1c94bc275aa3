r"""The headline experiment at small scale: ``gmmflowseg reproduce [--quick] [--cracks]``.

Ambiguous lesions (four annotator modes, see :mod:`gmmflowseg.data`): PU-Net, cFlow-Net, GMM
(no flow), GMM+NF (ours, planar flow, joint KL) and GMM+NF without the range constraints, plus
the deterministic U-Net and two variants of ours (coupling flow; ``kl="marginal"``), all on one
backbone, trained with Adam for the same number of steps; 16 samples per test
image. Table: GED and HM-IoU (mean ± standard error over test images), diversity, mean prior
sigma, active latent dimensions, component-mode NMI, CPU seconds of training.

Claims (the paper's abstract and Sec. 4): GMM+NF beats PU-Net on GED and HM-IoU (headline);
GMM+NF is best of all methods; the PU-Net's latent collapses (large prior sigma or few active
dimensions); removing the constraints raises sigma and GED; components map to annotation modes
(NMI > 0.4). A gap smaller than two standard errors of the paired per-image difference is
checked on a second seed before it is claimed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from gmmflowseg.data import make_ambiguous_lesions, make_cracks
from gmmflowseg.metrics import latent_diagnostics
from gmmflowseg.models import DeterministicUNet, GMMFlowSegNet, ProbUNet
from gmmflowseg.train import evaluate, train_model
from paperkit import Claim, Report, figure, print_table, save_figure

__all__ = ["METHODS", "RUNS", "reproduce", "reproduce_with_cracks"]

#: Settings of the quick (True) and full (False) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"size": 16, "depth": 2, "base": 8, "steps": 200, "n_train": 1500, "n_test": 100},
    False: {"size": 32, "depth": 3, "base": 8, "steps": 500, "n_train": 1500, "n_test": 200},
}
BATCH, LR, N_SAMPLES = 16, 1e-3, 16
NMI_TARGET = 0.4
OURS, PUNET, UNCONSTRAINED = "GMM+NF", "PU-Net", "GMM+NF unconstrained"


def _methods(base: int, depth: int) -> dict[str, Any]:
    common = {"in_ch": 1, "n_classes": 2, "base": base, "depth": depth}
    return {
        "U-Net": lambda: DeterministicUNet(**common),
        PUNET: lambda: ProbUNet(**common),
        "cFlow-Net": lambda: ProbUNet(**common, flow="planar"),
        "GMM": lambda: GMMFlowSegNet(**common, flow=None),
        OURS: lambda: GMMFlowSegNet(**common, flow="planar"),
        UNCONSTRAINED: lambda: GMMFlowSegNet(**common, flow="planar", constrain=False),
        "GMM+NF coupling": lambda: GMMFlowSegNet(**common, flow="coupling"),
        "GMM+NF kl=marginal": lambda: GMMFlowSegNet(**common, flow="planar", kl="marginal"),
    }


METHODS = tuple(_methods(8, 2))
#: The paper's comparison: ours against the baselines and the ablation (not our own variants).
COMPARED = ("U-Net", PUNET, "cFlow-Net", "GMM", OURS, UNCONSTRAINED)


def _se(x: np.ndarray) -> float:
    return float(x.std(ddof=1) / np.sqrt(len(x))) if len(x) > 1 else 0.0


def _run_method(name: str, make, train, test, steps: int, seed: int) -> dict[str, Any]:
    torch.manual_seed(seed)
    model = make()
    fit = train_model(
        model,
        train,
        steps=steps,
        batch_size=BATCH,
        lr=LR,
        seed=seed,
        description=f"{name} (seed {seed})",
    )
    ev = evaluate(model, test, n_samples=N_SAMPLES, seed=seed)
    diag = {"mean_sigma_prior": None, "active_dims": None}
    if hasattr(model, "kl_per_dim"):
        x = torch.from_numpy(test["images"])
        y = torch.from_numpy(test["masks"]).long()
        loader = [
            (x[i : i + 50], y[i : i + 50, a])
            for a in range(y.shape[1])
            for i in range(0, len(x), 50)
        ]
        diag = latent_diagnostics(model, loader)
    return {"fit": fit, "eval": ev, "diag": diag}


def _row(name: str, run: dict[str, Any]) -> dict[str, Any]:
    ev, diag = run["eval"], run["diag"]
    return {
        "method": name,
        "GED": float(ev["ged"].mean()),
        "GED_se": _se(ev["ged"]),
        "HM-IoU": float(ev["hm_iou"].mean()),
        "HM-IoU_se": _se(ev["hm_iou"]),
        "diversity": float(ev["diversity"].mean()),
        "mean_sigma_p": diag["mean_sigma_prior"],
        "active_dims": diag["active_dims"],
        "comp_mode_NMI": ev["nmi"],
        "train_s": round(run["fit"]["cpu_s"], 1),
    }


def _paired_gap(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """Mean of the per-image difference ``a - b`` and its standard error."""
    d = a - b
    return float(d.mean()), _se(d)


def _experiment(data: str, cfg: dict[str, Any], seed: int, quick: bool) -> dict[str, Any]:
    make = make_ambiguous_lesions if data == "lesions" else make_cracks
    train = make(cfg["n_train"], size=cfg["size"], seed=seed)
    test = make(cfg["n_test"], size=cfg["size"], seed=seed + 10_000)
    methods = _methods(cfg["base"], cfg["depth"])
    runs = {n: _run_method(n, f, train, test, cfg["steps"], seed) for n, f in methods.items()}
    rows = [_row(n, r) for n, r in runs.items()]
    ours, pu = runs[OURS]["eval"], runs[PUNET]["eval"]
    gaps = {
        "GED": _paired_gap(pu["ged"], ours["ged"]),  # > 0: ours lower (better)
        "HM-IoU": _paired_gap(ours["hm_iou"], pu["hm_iou"]),  # > 0: ours higher (better)
    }
    second = None
    if not quick and any(abs(m) < 2 * s for m, s in gaps.values()):
        second = {
            n: _row(n, _run_method(n, methods[n], train, test, cfg["steps"], seed + 1))
            for n in (PUNET, OURS)
        }
    return {"rows": rows, "runs": runs, "gaps": gaps, "second_seed": second, "test": test}


def _claims(exp: dict[str, Any], data: str) -> list[Claim]:
    rows = {r["method"]: r for r in exp["rows"]}
    ours, pu, unc = rows[OURS], rows[PUNET], rows[UNCONSTRAINED]
    (g_ged, s_ged), (g_hm, s_hm) = exp["gaps"]["GED"], exp["gaps"]["HM-IoU"]
    sig_ged, sig_hm = g_ged > 2 * s_ged, g_hm > 2 * s_hm
    second = exp["second_seed"]
    again = second is not None and (
        second[OURS]["GED"] < second[PUNET]["GED"]
        and second[OURS]["HM-IoU"] > second[PUNET]["HM-IoU"]
    )
    better = g_ged > 0 and g_hm > 0
    if better and ((sig_ged and sig_hm) or again):
        verdict = "held"
    elif better or sig_ged or sig_hm:
        verdict = "partly"
    else:
        verdict = "not held"
    seed_note = ""
    if second is not None:
        seed_note = (
            f"; second seed: GED {second[OURS]['GED']:.3f} vs {second[PUNET]['GED']:.3f}, "
            f"HM-IoU {second[OURS]['HM-IoU']:.3f} vs {second[PUNET]['HM-IoU']:.3f}"
        )
    claims = [
        Claim(
            f"GMM+NF beats the PU-Net on GED and HM-IoU ({data})",
            "abstract: outperforms the state of the art on LIDC and Crack500 "
            "(numbers not recovered)",
            f"GED {ours['GED']:.3f} vs {pu['GED']:.3f} (paired gap {g_ged:+.3f} ± {s_ged:.3f}); "
            f"HM-IoU {ours['HM-IoU']:.3f} vs {pu['HM-IoU']:.3f} (gap {g_hm:+.3f} ± {s_hm:.3f})"
            + seed_note,
            verdict,
            "gaps are per-image paired differences ± SE; 'held' needs both > 2 SE or the same "
            "order on a second seed, 'partly' both better or one better by > 2 SE; four "
            "annotator modes and K=4 favour the mixture by construction",
        )
    ]
    compared = [r for n, r in rows.items() if n in COMPARED]
    best_ged = min(compared, key=lambda r: r["GED"])["method"]
    best_hm = max(compared, key=lambda r: r["HM-IoU"])["method"]
    n_best = (best_ged == OURS) + (best_hm == OURS)
    claims.append(
        Claim(
            "GMM+NF has the lowest GED and the highest HM-IoU of the methods compared (the "
            "baselines and the unconstrained ablation)",
            "abstract: state-of-the-art results",
            f"lowest GED: {best_ged}; highest HM-IoU: {best_hm}",
            ["not held", "partly", "held"][n_best],
            "one seed, the same backbone and steps for every method",
        )
    )
    D = len(exp["runs"][PUNET]["diag"].get("kl_per_dim", [])) or 6
    collapse = pu["mean_sigma_p"] > ours["mean_sigma_p"] or pu["active_dims"] < D / 2
    claims.append(
        Claim(
            "PU-Net buys diversity with latent variance or collapses (large prior sigma or few "
            "active latent dimensions)",
            "abstract: unconstrained variance leads to posterior collapse",
            f"PU-Net sigma_p {pu['mean_sigma_p']:.3f}, {pu['active_dims']}/{D} active dims; GMM+NF "
            f"sigma_p {ours['mean_sigma_p']:.3f}, {ours['active_dims']}/{D} active",
            "held" if collapse else "not held",
            "active: mean KL per dim > 0.01 nats on the test set (pre-flow, closed form)",
        )
    )
    raises_sigma = unc["mean_sigma_p"] > ours["mean_sigma_p"]
    raises_ged = unc["GED"] > ours["GED"]
    claims.append(
        Claim(
            "Removing the mean/variance constraints raises the prior sigma and degrades GED",
            "abstract: constrained variance and mean ranges prevent variance-driven diversity",
            f"sigma_p {unc['mean_sigma_p']:.3f} vs {ours['mean_sigma_p']:.3f}; "
            f"GED {unc['GED']:.3f} "
            f"vs {ours['GED']:.3f} (± {unc['GED_se']:.3f}, {ours['GED_se']:.3f})",
            ["not held", "partly", "partly", "held"][raises_sigma + 2 * raises_ged],
            "one seed; the ablation differs from GMM+NF only in the head's output maps",
        )
    )
    nmi = ours["comp_mode_NMI"]
    claims.append(
        Claim(
            "Mixture components correspond to annotation modes (component-mode NMI > 0.4)",
            "abstract: components capture semantic annotation modes (interpretable)",
            f"NMI {nmi:.3f}",
            "held" if nmi > NMI_TARGET else "not held",
            "NMI of each sample's component with the mode of its nearest (max-IoU) annotation",
        )
    )
    return claims


def _figure(exp: dict[str, Any], out: Path, name: str) -> Path:
    rows = exp["rows"]
    fig, axes = figure(1, 3, size=(14, 3.8))
    names = [r["method"] for r in rows]
    for ax, key in zip(axes[0, :2], ("GED", "HM-IoU"), strict=True):
        ax.bar(
            range(len(rows)),
            [r[key] for r in rows],
            yerr=[r[f"{key}_se"] for r in rows],
            color=["C3" if n == OURS else "C0" for n in names],
        )
        ax.set_xticks(range(len(rows)), names, rotation=30, ha="right", fontsize=8)
        ax.set_title(f"{key} (± SE over test images)")
    ev, test = exp["runs"][OURS]["eval"], exp["test"]
    i = int(np.argmax(ev["diversity"]))
    image = test["images"][i, 0]
    image = (image - image.min()) / max(float(image.max() - image.min()), 1e-9)
    grid = np.concatenate(
        [
            np.concatenate([image, *test["masks"][i].astype(float)], 1),
            np.concatenate([np.zeros_like(image), *ev["samples"][i][:4].astype(float)], 1),
        ],
        0,
    )
    ax = axes[0, 2]
    ax.imshow(grid, cmap="gray")
    comps = ", ".join(str(c) for c in ev["comps"][i][:4])
    ax.set_title(
        f"top: image, annotations; bottom: GMM+NF samples (components {comps})", fontsize=8
    )
    ax.axis("off")
    return save_figure(fig, out / name)


def reproduce(*, quick: bool = False, seed: int = 0, out: Path, cracks: bool = False) -> Report:
    """Train every method on the lesion data (and the cracks with ``cracks=True``)."""
    torch.set_num_threads(1)
    out = Path(out)
    cfg = dict(RUNS[quick])
    data_sets = ["lesions", "cracks"] if cracks else ["lesions"]
    tables, claims, figures, data = {}, [], [], {}
    for data_name in data_sets:
        c = dict(cfg, size=max(cfg["size"], 32)) if data_name == "cracks" else cfg
        exp = _experiment(data_name, c, seed, quick)
        print_table(exp["rows"], title=f"{data_name}: {c['size']}x{c['size']}, {c['steps']} steps")
        tables[data_name] = exp["rows"]
        if exp["second_seed"] is not None:
            tables[f"{data_name}_seed{seed + 1}"] = list(exp["second_seed"].values())
        claims += _claims(exp, data_name)
        figures.append(_figure(exp, out, f"{data_name}.png"))
        data[data_name] = {
            "gaps": {k: list(v) for k, v in exp["gaps"].items()},
            "loss_curves": {n: r["fit"]["curve"] for n, r in exp["runs"].items()},
            "kl_per_dim": {
                n: r["diag"]["kl_per_dim"].tolist()
                for n, r in exp["runs"].items()
                if "kl_per_dim" in r["diag"]
            },
        }
    headline = claims[0]
    supported = headline.verdict == "held"
    print(f"claim_supported: {str(supported).lower()}")
    return Report(
        claims=claims,
        tables=tables,
        figures=figures,
        settings={
            **cfg,
            "batch_size": BATCH,
            "lr": LR,
            "n_samples": N_SAMPLES,
            "seed": seed,
            "data": data_sets,
            "methods": list(METHODS),
            "claim_supported": supported,
        },
        data=data,
    )


def reproduce_with_cracks(*, quick: bool = False, seed: int = 0, out: Path) -> Report:
    """:func:`reproduce` with the crack data set too (``gmmflowseg reproduce --cracks``)."""
    return reproduce(quick=quick, seed=seed, out=out, cracks=True)
