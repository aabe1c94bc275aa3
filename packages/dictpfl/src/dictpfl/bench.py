"""Benchmark: CKKS cost per round against the number of shared coordinates, and how the
DictPFL / FedHE-Full ratio grows with the model (card, "Performance").

(a) For P shared coordinates (4 clients): bytes one client uploads, CPU seconds to encrypt,
    to aggregate the 4 uploads on the server and to decrypt the result; the log-log slope of
    each against P (1: linear in the number of ciphertexts ⌈P/4096⌉).
(b) Width sweep of the MLP 64-w-w-10 (w = 128 … 1024, rank 8, s = 0.7, β = 0.2): parameters,
    DictPFL's shared coordinates P = r·(64 + w) + head and expected masked count (1 − s + sβ)P,
    ciphertexts per client per round for FedHE-Full and DictPFL, and the measured upload
    bytes of both (a vector of that length encrypted for real), with their ratio.
"""

from __future__ import annotations

import math
import time
from pathlib import Path
from typing import Any

import numpy as np

from dictpfl.he import HEContext
from paperkit import figure, loglog_slope, print_table, progress, save_figure

__all__ = ["bench", "he_costs", "width_sweep"]


def _cpu(fn, repeats: int = 3) -> tuple[float, Any]:
    """Minimum CPU time of ``repeats`` calls (other work on shared cores only adds time)."""
    best, out = math.inf, None
    for _ in range(repeats):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    return best, out


def he_costs(he: HEContext, P: int, clients: int = 4, seed: int = 0) -> dict[str, Any]:
    """Measured CKKS costs of one round with P shared coordinates."""
    server = HEContext.from_bytes(he.public())
    rng = np.random.default_rng(seed)
    vecs = [rng.uniform(-0.01, 0.01, P) for _ in range(clients)]
    t_enc, chunks = _cpu(lambda: he.encrypt(vecs[0]))
    uploads = [chunks] + [he.encrypt(v) for v in vecs[1:]]
    w = [1.0 / clients] * clients
    t_agg, agg = _cpu(lambda: server.weighted_sum(uploads, w))
    t_dec, dec = _cpu(lambda: he.decrypt(agg))
    err = float(np.max(np.abs(dec - np.mean(vecs, axis=0))))
    return {
        "P": P,
        "ciphertexts": len(chunks),
        "upload MB": sum(map(len, chunks)) / 1e6,
        "download MB": sum(map(len, agg)) / 1e6,
        "encrypt s": t_enc,
        "aggregate s": t_agg,
        "decrypt s": t_dec,
        "max abs err": err,
    }


def width_sweep(
    he: HEContext, widths: list[int], rank: int = 8, prune: float = 0.7, beta: float = 0.2
) -> list[dict[str, Any]]:
    """Upload bytes per client per round: FedHE-Full vs DictPFL, over MLP widths."""
    rows = []
    rng = np.random.default_rng(0)
    for w in progress(widths, "width sweep"):
        n_params = (64 * w + w) + (w * w + w) + (w * 10 + 10)
        shared = rank * (64 + w) + (w * 10 + 10)
        masked = math.ceil((1 - prune + prune * beta) * shared)
        full_bytes = sum(map(len, he.encrypt(rng.uniform(-0.01, 0.01, n_params))))
        dict_bytes = sum(map(len, he.encrypt(rng.uniform(-0.01, 0.01, masked))))
        rows.append(
            {
                "width": w,
                "params": n_params,
                "DictPFL shared P": shared,
                "DictPFL sent": masked,
                "coord ratio": n_params / masked,
                "FedHE-Full ct": he.n_chunks(n_params),
                "DictPFL ct": he.n_chunks(masked),
                "FedHE-Full MB": full_bytes / 1e6,
                "DictPFL MB": dict_bytes / 1e6,
                "x comm": full_bytes / dict_bytes,
            }
        )
    return rows


def bench(
    *,
    quick: bool = False,
    device: str = "cpu",
    out: str | Path | None = None,
    sizes: list[int] | None = None,
    widths: list[int] | None = None,
) -> dict[str, Any]:
    """Run (a) and (b); print both tables; write ``bench.png``. HE runs on the CPU only."""
    out = Path(out) if out is not None else Path(".")
    sizes = sizes or ([4096, 16384, 65536] if quick else [4096, 8192, 16384, 32768, 65536, 131072])
    widths = widths or ([128, 256, 512] if quick else [128, 256, 512, 1024])
    he = HEContext.create()
    costs = [he_costs(he, P) for P in progress(sizes, "HE cost vs P")]
    slopes = {
        key: loglog_slope(sizes, [r[key] for r in costs])
        for key in ("upload MB", "encrypt s", "aggregate s", "decrypt s")
    }
    print_table(costs, title="CKKS cost per round (4 clients, N = 8192, 4096 slots)")
    sweep = width_sweep(he, widths)
    slopes["coord ratio vs width"] = loglog_slope(widths, [r["coord ratio"] for r in sweep])
    slopes["x comm vs width"] = loglog_slope(widths, [r["x comm"] for r in sweep])
    print_table(sweep, title="width sweep, MLP 64-w-w-10, r = 8, s = 0.7, β = 0.2")
    print_table([slopes], title="log-log slopes (against P; the last two against the width)")
    fig, axes = figure(1, 2, size=(10, 3.6))
    ax0, ax1 = axes[0]
    for key in ("encrypt s", "aggregate s", "decrypt s"):
        ax0.loglog(sizes, [r[key] for r in costs], marker="o", label=f"{key} ({slopes[key]:.2f})")
    ax0.set(xlabel="shared coordinates P", ylabel="CPU seconds per round", title="CKKS cost")
    ax0.legend(fontsize=7)
    ax1.plot(widths, [r["x comm"] for r in sweep], marker="o", label="measured bytes")
    ax1.plot(widths, [r["coord ratio"] for r in sweep], marker="s", ls="--", label="coordinates")
    ax1.set(xlabel="MLP width", ylabel="FedHE-Full / DictPFL upload", title="reduction vs width")
    ax1.legend(fontsize=7)
    save_figure(fig, out / "bench.png")
    return {"device": "cpu", "he_costs": costs, "slopes": slopes, "width_sweep": sweep}
