r"""Measured data-parallel epochs of a small transformer on several gloo processes.

The simulated speed-ups of :mod:`hbp.simulator` come from a cost model; this module times real
training. ``world_size`` CPU processes (one thread each) train a :class:`~hbp.model.TinyCausalLM`
on the same heavy-tailed samples (``synth_lengths`` scaled down by ``131072 / pack_len``) under
three plans, all at SP degree 1:

- ``"naive"``: :func:`~hbp.packing.naive_pack` to ``pack_len`` in data order, packs dealt
  round-robin to ranks;
- ``"sorted"``: :func:`~hbp.packing.sorted_pack` (length bucketing), round-robin;
- ``"hbp"``: groups of packing lengths ``pack_len/4, pack_len/2, pack_len``, samples sent to
  their group, GreedyFill with attention balance, and the :class:`~hbp.schedule.HBPScheduler`
  (curriculum, steps of similar packs, LPT balance of ranks with a cost model calibrated on this
  CPU).

A step: every rank runs its ``accum`` packs (forward, backward with the Ave-Token loss, gradients
accumulated locally), then the gradients are averaged with ``all_reduce`` and AdamW steps. The
step lasts as long as the slowest rank; per-rank compute times give the measured attention
balance ratio ABR = 1 − mean/max.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from hbp.batching import ranks_checked, round_robin
from hbp.cost import CostModel, cost_model
from hbp.data import sample_lengths, synth_lengths
from hbp.dist import PROCESS_BYTES
from hbp.groups import GroupConfig, assign_to_groups
from hbp.packing import greedy_fill, naive_pack, sorted_pack
from hbp.schedule import HBPScheduler
from paperkit import check_choice, check_int, check_memory, param_error

__all__ = ["PLANS", "measured_epochs", "plan_steps", "scaled_lengths"]

PLANS = ("naive", "sorted", "hbp")


def scaled_lengths(n: int, pack_len: int, seed: int = 0) -> np.ndarray:
    """``synth_lengths`` (long-context SFT mix, up to 128K) shrunk to at most ``pack_len``."""
    pack_len = check_int("pack_len", "scaled_lengths", pack_len, low=4)
    ell = synth_lengths(n, seed=seed).astype(np.float64) * pack_len / 131072
    return np.clip(np.round(ell), 4, pack_len).astype(np.int64)


def _steps_round_robin(packs: list[list[int]], world_size: int, accum: int) -> list:
    k = world_size * accum
    steps = []
    for s in range(0, len(packs), k):
        step = packs[s : s + k]
        steps.append([[step[i] for i in r] for r in round_robin(len(step), world_size)])
    return steps


def plan_steps(
    plan: str, lengths: np.ndarray, pack_len: int, world_size: int, accum: int, cost: CostModel
) -> list[list[list[list[int]]]]:
    """The steps of one epoch: ``steps[s][rank]`` is the list of packs (sample ids) of a rank.

    ``plan`` is one of :data:`PLANS`; ``lengths`` positive integers of at most ``pack_len``
    (a multiple of 4 for the HBP groups); ``world_size`` and ``accum`` positive. Integer inputs:
    NaN cannot occur.

    >>> plan_steps("naive", [3, 4, 5, 6], 8, 2, 1, CostModel.preset("8b"))
    [[[[0, 1]], [[2]]], [[[3]], []]]
    """
    owner = "plan_steps"
    check_choice("plan", owner, plan, PLANS)
    lengths = sample_lengths("lengths", owner, lengths)
    pack_len = check_int("pack_len", owner, pack_len, low=4)
    if plan == "hbp" and pack_len % 4:
        raise param_error("pack_len", owner, "a multiple of 4 (the HBP plan's groups)", pack_len)
    if lengths.max() > pack_len:
        raise param_error("lengths", owner, f"at most 'pack_len' = {pack_len}", int(lengths.max()))
    world_size = ranks_checked(owner, world_size, "world_size")
    accum = check_int("accum", owner, accum, low=1)
    cost_model("cost", owner, cost)
    if plan == "naive":
        return _steps_round_robin(naive_pack(lengths, pack_len), world_size, accum)
    if plan == "sorted":
        return _steps_round_robin(sorted_pack(lengths, pack_len), world_size, accum)
    levels = [GroupConfig(pack_len // 4), GroupConfig(pack_len // 2), GroupConfig(pack_len)]
    member = assign_to_groups(lengths, levels).numpy()
    groups, packs, accum_per_group = [], [], []
    for g, group in enumerate(levels):
        ids = np.flatnonzero(member == g)
        if ids.size == 0:
            continue  # no sample of this length range
        groups.append(group)
        packs.append([ids[p].tolist() for p in greedy_fill(lengths[ids], group.pack_len, "attn")])
        # smaller groups hold shorter packs: more of them per step keeps a step's tokens even
        accum_per_group.append(accum * pack_len // group.pack_len)
    scheduler = HBPScheduler(
        groups, packs, world_size, lengths=lengths, cost=cost, accum_steps=accum_per_group
    )
    return [batch.packs_per_rank for batch in scheduler]


def measured_epochs(
    world_size: int = 2,
    n_samples: int = 600,
    pack_len: int = 1024,
    accum: int = 2,
    seed: int = 0,
    cost: CostModel | None = None,
) -> dict[str, Any]:
    """One epoch per plan on ``world_size`` gloo processes; times in seconds.

    ``cost`` is the model the HBP plan balances ranks with (calibrate it on this machine,
    e.g. ``hbp.reproduce.calibration``); the default is the 8B preset.
    Returns per plan: epoch wall time (sum of step times), steps, measured mean ABR, mean loss.

    Every argument is checked before any process starts: ``world_size`` processes must fit in
    memory (:data:`hbp.dist.PROCESS_BYTES` each), ``pack_len`` is a multiple of 4, the samples
    (at most ``n_samples * pack_len`` tokens) must fit too. NaN in training propagates to the
    reported loss.
    """
    owner = "measured_epochs"
    world_size = check_int("world_size", owner, world_size, low=1)
    check_memory("world_size", owner, world_size, PROCESS_BYTES * world_size)
    n_samples = check_int("n_samples", owner, n_samples, low=1)
    pack_len = check_int("pack_len", owner, pack_len, low=4)
    if pack_len % 4:
        raise param_error("pack_len", owner, "a multiple of 4", pack_len)
    check_memory("pack_len", owner, pack_len, 4 * 3 * pack_len * pack_len)  # one pack's scores
    check_memory("n_samples", owner, n_samples, 8 * n_samples * pack_len)
    accum = check_int("accum", owner, accum, low=1)
    seed = check_int("seed", owner, seed, low=0)
    cost = cost_model("cost", owner, cost) if cost is not None else CostModel.preset("8b")
    with tempfile.TemporaryDirectory() as tmp:
        cost_file, out = Path(tmp) / "cost.json", Path(tmp) / "epochs.json"
        cost_file.write_text(json.dumps(asdict(cost)))
        cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone"]
        cmd += ["--nproc-per-node", str(world_size), "-m", "hbp.train"]
        cmd += ["--n-samples", str(n_samples), "--pack-len", str(pack_len)]
        cmd += ["--accum", str(accum), "--seed", str(seed), "--cost", str(cost_file)]
        done = subprocess.run([*cmd, "--out", str(out)], capture_output=True, text=True)
        if done.returncode != 0:
            raise RuntimeError(f"torchrun -m hbp.train failed:\n{done.stderr[-4000:]}")
        summary = json.loads(out.read_text())
    return {key: summary[key] for key in ("world_size", "n_samples", "pack_len", "tokens", "plans")}
