r"""Balanced batching: assign the packs of one step to R data-parallel ranks.

:func:`balance_ranks` is LPT (longest processing time first, Graham 1969): packs in decreasing
estimated time, each onto the currently least-loaded rank (a heap). Its makespan is at most
:math:`(4/3 - 1/(3R))\,\mathrm{OPT}`. Since a pack's time is dominated by attention,
:math:`c_{attn}\sum\ell^2`, this balances attention FLOPs across ranks (the card's step 3).
:func:`round_robin` deals packs in order, the baseline.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

from hbp._checks import as_lengths, positive_int
from hbp.cost import CostModel, pack_stats
from paperkit import param_error

__all__ = ["balance_ranks", "rank_loads", "round_robin"]


def _check_packs(packs: Sequence[Sequence[int]], n: int, owner: str) -> None:
    for p in packs:
        if len(p) == 0 or min(p) < 0 or max(p) >= n:
            raise param_error("packs", owner, f"non-empty lists of sample indices < {n}", list(p))


def balance_ranks(
    packs: Sequence[Sequence[int]],
    lengths: Sequence[int] | np.ndarray,
    n_ranks: int,
    cost: CostModel,
    *,
    sp: int = 1,
    ckpt: bool = False,
) -> list[list[int]]:
    """LPT assignment of pack indices to ``n_ranks`` ranks by ``cost.pack_time(pack, sp, ckpt)``."""
    ell = as_lengths(lengths, "balance_ranks")
    n_ranks = positive_int("n_ranks", "balance_ranks", n_ranks)
    _check_packs(packs, ell.size, "balance_ranks")
    t, a = pack_stats(ell, packs)
    times = cost.time_from_stats(t, a, sp, ckpt)
    heap = [(0.0, r) for r in range(n_ranks)]
    ranks: list[list[int]] = [[] for _ in range(n_ranks)]
    for p in np.argsort(-times, kind="stable").tolist():
        load, r = heapq.heappop(heap)
        ranks[r].append(p)
        heapq.heappush(heap, (load + float(times[p]), r))
    return ranks


def round_robin(n_packs: int, n_ranks: int) -> list[list[int]]:
    """Pack i goes to rank i mod R (the unbalanced baseline)."""
    n_ranks = positive_int("n_ranks", "round_robin", n_ranks)
    return [list(range(r, n_packs, n_ranks)) for r in range(n_ranks)]


def rank_loads(ranks: Sequence[Sequence[int]], per_pack: np.ndarray) -> np.ndarray:
    """Per-rank sums of a per-pack quantity (time, or a(P) for the ABR)."""
    return np.asarray([float(per_pack[list(r)].sum()) if len(r) else 0.0 for r in ranks])
