r"""Simulated epoch time of a packing strategy on n GPUs under a :class:`~hbp.cost.CostModel`.

Strategies (each step processes about ``global_tokens`` tokens):

- ``"padding"``: no packing; consecutive samples form a micro-batch padded to its longest one,
  :math:`b\cdot\max\ell \le L`, at SP degree ``sp`` (cost on the padded tokens).
- ``"naive"``: :func:`~hbp.packing.naive_pack` to ``pack_len`` in data order, SP degree ``sp``.
- ``"sorted"``: :func:`~hbp.packing.sorted_pack` (length bucketing), SP degree ``sp``.
- ``"hbp"``: :func:`~hbp.groups.select_groups`, GreedyFill with ``balance="attn"``, the
  :class:`~hbp.schedule.HBPScheduler` (curriculum, adaptive SP, LPT balance).

A step on a group of SP degree k has :math:`R=n/k` data-parallel ranks each training
:math:`k_{acc}=\max(1, \mathrm{round}(\text{global\_tokens}/(R L)))` packs; the step lasts as
long as its slowest rank, :math:`\max_r\sum_{P\in r}\mathrm{time}(P)`; the epoch sums its steps.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from hbp.batching import loads_of, ranks_checked, round_robin
from hbp.cost import CostModel, cost_model, stats_of
from hbp.data import positive_ints, sample_lengths
from hbp.groups import DEFAULT_CANDIDATES, GroupConfig, assign_to_groups, select_groups
from hbp.metrics import attention_balance_ratio, communication_ratio
from hbp.packing import greedy_fill, naive_pack, sorted_pack
from hbp.schedule import HBPScheduler
from paperkit import check_choice, check_int, param_error

__all__ = ["STRATEGIES", "SimulationReport", "simulate"]

STRATEGIES = ("padding", "naive", "sorted", "hbp")


@dataclass
class SimulationReport:
    """Outcome of :func:`simulate`: times in seconds, mean ABR over steps, CR, padding ratio."""

    strategy: str
    time_s: float
    abr: float
    cr: float
    padding: float
    n_steps: int
    groups: list[GroupConfig]
    step_times: np.ndarray = field(repr=False)
    step_abr: np.ndarray = field(repr=False)

    @property
    def hours(self) -> float:
        return self.time_s / 3600.0

    def summary(self) -> dict[str, float | int | str]:
        """The scalar fields, for tables and JSON."""
        return {
            "strategy": self.strategy,
            "hours": self.hours,
            "mean ABR": self.abr,
            "CR": self.cr,
            "padding": self.padding,
            "steps": self.n_steps,
            "groups": " ".join(
                f"{g.pack_len // 1024}K/sp{g.sp}{'/ckpt' if g.ckpt else ''}" for g in self.groups
            ),
        }


def _accum(global_tokens: int, n_dp: int, pack_len: int) -> int:
    return max(1, round(global_tokens / (n_dp * pack_len)))


def _fixed_length(
    strategy: str,
    ell: np.ndarray,
    n_gpus: int,
    cost: CostModel,
    global_tokens: int,
    pack_len: int,
    sp: int,
) -> SimulationReport:
    ckpt = not cost.fits(pack_len, sp, False)
    if strategy == "padding":
        packs = _padded_batches(ell, pack_len)
        width = np.asarray([len(p) for p in packs], dtype=np.float64)
        longest = np.asarray([ell[p].max() for p in packs], dtype=np.float64)
        t, a = width * longest, width * longest**2
        used_a = stats_of(ell, packs)[1]
    else:
        packs = naive_pack(ell, pack_len) if strategy == "naive" else sorted_pack(ell, pack_len)
        t, a = stats_of(ell, packs)
        used_a = a
    times = cost.seconds(t, a, sp, ckpt)
    n_dp = n_gpus // sp
    per_step = n_dp * _accum(global_tokens, n_dp, pack_len)
    step_times, step_abr = [], []
    for start in range(0, len(packs), per_step):
        idx = np.arange(start, min(start + per_step, len(packs)))
        ranks = [idx[r] for r in round_robin(idx.size, n_dp)]
        step_times.append(loads_of(ranks, times).max())
        step_abr.append(attention_balance_ratio(loads_of(ranks, used_a)))
    return SimulationReport(
        strategy=strategy,
        time_s=float(np.sum(step_times)),
        abr=float(np.mean(step_abr)),
        cr=communication_ratio(ell, np.full(ell.size, sp), cost.max_tokens(1, True)),
        padding=1.0 - ell.sum() / (len(packs) * pack_len),
        n_steps=len(step_times),
        groups=[GroupConfig(pack_len, sp, ckpt)],
        step_times=np.asarray(step_times),
        step_abr=np.asarray(step_abr),
    )


def _padded_batches(ell: np.ndarray, pack_len: int) -> list[list[int]]:
    """Consecutive samples while (count + 1) * max length stays within ``pack_len``."""
    batches, current, longest = [], [], 0
    for i, length in enumerate(ell.tolist()):
        if current and (len(current) + 1) * max(longest, length) > pack_len:
            batches.append(current)
            current, longest = [], 0
        current.append(i)
        longest = max(longest, length)
    batches.append(current)
    return batches


def _hbp(
    ell: np.ndarray,
    n_gpus: int,
    cost: CostModel,
    global_tokens: int,
    candidates: tuple[int, ...],
    seed: int,
) -> SimulationReport:
    groups = select_groups(ell, cost, candidates=candidates)
    for g in groups:
        if n_gpus % g.sp:
            raise param_error("n_gpus", "simulate", f"divisible by the SP degree {g.sp}", n_gpus)
    member = assign_to_groups(ell, groups).numpy()
    packs_per_group = []
    for g, group in enumerate(groups):
        ids = np.flatnonzero(member == g)
        packs = greedy_fill(ell[ids], group.pack_len, "attn") if ids.size else []
        packs_per_group.append([ids[p].tolist() for p in packs])
    accum = [_accum(global_tokens, n_gpus // g.sp, g.pack_len) for g in groups]
    scheduler = HBPScheduler(
        groups, packs_per_group, n_gpus, seed=seed, lengths=ell, cost=cost, accum_steps=accum
    )
    step_times, step_abr = [], []
    for batch in scheduler:
        stats = [stats_of(ell, r) for r in batch.packs_per_rank]
        times = [cost.seconds(t, a, batch.sp, batch.ckpt).sum() for t, a in stats]
        step_times.append(float(np.max(times)))
        step_abr.append(attention_balance_ratio([a.sum() for _, a in stats]))
    sp_of_sample = np.asarray([g.sp for g in groups])[member]
    slots = sum(len(p) * g.pack_len for p, g in zip(packs_per_group, groups, strict=True))
    return SimulationReport(
        strategy="hbp",
        time_s=float(np.sum(step_times)),
        abr=float(np.mean(step_abr)),
        cr=communication_ratio(ell, sp_of_sample, cost.max_tokens(1, True)),
        padding=1.0 - ell.sum() / slots,
        n_steps=len(step_times),
        groups=groups,
        step_times=np.asarray(step_times),
        step_abr=np.asarray(step_abr),
    )


def simulate(
    strategy: Literal["padding", "naive", "sorted", "hbp"],
    lengths: np.ndarray,
    n_gpus: int,
    cost: CostModel,
    global_tokens: int = 2**20,
    *,
    pack_len: int = 131072,
    sp: int = 8,
    candidates: tuple[int, ...] = DEFAULT_CANDIDATES,
    seed: int = 0,
) -> SimulationReport:
    """Simulate one epoch of ``strategy``; ``pack_len`` and ``sp`` set the fixed-length ones.

    ``lengths`` are positive integers (NaN cannot occur); ``n_gpus`` (whose per-rank lists must
    fit in memory), ``global_tokens``, ``pack_len`` and ``sp`` positive integers; ``candidates``
    the packing lengths HBP may choose from, the longest at least the longest sample.

    >>> from hbp.data import synth_lengths
    >>> r = simulate("naive", synth_lengths(500, seed=0), 8, CostModel.preset("8b"), sp=8)
    >>> r.strategy, r.cr, r.n_steps
    ('naive', 1.0, 3)
    """
    owner = "simulate"
    check_choice("strategy", owner, strategy, STRATEGIES)
    ell = sample_lengths("lengths", owner, lengths)
    n_gpus = ranks_checked(owner, n_gpus, "n_gpus")
    cost_model("cost", owner, cost)
    global_tokens = check_int("global_tokens", owner, global_tokens, low=1)
    pack_len = check_int("pack_len", owner, pack_len, low=1)
    sp = check_int("sp", owner, sp, low=1)
    cands = tuple(sorted(set(positive_ints("candidates", owner, candidates).tolist())))
    seed = check_int("seed", owner, seed, low=0)
    if strategy == "hbp":
        if ell.max() > cands[-1]:
            raise param_error(
                "lengths", owner, f"at most the longest candidate {cands[-1]}", int(ell.max())
            )
        return _hbp(ell, n_gpus, cost, global_tokens, cands, seed)
    if n_gpus % sp:
        raise param_error("sp", owner, f"a divisor of 'n_gpus' = {n_gpus}", sp)
    if ell.max() > pack_len:
        raise param_error("lengths", owner, f"at most 'pack_len' = {pack_len}", int(ell.max()))
    return _fixed_length(strategy, ell, n_gpus, cost, global_tokens, pack_len, sp)
