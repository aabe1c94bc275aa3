r"""Benchmark: simulated KC-steps per second of :class:`flyolf.FlyCircuit` on the CPU.

``flyolf bench [--quick]`` times one forward pass (PN spikes, synapses, KC LIF + SFA + APL;
both gains on) for batch sizes B and KC counts N, with the PN -> KC input as a dense matmul per
step (``dense``) or event-driven through ``torch.sparse`` (``sparse``: only the PN spikes of the
step, a few percent of the PNs, are summed). One :class:`paperkit.Measurement` per (impl, B, N),
size = B*N; reported: KC-steps per second, the log-log slope of seconds against B*N (linear
cost: slope 1) and the dense/sparse time ratio: dense and sparse run in alternating rounds and the
ratio is the median of same-round ratios, with its interquartile range.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from flyolf.circuit import FlyCircuit
from flyolf.config import CircuitConfig
from flyolf.odors import make_odor_task
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

#: Batch sizes, KC counts and seconds per timing of the quick (True) and full (False) runs.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"batches": [64, 256], "n_kcs": [1000, 2000], "min_time": 0.0, "min_repeats": 2},
    False: {
        "batches": [64, 256, 1024],
        "n_kcs": [1000, 2000, 4000],
        "min_time": 0.0,
        "min_repeats": 3,
    },
}
IMPLS = ("dense", "sparse")
#: Accepted band of the scaling slope for "linear".
LINEAR = (0.8, 1.2)


def bench(*, quick: bool = False, device: str = "cpu", out: Path) -> Report:
    """Run the benchmark (module docstring) at the sizes of ``RUNS[quick]``."""
    run = RUNS[bool(quick)]
    base = CircuitConfig(w_pk=0.0019, g_li=0.0014, g_sfa=0.16)  # about the calibrated gains
    rows, table = [], []
    jobs = [(B, N) for B in run["batches"] for N in run["n_kcs"]]
    for B, N in progress(jobs, "B x N_kc"):
        task = make_odor_task(n_classes=8, n_train=1, n_test=-(-B // 8), noise=0.5)
        X = task.X_test[:B]
        circuits = {
            impl: FlyCircuit(base.replace(n_kc=N), sparse=impl == "sparse") for impl in IMPLS
        }
        found = measure_interleaved(
            {impl: (lambda c=c, x=X: c(x)) for impl, c in circuits.items()},
            B * N,
            device=device,
            min_time=run["min_time"],
            min_repeats=run["min_repeats"],
            warmup=1,
            params={"B": B, "n_kc": N},
        )
        rows += found
        times = {m.impl: m.seconds for m in found}
        same_round = ratio_spread(found[0], found[1])  # dense / sparse, round by round
        steps = base.steps + base.pre_steps
        table.append(
            {
                "B": B,
                "n_kc": N,
                "dense_s": times["dense"],
                "sparse_s": times["sparse"],
                "dense_Mkc_steps_per_s": B * N * steps / times["dense"] / 1e6,
                "sparse_Mkc_steps_per_s": B * N * steps / times["sparse"] / 1e6,
                "dense/sparse": same_round[0],
                "dense/sparse IQR": f"{same_round[1]:.2f}-{same_round[2]:.2f}",
            }
        )
    fit = scaling(rows, baseline="dense")
    png = plot_scaling(
        rows, Path(out) / "scaling.png", title="FlyCircuit forward", xlabel="B * N_kc"
    )
    print_table(table, title=f"FlyCircuit forward on {device} ({torch.get_num_threads()} threads)")
    slopes = {impl: fit[impl]["slope"] for impl in IMPLS}
    linear = all(LINEAR[0] <= s <= LINEAR[1] for s in slopes.values())
    ratio = [r["dense/sparse"] for r in table]
    claims = [
        Claim(
            "The simulation cost grows linearly with trials x KCs (vectorised, no per-neuron loop)",
            paper="performance target: linear scaling in B and N_kc",
            measured=", ".join(f"{k} slope {v:.2f}" for k, v in slopes.items()),
            verdict="held" if linear else "not held",
            why=f"log-log slope of seconds against B*N_kc within {LINEAR}",
        ),
        Claim(
            "Event-driven sparse PN -> KC input is faster than the dense matmul",
            paper="performance target: dense vs torch.sparse input compared",
            measured=f"dense/sparse time ratio {min(ratio):.2f}-{max(ratio):.2f} "
            f"(largest: {ratio[-1]:.2f})",
            verdict="held" if ratio[-1] > 1.1 else ("partly" if ratio[-1] > 0.9 else "not held"),
            why="median of same-round ratios (dense and sparse timed in alternating rounds); "
            "> 1.1 at the largest size counts as faster; the KC update dominates both",
        ),
    ]
    return Report(
        claims=claims,
        tables={"throughput": table},
        figures=[png],
        settings={**run, "steps": steps, "threads": torch.get_num_threads()},
        measurements=rows,
        data={"scaling": fit},
    )
