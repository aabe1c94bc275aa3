r"""The dynamic pipeline of HBP: which group each global step trains, on which settings.

Group g with SP degree :math:`k_g` has :math:`R_g = n/k_g` data-parallel ranks on n devices; a
step of g takes :math:`R_g\cdot k_{acc}` packs and gives each rank :math:`k_{acc}` of them, by LPT
on the cost model (:func:`hbp.batching.balance_ranks`), after sorting the group's packs by
estimated time so that each step holds packs of similar cost. Every :class:`Batch` carries its
group's (sp, ckpt), so the trainer switches SP groups per batch (adaptive SP).

Curriculum over the :math:`S=\sum_g S_g` steps of an epoch, with :math:`W=\lceil wS\rceil`:
steps :math:`s<W` draw only from the shortest group (the next one if it runs out); afterwards
group g is drawn with probability :math:`\propto r_g\cdot f_g(s)`, where :math:`r_g` counts its
remaining steps (so all groups end together: interleaved through the epoch, shares proportional
to their remaining tokens) and :math:`f_g(s)=\min(1,(s-W+1)/W)` ramps the longer groups in
linearly (:math:`f=1` for the shortest).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from hbp.batching import lpt, ranks_checked, round_robin
from hbp.cost import CostModel, cost_model, stats_of
from hbp.data import nonempty_list, sample_lengths
from hbp.groups import GroupConfig
from hbp.packing import flat_packs
from paperkit import Described, check_int, check_real, describe, param_error

__all__ = ["Batch", "HBPScheduler"]


@dataclass(frozen=True)
class Batch:
    """One global step: its group index, settings and packs (lists of sample ids) per DP rank."""

    group: int
    sp: int
    ckpt: bool
    packs_per_rank: list[list[list[int]]]


class HBPScheduler:
    """Iterator over the :class:`Batch` es of one epoch (re-iterating starts the next epoch).

    Args:
        groups: the packing groups (sorted by packing length).
        packs_per_group: for each group, its packs (lists of sample indices).
        n_ranks: devices in total; each group's SP degree must divide it.
        curriculum_warmup: w, the share of the first steps drawn from the shortest group only.
        seed: seeds the shuffles and draws; epoch e uses ``seed + e``.
        lengths: sample lengths; with ``cost`` they drive the LPT balance (else packs are dealt
            round-robin).
        cost: the cost model of the balance (default ``CostModel.preset("8b")``).
        accum_steps: :math:`k_{acc}`, packs per rank per step (one int, or one per group).

    Every pack is a non-empty list of sample indices (into ``lengths`` when given); integer
    inputs, so NaN cannot occur; ``curriculum_warmup`` NaN is refused.

    >>> sched = HBPScheduler([GroupConfig(8)], [[[0], [1], [2]]], n_ranks=2)
    >>> [len(batch.packs_per_rank) for batch in sched]
    [2, 2]
    """

    def __init__(
        self,
        groups: Sequence[GroupConfig],
        packs_per_group: Sequence[Sequence[Sequence[int]]],
        n_ranks: int,
        curriculum_warmup: float = 0.1,
        seed: int = 0,
        *,
        lengths: Sequence[int] | np.ndarray | None = None,
        cost: CostModel | None = None,
        accum_steps: int | Sequence[int] = 1,
    ) -> None:
        owner = "HBPScheduler"
        self.n_ranks = ranks_checked(owner, n_ranks)
        nonempty_list("groups", owner, groups, "GroupConfig")
        if not all(isinstance(g, GroupConfig) for g in groups):
            raise param_error(
                "groups", owner, "a non-empty list of GroupConfig", describe(groups), cls=TypeError
            )
        if isinstance(packs_per_group, (str, bytes)) or not isinstance(packs_per_group, Sequence):
            raise param_error(
                "packs_per_group",
                owner,
                "a list of lists of packs",
                describe(packs_per_group),
                cls=TypeError,
            )
        if len(groups) != len(packs_per_group):
            raise param_error(
                "packs_per_group",
                owner,
                f"one list of packs per group ({len(groups)})",
                Described(f"{len(packs_per_group)} lists"),
            )
        for g in groups:
            if self.n_ranks % g.sp:
                raise param_error(
                    "n_ranks", owner, f"divisible by every SP degree (sp={g.sp})", n_ranks
                )
        self.curriculum_warmup = check_real(
            "curriculum_warmup", owner, curriculum_warmup, low=0, high=1, high_open=True
        )
        self.seed = check_int("seed", owner, seed, low=0)
        self.lengths = None if lengths is None else sample_lengths("lengths", owner, lengths)
        n = None if self.lengths is None else self.lengths.size
        for packs in packs_per_group:
            if not isinstance(packs, Sequence) or len(packs):
                flat_packs("packs_per_group", owner, packs, n)
        self.groups = list(groups)
        self.packs_per_group = [[list(p) for p in packs] for packs in packs_per_group]
        if isinstance(accum_steps, Sequence) and not isinstance(accum_steps, (str, bytes)):
            if len(accum_steps) != len(groups):
                raise param_error(
                    "accum_steps", owner, f"an int or {len(groups)} ints", list(accum_steps)
                )
            accum = list(accum_steps)
        else:
            accum = [accum_steps] * len(groups)
        self.accum_steps = [check_int("accum_steps", owner, k, low=1) for k in accum]
        self.cost = cost_model("cost", owner, cost) if cost is not None else CostModel.preset("8b")
        self.epoch = 0
        self.order = np.argsort([g.pack_len for g in self.groups], kind="stable")

    def packs_per_step(self, g: int) -> int:
        """:math:`R_g\\cdot k_{acc}`: packs one step of group g takes."""
        return self.n_ranks // self.groups[g].sp * self.accum_steps[g]

    def steps_per_group(self) -> list[int]:
        """:math:`S_g = \\lceil |packs_g| / (R_g k_{acc}) \\rceil`."""
        return [-(-len(p) // self.packs_per_step(g)) for g, p in enumerate(self.packs_per_group)]

    def __len__(self) -> int:
        return sum(self.steps_per_group())

    def set_epoch(self, epoch: int) -> None:
        """Select the epoch whose shuffles the next iteration uses (as DistributedSampler)."""
        self.epoch = check_int("epoch", "HBPScheduler.set_epoch", epoch, low=0)

    def group_sequence(self) -> list[int]:
        """The group of every step of the current epoch (the curriculum, without the packs)."""
        rng = np.random.default_rng(self.seed + self.epoch)
        remaining = np.asarray(self.steps_per_group(), dtype=np.float64)
        total = int(remaining.sum())
        warm = int(np.ceil(self.curriculum_warmup * total))
        shortest = int(self.order[0])
        sequence = []
        for s in range(total):
            if s < warm:
                g = next(int(g) for g in self.order if remaining[g] > 0)
            else:
                ramp = min(1.0, (s - warm + 1) / warm) if warm else 1.0
                weight = remaining * ramp
                weight[shortest] = remaining[shortest]
                if weight.sum() == 0:  # only long groups left at the very start of the ramp
                    weight = remaining.copy()
                g = int(rng.choice(len(weight), p=weight / weight.sum()))
            remaining[g] -= 1
            sequence.append(g)
        return sequence

    def _steps_of_group(self, g: int, rng: np.random.Generator) -> list[list[list[int]]]:
        """The packs of each step of group g, in the order the steps run.

        With lengths, packs are sorted by estimated time and consecutive ones share a step (so a
        step holds packs of similar cost and LPT can even them out), then the steps are shuffled;
        without lengths, the packs are shuffled.
        """
        packs = self.packs_per_group[g]
        k = self.packs_per_step(g)
        if self.lengths is None:
            order = rng.permutation(len(packs))
        else:
            group = self.groups[g]
            t, a = stats_of(self.lengths, packs)
            order = np.argsort(-self.cost.seconds(t, a, group.sp, group.ckpt), kind="stable")
        steps = [[packs[i] for i in order[s : s + k]] for s in range(0, len(packs), k)]
        if self.lengths is not None:
            steps = [steps[i] for i in rng.permutation(len(steps))]
        return steps

    def __iter__(self) -> Iterator[Batch]:
        rng = np.random.default_rng(self.seed + self.epoch + 1_000_003)
        steps = [iter(self._steps_of_group(g, rng)) for g in range(len(self.groups))]
        for g in self.group_sequence():
            step = next(steps[g])
            group = self.groups[g]
            n_dp = self.n_ranks // group.sp
            if self.lengths is None:
                ranks = round_robin(len(step), n_dp)
            else:
                ranks = lpt(step, self.lengths, n_dp, self.cost, group.sp, group.ckpt)
            yield Batch(g, group.sp, group.ckpt, [[step[i] for i in r] for r in ranks])
