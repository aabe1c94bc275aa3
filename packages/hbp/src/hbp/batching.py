r"""Balanced batching: assign the packs of one step to R data-parallel ranks.

:func:`balance_ranks` is LPT (longest processing time first, Graham 1969): packs in decreasing
estimated time, each onto the currently least-loaded rank (a heap). Its makespan is at most
:math:`(4/3 - 1/(3R))\,\mathrm{OPT}`. Since a pack's time is dominated by attention,
:math:`c_{attn}\sum\ell^2`, this balances attention FLOPs across ranks (the paper's
attention-balanced batching).
:func:`round_robin` deals packs in order, the baseline.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from typing import Any

import numpy as np

from hbp.cost import CostModel, cost_model, stats_of
from hbp.data import nonempty_list, sample_lengths
from hbp.packing import flat_packs
from paperkit import check_array, check_bool, check_int, check_memory, describe, param_error

__all__ = ["balance_ranks", "rank_loads", "round_robin"]

#: Bytes per rank of the assignment (a Python list and a heap entry).
_BYTES_PER_RANK = 160


def ranks_checked(owner: str, n_ranks: Any, name: str = "n_ranks") -> int:
    """A positive number of ranks whose per-rank lists fit in memory."""
    n_ranks = check_int(name, owner, n_ranks, low=1)
    return check_memory(name, owner, n_ranks, _BYTES_PER_RANK * n_ranks)


def balance_ranks(
    packs: Sequence[Sequence[int]],
    lengths: Sequence[int] | np.ndarray,
    n_ranks: int,
    cost: CostModel,
    *,
    sp: int = 1,
    ckpt: bool = False,
) -> list[list[int]]:
    """LPT assignment of pack indices to ``n_ranks`` ranks by ``cost.pack_time(pack, sp, ckpt)``.

    ``packs`` are non-empty lists of indices into ``lengths`` (positive integers; no NaN can
    occur).

    >>> balance_ranks([[0], [1], [2]], [9, 5, 4], 2, CostModel.preset("8b"))
    [[0], [1, 2]]
    """
    owner = "balance_ranks"
    ell = sample_lengths("lengths", owner, lengths)
    n_ranks = ranks_checked(owner, n_ranks)
    cost_model("cost", owner, cost)
    sp, ckpt = check_int("sp", owner, sp, low=1), check_bool("ckpt", owner, ckpt)
    flat_packs("packs", owner, packs, ell.size)
    return lpt(packs, ell, n_ranks, cost, sp, ckpt)


def lpt(
    packs: Sequence[Sequence[int]],
    ell: np.ndarray,
    n_ranks: int,
    cost: CostModel,
    sp: int,
    ckpt: bool,
) -> list[list[int]]:
    """:func:`balance_ranks` on checked arguments (the scheduler's inner loop)."""
    t, a = stats_of(ell, packs)
    times = cost.seconds(t, a, sp, ckpt)
    heap = [(0.0, r) for r in range(n_ranks)]
    ranks: list[list[int]] = [[] for _ in range(n_ranks)]
    for p in np.argsort(-times, kind="stable").tolist():
        load, r = heapq.heappop(heap)
        ranks[r].append(p)
        heapq.heappush(heap, (load + float(times[p]), r))
    return ranks


def round_robin(n_packs: int, n_ranks: int) -> list[list[int]]:
    """Pack i goes to rank i mod R (the unbalanced baseline); ``n_packs >= 0``, ``n_ranks >= 1``.

    >>> round_robin(5, 2)
    [[0, 2, 4], [1, 3]]
    """
    owner = "round_robin"
    n_packs = check_int("n_packs", owner, n_packs, low=0)
    check_memory("n_packs", owner, n_packs, 40 * n_packs)  # a Python int and a list slot each
    n_ranks = ranks_checked(owner, n_ranks)
    return [list(range(r, n_packs, n_ranks)) for r in range(n_ranks)]


def rank_loads(ranks: Sequence[Sequence[int]], per_pack: np.ndarray) -> np.ndarray:
    """Per-rank sums of a per-pack quantity (time, or a(P) for the ABR).

    ``ranks`` are lists of pack indices (a rank may hold none) into ``per_pack``, a 1-D array of
    finite values (NaN and inf refused).

    >>> rank_loads([[0, 2], [1], []], np.array([1.0, 2.0, 3.0])).tolist()
    [4.0, 2.0, 0.0]
    """
    owner = "rank_loads"
    values = check_array("per_pack", owner, per_pack, ndim=1)
    nonempty_list("ranks", owner, ranks, "lists of pack indices")
    if any(isinstance(r, (str, bytes)) or not isinstance(r, Sequence) for r in ranks):
        raise param_error(
            "ranks", owner, "a list of lists of pack indices", describe(ranks), cls=TypeError
        )
    flat = [i for r in ranks for i in r]
    if flat:
        flat_packs("ranks", owner, [flat], values.size, what="pack indices")
    return loads_of(ranks, values)


def loads_of(ranks: Sequence[Sequence[int]], per_pack: np.ndarray) -> np.ndarray:
    """:func:`rank_loads` on checked arguments (the simulator's inner loop)."""
    return np.asarray([float(per_pack[list(r)].sum()) if len(r) else 0.0 for r in ranks])
