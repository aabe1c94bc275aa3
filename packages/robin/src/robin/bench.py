r"""Efficiency: ``robin bench [--quick] [--device cpu|cuda]``.

(a) ROBI against sequential DDPM on the same (untrained) ROBIN network and beam: sequential
    network calls and wall time per rollout (T steps, K levels), in alternating rounds.
(b) ROBI against its window size W (divisors of K): calls T + W - 1 and wall time per rollout.
(c) AMG setup (:func:`robin.build_amg_hierarchy`, Ruge-Stüben) on beam meshes of
    N = 10^3, 10^4, 10^5 nodes; the log-log slope of seconds against N (near 1 = linear).
On a CUDA device (a) runs on a 10^4-node beam as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import torch

from paperkit import (
    Claim,
    Report,
    measure,
    measure_interleaved,
    plot_scaling,
    ratio_spread,
    scaling,
)
from robin.data import Trajectory, make_bending_beam_dataset
from robin.diffusion import ROBIN
from robin.hierarchy import build_amg_hierarchy
from robin.rollout import robi_rollout, sequential_rollout

__all__ = ["RUNS", "bench"]

#: Settings (quick / full): beam, rollout length T, levels K, AMG sizes, timing floor.
RUNS: dict[bool, dict[str, Any]] = {
    True: {"nx": 20, "ny": 4, "T": 10, "K": 5, "latent": 32, "amg_sizes": [1000, 10000],
           "min_time": 0.2, "gpu_nx": 1000},
    False: {"nx": 30, "ny": 5, "T": 40, "K": 10, "latent": 32,
            "amg_sizes": [1000, 10000, 100000], "min_time": 1.0, "gpu_nx": 1000},
}  # fmt: skip


def _grid(n: int, ny: int = 10) -> tuple[np.ndarray, np.ndarray]:
    nx = n // ny
    x, y = np.meshgrid(np.linspace(0, 10, nx), np.linspace(0, 1, ny), indexing="ij")
    idx = np.arange(nx * ny).reshape(nx, ny)
    a, b, c, d = idx[:-1, :-1], idx[1:, :-1], idx[1:, 1:], idx[:-1, 1:]
    cells = np.concatenate([np.stack([a, b, c], -1), np.stack([a, c, d], -1)]).reshape(-1, 3)
    edges = np.concatenate([cells[:, [0, 1]], cells[:, [1, 2]], cells[:, [2, 0]]]).T
    return np.stack([x.ravel(), y.ravel()], 1), edges


def _on(traj: Trajectory, device: str) -> Trajectory:
    return Trajectory(traj.mesh, traj.node_type.to(device), traj.u.to(device), traj.bc.to(device))


def _rollouts(cfg, nx, ny, device, min_time):
    traj = make_bending_beam_dataset(1, cfg["T"], nx=nx, ny=ny, seed=0)[0]
    torch.manual_seed(0)
    sim = ROBIN(latent=cfg["latent"], blocks_per_level=2, levels=3, num_steps=cfg["K"])
    sim.set_normalization([traj])
    sim = sim.to(device).eval()
    traj = _on(traj, device)
    T, K, n = cfg["T"], cfg["K"], traj.mesh.num_nodes
    calls = {
        "sequential DDPM": sequential_rollout(sim, traj, T)[1]["nfe"],
        "ROBI": robi_rollout(sim, traj, T)[1]["nfe"],
    }
    rows = measure_interleaved(
        {
            "sequential DDPM": lambda: sequential_rollout(sim, traj, T),
            "ROBI": lambda: robi_rollout(sim, traj, T),
        },
        n,
        device=device,
        case=f"rollout N={n}",
        memory=False,
        params={"T": T, "K": K},
        min_time=min_time,
        min_repeats=3,
        max_repeats=20,
    )
    return sim, traj, calls, rows


def bench(*, quick: bool = False, device: str = "cpu", out: str | Path = ".") -> Report:
    """Run the measurements of the module docstring; ratios from alternating rounds."""
    threads = torch.get_num_threads()
    if device == "cpu":
        torch.set_num_threads(1)  # small graphs: a second thread only adds barrier waits
    try:
        return _run(RUNS[bool(quick)], Path(out), device)
    finally:
        torch.set_num_threads(threads)


def _run(cfg: dict[str, Any], out: Path, device: str) -> Report:
    T, K = cfg["T"], cfg["K"]
    sim, traj, calls, rows = _rollouts(cfg, cfg["nx"], cfg["ny"], device, cfg["min_time"])
    speed, q1, q3 = ratio_spread(rows[0], rows[1])
    cpu_speed = rows[0].cpu_seconds / rows[1].cpu_seconds if rows[1].cpu_seconds else float("nan")
    tables: dict[str, list[dict[str, Any]]] = {
        "robi_vs_sequential": [
            {"impl": r.impl, "nodes": traj.mesh.num_nodes, "T": T, "K": K,
             "calls": calls[r.impl], "wall_s": r.seconds, "cpu_s": r.cpu_seconds}
            for r in rows
        ]
    }  # fmt: skip
    window_rows = []
    for w in [w for w in range(1, K + 1) if K % w == 0]:
        m = measure(
            f"ROBI W={w}",
            w,
            lambda w=w: robi_rollout(sim, traj, T, window=w),
            device=device,
            case="window",
            memory=False,
            min_time=cfg["min_time"] / 2,
            min_repeats=2,
            max_repeats=10,
        )
        window_rows.append(m)
    tables["window"] = [
        {"window": r.size, "calls": T + r.size - 1, "max_batch": r.size, "wall_s": r.seconds,
         "cpu_s": r.cpu_seconds, "wall_s_per_call": r.seconds / (T + r.size - 1)}
        for r in window_rows
    ]  # fmt: skip
    amg_rows = []
    for n in cfg["amg_sizes"]:
        pos, edges = _grid(n)
        amg_rows.append(
            measure(
                "ruge_stuben",
                n,
                lambda pos=pos, edges=edges: build_amg_hierarchy(pos, edges),
                case="amg",
                memory=False,
                min_time=cfg["min_time"] / 2,
                min_repeats=2,
                max_repeats=10,
            )  # fmt: skip
        )
    slope = scaling(amg_rows)["ruge_stuben"]["slope"]
    tables["amg_setup"] = [
        {"N": r.size, "seconds": r.seconds, "cpu_s": r.cpu_seconds, "levels": 3} for r in amg_rows
    ]
    measurements = [*rows, *window_rows, *amg_rows]
    claims = [
        Claim(
            "ROBI needs T + K - 1 sequential calls instead of T K",
            "one batched call per physical step (Sec. 3.3)",
            f"{calls['ROBI']} vs {calls['sequential DDPM']} (T = {T}, K = {K})",
            "held"
            if calls["ROBI"] == T + K - 1 and calls["sequential DDPM"] == T * K
            else "not held",
            "counted network calls",
        ),
        Claim(
            f"ROBI is faster than sequential DDPM ({device})",
            "up to ~10x faster inference than standard diffusion simulators",
            f"{speed:.2f}x wall (IQR {q1:.2f}-{q3:.2f}), {cpu_speed:.2f}x CPU time, "
            f"{traj.mesh.num_nodes} nodes",
            "held" if speed >= 0.5 * K else ("partly" if speed > 1 else "not held"),
            "held = at least half the call-count gain K; on a CPU a batched call of W frames "
            "costs about W single calls, so only partly",
        ),
        Claim(
            "AMG setup is near-linear in the mesh size",
            "Ruge-Stüben coarsening, O(N)",
            f"log-log slope {slope:.2f} over N = {cfg['amg_sizes']}",
            "held" if slope <= 1.3 else "not held",
            "pyamg ruge_stuben_solver, 3 levels, plus our edge and feature tensors",
        ),
    ]
    if device.startswith("cuda"):
        _, big, gcalls, grows = _rollouts(cfg, cfg["gpu_nx"], 10, device, cfg["min_time"])
        gspeed, g1, g3 = ratio_spread(grows[0], grows[1])
        measurements += grows
        tables["gpu_10k"] = [{"impl": r.impl, "nodes": big.mesh.num_nodes, "calls": gcalls[r.impl],
                              "wall_s": r.seconds} for r in grows]  # fmt: skip
        claims.append(
            Claim(
                "On a GPU ROBI is close to K times faster than sequential DDPM (10^4 nodes)",
                "up to ~10x faster inference",
                f"{gspeed:.2f}x wall (IQR {g1:.2f}-{g3:.2f}) at K = {K}",
                "held" if gspeed >= 0.5 * K else ("partly" if gspeed > 1 else "not held"),
                "held = at least half the call-count gain",
            )
        )
    figure = plot_scaling(amg_rows, out / "robin_bench.png", case="amg",
                          title="AMG setup (Ruge-Stüben)", xlabel="mesh nodes N")  # fmt: skip
    return Report(
        claims=claims,
        tables=tables,
        figures=[figure],
        settings={**cfg, "device": device, "network": "ROBIN latent 32, 2 blocks/level, 3 levels"},
        measurements=measurements,
    )
