r"""Multi-level packing groups: which packing lengths, which sample goes where, which settings.

A group g has a packing length :math:`L_g`, an SP degree :math:`k_g` and a checkpointing flag.
Sample s goes to the smallest group with :math:`L_g \ge \ell_s`. For a group, the settings are the
cheapest (k, ckpt) whose longest pack :math:`L_g` fits in memory, where cheapest means the fewest
GPU-seconds per pack, :math:`k\cdot\mathrm{time}`: with a fixed number of GPUs, a degree-k group
trains :math:`n_{gpu}/k` packs at once, so the epoch takes
:math:`\sum_P k_{g(P)}\,\mathrm{time}(P) / n_{gpu}` when ranks are balanced.

:func:`select_groups` tries every subset G of the candidate lengths of size <= ``max_groups``
that holds a length >= max ℓ, packs every group with GreedyFill and keeps the G of the smallest
estimated epoch time (card, step 1).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import torch

from hbp._checks import as_lengths, positive_int
from hbp.cost import CostModel, pack_stats
from hbp.packing import greedy_fill
from paperkit import Described, param_error

__all__ = [
    "DEFAULT_CANDIDATES",
    "GroupConfig",
    "assign_to_groups",
    "best_settings",
    "select_groups",
]

#: Candidate packing lengths 𝓛 of the card: 8K, 16K, 32K, 64K, 128K.
DEFAULT_CANDIDATES = (8192, 16384, 32768, 65536, 131072)


@dataclass(frozen=True)
class GroupConfig:
    """One packing group: its packing length, SP degree and gradient checkpointing."""

    pack_len: int
    sp: int = 1
    ckpt: bool = False

    def __post_init__(self) -> None:
        positive_int("pack_len", "GroupConfig", self.pack_len)
        positive_int("sp", "GroupConfig", self.sp)


def best_settings(
    pack_len: int,
    cost: CostModel,
    sp_options: Sequence[int] = (1, 2, 4, 8),
    avg_stats: tuple[float, float] | None = None,
) -> GroupConfig | None:
    """The cheapest (sp, ckpt) in GPU-seconds for packs of ``pack_len`` tokens (None: none fits).

    ``avg_stats`` = (t, a) of a typical pack (default: one sample of ``pack_len`` tokens, the
    most attention-heavy pack) prices the options.
    """
    t, a = avg_stats if avg_stats is not None else (pack_len, float(pack_len) ** 2)
    best, best_cost = None, np.inf
    for sp in sp_options:
        for ckpt in (False, True):
            if not cost.fits(pack_len, sp, ckpt):
                continue
            gpu_seconds = sp * float(cost.time_from_stats(t, a, sp, ckpt))
            if gpu_seconds < best_cost:
                best, best_cost = GroupConfig(int(pack_len), int(sp), ckpt), gpu_seconds
    return best


def assign_to_groups(
    lengths: Sequence[int] | np.ndarray | torch.Tensor, groups: Sequence[GroupConfig | int]
) -> torch.Tensor:
    """Index (LongTensor) of the smallest group whose packing length holds each sample."""
    ell = as_lengths(lengths, "assign_to_groups")
    sizes = np.asarray([g.pack_len if isinstance(g, GroupConfig) else g for g in groups])
    if sizes.size == 0 or np.any(sizes < 1):
        raise param_error("groups", "assign_to_groups", "a non-empty list of groups", list(groups))
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
    """The cheapest set of packing groups (sorted by length) for these samples."""
    ell = as_lengths(lengths, "select_groups")
    max_groups = positive_int("max_groups", "select_groups", max_groups)
    cands = sorted({positive_int("candidates", "select_groups", c) for c in candidates})
    if not cands or ell.max() > cands[-1]:
        raise param_error(
            "lengths", "select_groups", f"at most the longest candidate {cands[-1]}", int(ell.max())
        )
    if not sp_options or any(
        positive_int("sp_options", "select_groups", k) < 1 for k in sp_options
    ):
        raise param_error("sp_options", "select_groups", "a non-empty list of degrees", sp_options)
    order = np.sort(ell)
    cache: dict[tuple[int, int], tuple[float, GroupConfig] | None] = {}

    def group_cost(lo: int, hi: int) -> tuple[float, GroupConfig] | None:
        if (lo, hi) not in cache:
            idx = slice(np.searchsorted(order, lo, "right"), np.searchsorted(order, hi, "right"))
            members = order[idx]
            if members.size == 0:
                cache[lo, hi] = (0.0, GroupConfig(hi, 1, False))
            else:
                t, a = pack_stats(members, greedy_fill(members, hi))
                config = best_settings(hi, cost, sp_options, (t.mean(), a.mean()))
                if config is None:
                    cache[lo, hi] = None
                else:
                    seconds = cost.time_from_stats(t, a, config.sp, config.ckpt).sum()
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
