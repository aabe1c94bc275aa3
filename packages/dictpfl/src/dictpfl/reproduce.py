"""Reproduction at small scale (card, "Reproduction"): ``dictpfl reproduce [--quick]``.

Case A (quick and full): digits, the MLP 64-256-256 pretrained on the public 30 % split with a
new 10-way head, K = 4 clients with Dirichlet(0.5) label skew, 8 rounds (quick) or 20 (full);
plaintext FedAvg, FedHE-Full, FedML-HE (10 %), DictPFL (r = 8, s = 0.7, β = 0.2) and the two
ablations (DePE only, PrME only), all through one set of server/client processes.
Case B (full only): a 2-layer width-128 MLP pretrained on noisy digits (σ = 0.5), fine-tuned on
clean digits; plaintext, FedHE-Full, FedML-HE and DictPFL.

Per method: final accuracy, MB per round (up + down, counted on the wire), modelled seconds per
round (CPU time of compute/encrypt/aggregate/decrypt plus transfer at 100 Mbit/s), the
reduction of communication and time against FedHE-Full, and the time relative to plaintext.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.ticker import NullFormatter

from dictpfl.data import make_federated_digits
from dictpfl.federated import METHODS, Federation, FLHistory, run_federated
from dictpfl.he import HEContext
from dictpfl.model import pretrained_mlp
from paperkit import figure, print_table, progress, save_figure

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
    hidden: tuple[int, ...] = (256, 256),
    noise: float = 0.0,
    federation: Federation,
    seed: int = 0,
    desc: str = "",
    pretrain_epochs: int = 30,
) -> dict[str, FLHistory]:
    """Run each method on the same data, pretrained model and CKKS keys."""
    data = make_federated_digits(clients=federation.clients, seed=seed, noise=noise)
    model = pretrained_mlp(data, hidden, epochs=pretrain_epochs, seed=seed)
    he = HEContext.create()
    return {
        m: run_federated(
            m,
            data,
            rounds=rounds,
            clients=federation.clients,
            seed=seed,
            model=model,
            federation=federation,
            he=he,
        )
        for m in progress(methods, desc)
    }


def summary_rows(histories: dict[str, FLHistory]) -> list[dict[str, Any]]:
    """The comparison table: accuracy, traffic and time, with the ratios to the baselines."""
    base = histories.get("plaintext")
    full = histories.get("fedhe_full")
    rows = []
    for m, h in histories.items():
        s = h.summary()
        mb, sec = s["MB/round"], s["s/round"]
        row = {
            "method": LABELS[m],
            "final acc": s["final acc"],
            "MB/round": mb,
            "s/round": sec,
            "x comm vs FedHE-Full": full.summary()["MB/round"] / mb if full else float("nan"),
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
    plain = sum(m["plain_bytes"] for m in h.manifests if m["dir"] == "up" and m["kind"] == "update")
    return plain / 4 / max(1, h.n_shared * len(h.acc) * len(h.final))


def _plot(cases: dict[str, dict[str, FLHistory]], path: Path) -> None:
    fig, axes = figure(len(cases), 2, size=(10, 3.6 * len(cases)))
    axes = np.atleast_2d(axes)
    for row, (name, histories) in zip(axes, cases.items(), strict=True):
        for m, h in histories.items():
            row[0].plot(np.arange(1, len(h.acc) + 1), h.acc, marker="o", ms=3, label=LABELS[m])
        row[0].set(xlabel="round", ylabel="test accuracy", title=name)
        row[0].legend(fontsize=7)
        names = [LABELS[m] for m in histories]
        mb = [h.summary()["MB/round"] for h in histories.values()]
        row[1].barh(names, mb, color="tab:blue")
        for y, value in enumerate(mb):
            row[1].text(value, y, f" {value:.3g}", va="center", fontsize=7)
        row[1].set(xscale="log", xlabel="MB per round (up + down, on the wire)", title=name)
        row[1].xaxis.set_minor_formatter(NullFormatter())
    save_figure(fig, path)


def reproduce(
    *, quick: bool = False, seed: int = 0, out: str | Path | None = None, rounds: int | None = None
) -> dict[str, Any]:
    """Run the comparison; print the table(s); write ``dictpfl.png`` into ``out``."""
    out = Path(out) if out is not None else Path(".")
    rounds = rounds or (8 if quick else 20)
    cases: dict[str, dict[str, FLHistory]] = {}
    with Federation(4) as fed:
        cases["A: MLP 64-256-256, digits"] = compare(
            METHODS, rounds=rounds, federation=fed, seed=seed, desc="case A"
        )
        if not quick:
            cases["B: MLP 64-128-128, noisy -> clean digits"] = compare(
                ("plaintext", "fedhe_full", "fedml_he", "dictpfl"),
                rounds=rounds,
                hidden=(128, 128),
                noise=0.5,
                federation=fed,
                seed=seed,
                desc="case B",
            )
    results: dict[str, Any] = {"rounds": rounds, "clients": 4, "cases": {}}
    for name, histories in cases.items():
        rows = summary_rows(histories)
        print_table(rows, title=f"{name}, {rounds} rounds, seed {seed}")
        results["cases"][name] = {
            "table": rows,
            "n_params": next(iter(histories.values())).n_params,
            "per_round": {
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
            },
        }
    _plot(cases, out / "dictpfl.png")
    return results
