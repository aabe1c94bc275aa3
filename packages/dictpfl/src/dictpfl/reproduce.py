"""Reproduction at small scale: ``dictpfl reproduce [--quick]``.

Case A (quick and full): digits, the MLP 64-256-256 pretrained on the public 30 % split with a
new 10-way head, K = 4 clients with Dirichlet(0.5) label skew, 8 rounds (quick) or 20 (full);
plaintext FedAvg, FedHE-Full, FedML-HE (10 %), DictPFL (r = 8, s = 0.7, β = 0.2) and the two
ablations (DePE only, PrME only), all through one Flower federation (one ServerApp, K
ClientApps in Flower's simulation engine).
Case B (full only): a 2-layer width-128 MLP pretrained on noisy digits (σ = 0.5), fine-tuned on
clean digits; plaintext, FedHE-Full, FedML-HE and DictPFL.

Per method: final accuracy, bytes per round (up + down, counted on the wire), modelled seconds
per round (CPU time of compute/encrypt/aggregate/decrypt plus transfer at 100 Mbit/s), the
reduction of communication and time against FedHE-Full, and the time relative to plaintext.
The claims and the rules giving their verdicts are in :mod:`dictpfl.claims`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.ticker import NullFormatter

from dictpfl.claims import (
    ablation_claim,
    accuracy_claim,
    fedhe_claim,
    fedml_claim,
    plaintext_time_claim,
)
from dictpfl.data import make_federated_digits
from dictpfl.federated import ENGINES, METHODS, FLHistory, run_methods
from dictpfl.he import HEContext
from dictpfl.model import pretrained_mlp
from paperkit import Report, check_choice, check_int, figure, print_table, save_figure

__all__ = ["compare", "reproduce", "summary_rows"]

LABELS = {
    "plaintext": "Plaintext FedAvg",
    "fedhe_full": "FedHE-Full",
    "fedml_he": "FedML-HE (10%)",
    "dictpfl": "DictPFL",
    "depe_only": "DePE only",
    "prme_only": "PrME only",
}


def compare(
    methods: tuple[str, ...],
    *,
    rounds: int,
    clients: int = 4,
    hidden: tuple[int, ...] = (256, 256),
    noise: float = 0.0,
    seed: int = 0,
    pretrain_epochs: int = 30,
    engine: str = "simulation",
) -> dict[str, FLHistory]:
    """Run each method on the same data, pretrained model and CKKS keys, one after the other
    on one federation of ``clients`` ClientApps."""
    data = make_federated_digits(clients=clients, seed=seed, noise=noise)
    model = pretrained_mlp(data, hidden, epochs=pretrain_epochs, seed=seed)
    return run_methods(
        methods,
        data,
        rounds=rounds,
        clients=clients,
        seed=seed,
        model=model,
        he=HEContext.create(),
        engine=engine,
    )


def summary_rows(histories: dict[str, FLHistory]) -> list[dict[str, Any]]:
    """The comparison table: accuracy, traffic and time, with the ratios to the baselines."""
    base = histories.get("plaintext")
    full = histories.get("fedhe_full")
    rows = []
    for m, h in histories.items():
        s = h.summary()
        size, sec = s["bytes/round"], s["s/round"]
        row = {
            "method": LABELS[m],
            "final acc": s["final acc"],
            "bytes/round": size,
            "s/round": sec,
            "x comm vs FedHE-Full": full.summary()["bytes/round"] / size if full else float("nan"),
            "x time vs FedHE-Full": full.summary()["s/round"] / sec if full else float("nan"),
            "x time vs plaintext": sec / base.summary()["s/round"] if base else float("nan"),
            "wall s/round": float(np.mean(h.wall)),
            "sent coords": s["sent coords"],
            "plaintext-exposed %": 100.0 * _exposed(h),
            "compute s": float(np.mean(h.t_compute)),
            "encrypt s": float(np.mean(h.t_encrypt)),
            "aggregate s": float(np.mean(h.t_aggregate)),
            "decrypt s": float(np.mean(h.t_decrypt)),
            "transfer s": float(np.mean(h.t_transfer)),
        }
        rows.append(row)
    return rows


def _exposed(h: FLHistory) -> float:
    """Fraction of the uploaded update coordinates that travelled in plaintext."""
    plain = sum(m["plain_bytes"] for m in h.manifests if m["dir"] == "up" and m["kind"] == "train")
    return plain / 4 / max(1, h.n_shared * len(h.acc) * len(h.final))


def _plot(cases: dict[str, dict[str, FLHistory]], path: Path) -> Path:
    fig, axes = figure(len(cases), 2, size=(10, 3.6 * len(cases)))
    axes = np.atleast_2d(axes)
    for row, (name, histories) in zip(axes, cases.items(), strict=True):
        for m, h in histories.items():
            row[0].plot(np.arange(1, len(h.acc) + 1), h.acc, marker="o", ms=3, label=LABELS[m])
        row[0].set(xlabel="round", ylabel="test accuracy", title=name)
        row[0].legend(fontsize=7)
        names = [LABELS[m] for m in histories]
        mb = [h.summary()["bytes/round"] / 1e6 for h in histories.values()]
        row[1].barh(names, mb, color="tab:blue")
        for y, value in enumerate(mb):
            row[1].text(value, y, f" {value:.3g}", va="center", fontsize=7)
        row[1].set(xscale="log", xlabel="MB (10^6 bytes) per round, up + down", title=name)
        row[1].xaxis.set_minor_formatter(NullFormatter())
    return save_figure(fig, path)


def reproduce(
    *,
    quick: bool = False,
    seed: int = 0,
    out: str | Path,
    rounds: int | None = None,
    methods: tuple[str, ...] = METHODS,
    clients: int = 4,
    pretrain_epochs: int = 30,
    engine: str = "simulation",
) -> Report:
    """Run the comparison; print the table(s); write ``dictpfl.png`` into ``out``.

    Quick: case A, 8 rounds. Full: 20 rounds, case A and case B. ``rounds``, ``methods`` (case
    A's), ``clients`` and ``pretrain_epochs`` shrink the run for tests; ``engine`` is Flower's
    ``"simulation"`` engine or ``"inprocess"`` (see :func:`dictpfl.federated.run_methods`).
    """
    check_choice("engine", "reproduce", engine, ENGINES)
    clients = check_int("clients", "reproduce", clients, low=2)
    out = Path(out)
    rounds = rounds or (8 if quick else 20)
    case_a, case_b = "A: MLP 64-256-256, digits", "B: MLP 64-128-128, noisy -> clean digits"
    b_methods = tuple(m for m in ("plaintext", "fedhe_full", "fedml_he", "dictpfl") if m in methods)
    cases: dict[str, dict[str, FLHistory]] = {}
    common = {
        "rounds": rounds,
        "clients": clients,
        "seed": seed,
        "pretrain_epochs": pretrain_epochs,
        "engine": engine,
    }
    print(f"case A: {len(methods)} methods on one Flower federation of {clients} clients")
    cases[case_a] = compare(methods, **common)
    if not quick:
        print(f"case B: {len(b_methods)} methods")
        cases[case_b] = compare(b_methods, **common, hidden=(128, 128), noise=0.5)
    tables, per_round, n_params = {}, {}, {}
    for name, histories in cases.items():
        rows = summary_rows(histories)
        print_table(rows, title=f"{name}, {rounds} rounds, seed {seed}")
        tables[name] = rows
        n_params[name] = next(iter(histories.values())).n_params
        per_round[name] = {
            m: {
                "acc": h.acc,
                "bytes_up": h.bytes_up,
                "bytes_down": h.bytes_down,
                "t_round": h.t_round,
                "wall": h.wall,
                "n_sent": h.n_sent,
                "n_shared": h.n_shared,
                "setup_bytes": h.setup_bytes,
            }
            for m, h in histories.items()
        }
    claims = [
        plaintext_time_claim(tables),
        fedhe_claim(tables, n_params, slots=4096),
        fedml_claim(tables),
        accuracy_claim(tables),
        ablation_claim(tables),
    ]
    settings = {
        "rounds": rounds,
        "clients": clients,
        "engine": engine,
        "methods": list(methods),
        "cases": {
            case_a: {"hidden": [256, 256], "noise": 0.0, "methods": list(methods)},
            **(
                {case_b: {"hidden": [128, 128], "noise": 0.5, "methods": list(b_methods)}}
                if not quick
                else {}
            ),
        },
        "data": "scikit-learn digits, 30 % public, 20 % test, Dirichlet(0.5) label skew",
        "pretrain_epochs": pretrain_epochs,
        "rank": 8,
        "prune_ratio": 0.7,
        "reactivation": 0.2,
        "decay": 0.5,
        "fedml_frac": 0.1,
        "local_epochs": 1,
        "lr": 1e-3,
        "batch_size": 32,
        "bandwidth_mbps": 100.0,
        "ckks": {"n": 8192, "coeff_bits": [60, 40, 40, 60], "scale_bits": 40},
    }
    return Report(
        claims=claims,
        tables=tables,
        figures=[_plot(cases, out / "dictpfl.png")],
        settings=settings,
        data={"per_round": per_round, "n_params": n_params},
    )
