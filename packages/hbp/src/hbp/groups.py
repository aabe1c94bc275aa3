r"""Multi-level packing groups: which packing lengths, which sample goes where, which settings.

A group g has a packing length :math:`L_g`, an SP degree :math:`k_g` and a checkpointing flag.
Sample s goes to the smallest group with :math:`L_g \ge \ell_s`. For a group, the settings are the
cheapest (k, ckpt) whose longest pack :math:`L_g` fits in memory, where cheapest means the fewest
GPU-seconds per pack, :math:`k\cdot\mathrm{time}`: with a fixed number of GPUs, a degree-k group
trains :math:`n_{gpu}/k` packs at once, so the epoch takes
:math:`\sum_P k_{g(P)}\,\mathrm{time}(P) / n_{gpu}` when ranks are balanced.

:func:`select_groups` tries every subset G of the candidate lengths of size <= ``max_groups``
that holds a length >= max ℓ, packs every group with GreedyFill and keeps the G of the smallest
estimated epoch time (the paper's automatic selection of multi-level packing groups).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Any

import numpy as np
import torch

from hbp.cost import CostModel, cost_model, stats_of
from hbp.data import nonempty_list, positive_ints, sample_lengths
from hbp.packing import greedy_fill
from paperkit import Described, check_array, check_bool, check_int, param_error

__all__ = [
    "DEFAULT_CANDIDATES",
    "MAX_SUBSETS",
    "GroupConfig",
    "assign_to_groups",
    "best_settings",
    "select_groups",
]

#: Candidate packing lengths: 8K, 16K, 32K, 64K, 128K.
DEFAULT_CANDIDATES = (8192, 16384, 32768, 65536, 131072)
#: The most subsets of candidate lengths :func:`select_groups` prices (each packs every sample).
MAX_SUBSETS = 10_000


@dataclass(frozen=True)
class GroupConfig:
    """One packing group: its packing length, SP degree and gradient checkpointing.

    ``pack_len`` and ``sp`` are positive integers, ``ckpt`` a bool.

    >>> GroupConfig(16384, 2)
    GroupConfig(pack_len=16384, sp=2, ckpt=False)
    """

    pack_len: int
    sp: int = 1
    ckpt: bool = False

    def __post_init__(self) -> None:
        owner = "GroupConfig"
        object.__setattr__(self, "pack_len", check_int("pack_len", owner, self.pack_len, low=1))
        object.__setattr__(self, "sp", check_int("sp", owner, self.sp, low=1))
        object.__setattr__(self, "ckpt", check_bool("ckpt", owner, self.ckpt))


def _candidates(name: str, owner: str, values: Any) -> list[int]:
    """A non-empty list of positive integers, sorted without repeats."""
    return sorted(set(positive_ints(name, owner, values).tolist()))


def best_settings(
    pack_len: int,
    cost: CostModel,
    sp_options: Sequence[int] = (1, 2, 4, 8),
    avg_stats: tuple[float, float] | None = None,
) -> GroupConfig | None:
    """The cheapest (sp, ckpt) in GPU-seconds for packs of ``pack_len`` tokens (None: none fits).

    ``avg_stats`` = (t, a) of a typical pack (default: one sample of ``pack_len`` tokens, the
    most attention-heavy pack) prices the options; finite and non-negative (NaN refused).

    >>> best_settings(8192, CostModel.preset("8b"))
    GroupConfig(pack_len=8192, sp=1, ckpt=False)
    """
    owner = "best_settings"
    pack_len = check_int("pack_len", owner, pack_len, low=1)
    cost_model("cost", owner, cost)
    options = _candidates("sp_options", owner, sp_options)
    if avg_stats is None:
        t, a = float(pack_len), float(pack_len) ** 2
    else:
        stats = check_array("avg_stats", owner, avg_stats, shape=(2,), kind="real")
        if np.any(stats < 0):
            raise param_error("avg_stats", owner, "non-negative (t, a)", tuple(stats.tolist()))
        t, a = float(stats[0]), float(stats[1])
    return _best_settings(pack_len, cost, options, t, a)


def _best_settings(
    pack_len: int, cost: CostModel, sp_options: Sequence[int], t: float, a: float
) -> GroupConfig | None:
    best, best_cost = None, np.inf
    for sp in sp_options:
        for ckpt in (False, True):
            if not cost.fits(pack_len, sp, ckpt):
                continue
            gpu_seconds = sp * float(cost.seconds(t, a, sp, ckpt))
            if gpu_seconds < best_cost:
                best, best_cost = GroupConfig(int(pack_len), int(sp), ckpt), gpu_seconds
    return best


def assign_to_groups(
    lengths: Sequence[int] | np.ndarray | torch.Tensor, groups: Sequence[GroupConfig | int]
) -> torch.Tensor:
    """Index (LongTensor) of the smallest group whose packing length holds each sample.

    ``groups`` are :class:`GroupConfig` s or packing lengths (positive integers); ``lengths`` are
    positive integers, each at most the longest packing length (no NaN: floats are refused).

    >>> assign_to_groups([100, 20000, 9000], [GroupConfig(16384), GroupConfig(32768, 2)]).tolist()
    [0, 1, 0]
    """
    owner = "assign_to_groups"
    ell = sample_lengths("lengths", owner, lengths)
    nonempty_list("groups", owner, groups, "groups")
    sizes = np.asarray(
        [
            g.pack_len if isinstance(g, GroupConfig) else check_int("groups", owner, g, low=1)
            for g in groups
        ]
    )
    order = np.argsort(sizes, kind="stable")
    if ell.max() > sizes.max():
        raise param_error(
            "lengths",
            "assign_to_groups",
            f"at most the longest packing length {int(sizes.max())}",
            int(ell.max()),
        )
    slot = np.searchsorted(sizes[order], ell, side="left")
    return torch.from_numpy(order[slot].astype(np.int64))


def select_groups(
    lengths: Sequence[int] | np.ndarray,
    cost: CostModel,
    candidates: Sequence[int] = DEFAULT_CANDIDATES,
    max_groups: int = 3,
    sp_options: Sequence[int] = (1, 2, 4, 8),
) -> list[GroupConfig]:
    """The cheapest set of packing groups (sorted by length) for these samples.

    Every subset of ``candidates`` of at most ``max_groups`` lengths is priced (at most
    :data:`MAX_SUBSETS` subsets; more is refused before any packing). Integer inputs only (no
    NaN).
    """
    owner = "select_groups"
    ell = sample_lengths("lengths", owner, lengths)
    cost_model("cost", owner, cost)
    cands = _candidates("candidates", owner, candidates)
    max_groups = check_int("max_groups", owner, max_groups, low=1)
    subsets = sum(comb(len(cands), k) for k in range(1, min(max_groups, len(cands)) + 1))
    if subsets > MAX_SUBSETS:
        raise param_error(
            "max_groups",
            owner,
            f"small enough that at most {MAX_SUBSETS} subsets of the {len(cands)} 'candidates' "
            f"are priced (this one gives {subsets})",
            max_groups,
        )
    sp_options = _candidates("sp_options", owner, sp_options)
    if ell.max() > cands[-1]:
        raise param_error(
            "lengths", owner, f"at most the longest candidate {cands[-1]}", int(ell.max())
        )
    order = np.sort(ell)
    cache: dict[tuple[int, int], tuple[float, GroupConfig] | None] = {}

    def group_cost(lo: int, hi: int) -> tuple[float, GroupConfig] | None:
        if (lo, hi) not in cache:
            idx = slice(np.searchsorted(order, lo, "right"), np.searchsorted(order, hi, "right"))
            members = order[idx]
            if members.size == 0:
                cache[lo, hi] = (0.0, GroupConfig(hi, 1, False))
            else:
                t, a = stats_of(members, greedy_fill(members, hi))
                config = _best_settings(hi, cost, sp_options, t.mean(), a.mean())
                if config is None:
                    cache[lo, hi] = None
                else:
                    seconds = cost.seconds(t, a, config.sp, config.ckpt).sum()
                    cache[lo, hi] = (config.sp * float(seconds), config)
        return cache[lo, hi]

    best: tuple[float, list[GroupConfig]] | None = None
    for size in range(1, max_groups + 1):
        for subset in combinations(cands, size):
            if subset[-1] < ell.max():
                continue
            total, configs = 0.0, []
            for lo, hi in zip((0, *subset[:-1]), subset, strict=True):
                priced = group_cost(lo, hi)
                if priced is None:
                    break
                total += priced[0]
                configs.append(priced[1])
            else:
                if best is None or total < best[0]:
                    best = (total, configs)
    if best is None:
        raise param_error(
            "cost",
            "select_groups",
            "a model in which some packing length fits in memory",
            Described(f"no candidate of {cands} fits with sp in {tuple(sp_options)}"),
        )
    return best[1]
