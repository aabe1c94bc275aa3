"""Data-parallel epochs of TinyCausalLM under packing plans: ``torchrun -m hbp.train``.

Every rank builds the same heavy-tailed samples and the same epoch plans
(:func:`hbp.measured.plan_steps`), trains one epoch per plan on its share of each step and
all-reduces the gradients (Ave-Token loss, AdamW). The process group comes from the standard
``env://`` rendezvous that ``torchrun`` sets (``MASTER_ADDR``, ``MASTER_PORT``, ``RANK``,
``WORLD_SIZE``); without it the command trains in one process. Rank 0 writes the per-plan
summary (:func:`summarise`) as JSON. :func:`hbp.measured.measured_epochs` launches this module
with ``torchrun --standalone``::

    torchrun --standalone --nproc-per-node 2 -m hbp.train --n-samples 1000 --out epochs.json
    # two machines: the same command on each, --node-rank 0 on HOST and 1 on the other
    torchrun --nnodes 2 --node-rank 0 --nproc-per-node 4 --master-addr HOST --master-port 29500 \\
        -m hbp.train --n-samples 4000 --out epochs.json
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path

import numpy as np
import torch
import torch.distributed as dist

from hbp.collate import pack_collate
from hbp.cost import CostModel
from hbp.loss import ave_token_loss
from hbp.measured import PLANS, plan_steps, scaled_lengths
from hbp.model import TinyCausalLM
from paperkit import check_int

__all__ = ["VOCAB", "epoch_problem", "main", "summarise", "train_plans"]

VOCAB, DIM, DEPTH, HEADS = 64, 64, 2, 4


def epoch_problem(n_samples: int, pack_len: int, seed: int) -> tuple[np.ndarray, list]:
    """The lengths (:func:`~hbp.measured.scaled_lengths`) and random token samples of an epoch
    (``n_samples >= 1``, ``pack_len >= 4``, ``seed >= 0``)."""
    n_samples = check_int("n_samples", "epoch_problem", n_samples, low=1)
    seed = check_int("seed", "epoch_problem", seed, low=0)
    lengths = scaled_lengths(n_samples, pack_len, seed)
    rng = np.random.default_rng(seed)
    return lengths, [torch.from_numpy(rng.integers(0, VOCAB, size=int(m))) for m in lengths]


def _world() -> tuple[int, int]:
    if dist.is_available() and dist.is_initialized():
        return dist.get_rank(), dist.get_world_size()
    return 0, 1


def train_plans(plans: dict[str, list], samples: list[torch.Tensor]) -> dict[str, dict]:
    """One timed epoch per plan on this rank, in the current process group (or alone).

    ``plans[name][s][rank]`` lists the packs (sample ids) of ``rank`` at step ``s``. A step: this
    rank runs its packs (forward, backward with the Ave-Token loss over the step's global token
    count), the gradients are averaged with ``all_reduce`` and AdamW steps; the step's first
    repetition is a warm-up and is not recorded. Returns per plan the rank's compute seconds,
    step wall seconds (barrier to barrier) and summed loss per step.
    """
    rank, world = _world()
    together = world > 1
    results = {}
    max_len = max(int(s.numel()) for s in samples)
    for name, steps in plans.items():
        torch.manual_seed(0)
        model = TinyCausalLM(VOCAB, DIM, DEPTH, HEADS, max_len=max_len)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
        compute, wall, losses = [], [], []
        for s, step in enumerate([steps[0], *steps]):  # the first step again: a warm-up
            n_glob = sum(int(samples[i].numel()) - 1 for r in step for p in r for i in p)
            if together:
                dist.barrier()
            tic = time.perf_counter()
            loss_sum = 0.0
            for pack in step[rank]:
                batch = pack_collate([samples[i] for i in pack])
                loss = ave_token_loss(model.token_loss(batch), batch.loss_mask, n_glob, world)
                loss.backward()
                loss_sum += float(loss.detach())
            busy = time.perf_counter() - tic
            for p in model.parameters():
                if p.grad is None:
                    p.grad = torch.zeros_like(p)
                if together:
                    dist.all_reduce(p.grad)
                p.grad /= world
            opt.step()
            opt.zero_grad(set_to_none=True)
            if together:
                dist.barrier()
            if s > 0:
                compute.append(busy)
                wall.append(time.perf_counter() - tic)
                losses.append(loss_sum)
        results[name] = {"compute": compute, "wall": wall, "loss": losses}
    return results


def summarise(per_rank: list[dict[str, dict]]) -> dict[str, dict[str, float]]:
    """Per plan: epoch seconds (sum over steps of the slowest rank's step), steps, the measured
    attention balance ratio ABR = 1 − mean/max of the ranks' compute per step (averaged over
    steps), compute seconds summed over ranks, rank 0's mean step loss, speed-up vs naive."""
    rows = {}
    for name in per_rank[0]:
        compute = np.array([r[name]["compute"] for r in per_rank])  # (ranks, steps)
        wall = np.max([r[name]["wall"] for r in per_rank], axis=0)
        abr = 1.0 - compute.mean(axis=0) / compute.max(axis=0)
        rows[name] = {
            "epoch s": float(wall.sum()),
            "steps": int(wall.size),
            "mean ABR (measured)": float(abr.mean()),
            "compute s (sum over ranks)": float(compute.sum()),
            "mean step loss": float(np.mean(per_rank[0][name]["loss"])),
        }
    for name in rows:
        rows[name]["speed-up vs naive"] = rows["naive"]["epoch s"] / rows[name]["epoch s"]
    return rows


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m hbp.train",
        description="Timed data-parallel epochs of TinyCausalLM under the naive, sorted and HBP "
        "plans; data-parallel when launched by torchrun.",
    )
    p.add_argument("--n-samples", type=int, default=600)
    p.add_argument("--pack-len", type=int, default=1024)
    p.add_argument("--accum", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cost", type=Path, default=None, help="JSON of a CostModel (default: 8b)")
    p.add_argument("--backend", default="gloo")
    p.add_argument("--out", type=Path, default=None, help="JSON summary, written by rank 0")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m hbp.train`` and ``torchrun -m hbp.train``."""
    args = _parser().parse_args(argv)
    cost = (
        CostModel(**json.loads(args.cost.read_text()))
        if args.cost is not None
        else CostModel.preset("8b")
    )
    distributed = int(os.environ.get("WORLD_SIZE", "1")) > 1
    torch.set_num_threads(1)  # one core per process: the ranks' times stay comparable
    if distributed:
        dist.init_process_group(args.backend, init_method="env://")
    try:
        world = _world()[1]
        lengths, samples = epoch_problem(args.n_samples, args.pack_len, args.seed)
        plans = {p: plan_steps(p, lengths, args.pack_len, world, args.accum, cost) for p in PLANS}
        mine = train_plans(plans, samples)
        per_rank = [mine]
        if distributed:
            per_rank = [None] * world
            dist.all_gather_object(per_rank, mine)
        if _world()[0] == 0:
            summary = {
                "world_size": world,
                "n_samples": args.n_samples,
                "pack_len": args.pack_len,
                "tokens": int(lengths.sum()),
                "cost": asdict(cost),
                "plans": summarise(per_rank),
            }
            for name, row in summary["plans"].items():
                print(f"{name}: epoch {row['epoch s']:.3f} s, ABR {row['mean ABR (measured)']:.3f}")
            if args.out is not None:
                args.out.parent.mkdir(parents=True, exist_ok=True)
                args.out.write_text(json.dumps(summary, indent=1))
    finally:
        if distributed:
            dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
