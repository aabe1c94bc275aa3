r"""Packing samples into packs of at most ``pack_len`` tokens: :math:`\sum_{s\in P}\ell_s\le L`.

- :func:`naive_pack`: in data order, a new pack whenever the next sample does not fit.
- :func:`sorted_pack`: the same on samples sorted by length (length bucketing).
- :func:`greedy_fill`: HBP's GreedyFill. Open a pack with the longest remaining sample, then add
  the longest remaining sample that still fits until none fits (first-fit decreasing per bin).
  With ``balance="attn"`` the sample added is the one that keeps :math:`a(P)=\sum\ell^2` closest
  to the group's target mean :math:`\sum_s\ell_s^2/\lceil\sum_s\ell_s/L\rceil`.

Every function returns packs as lists of sample indices. GreedyFill works on the distinct
lengths with their multiplicities, and finds "the longest remaining length <= c" with a
union-find predecessor structure, so 10^6 samples pack in about a second.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from hbp.data import nonempty_list, sample_lengths
from paperkit import Described, check_choice, check_int, param_error

__all__ = ["flat_packs", "greedy_fill", "naive_pack", "sorted_pack"]


def flat_packs(
    name: str,
    owner: str,
    packs: Any,
    high: int | None,
    *,
    low: int = 0,
    what: str = "sample indices",
) -> np.ndarray:
    """The entries of ``packs`` (a list of non-empty lists of integers in ``[low, high)``, sample
    indices unless said; ``high=None``: no upper bound), flattened; the worded error for anything
    else (a float entry, an empty pack, an entry out of range)."""
    within = f">= {low}" if high is None else f"in [{low}, {high})"
    expected = f"a list of non-empty lists of {what} {within}"
    nonempty_list(name, owner, packs, f"packs ({what} {within})")
    if any(isinstance(p, (str, bytes)) or not isinstance(p, Sequence) for p in packs):
        raise param_error(
            name, owner, expected, Described("a list holding a non-list"), cls=TypeError
        )
    if any(len(p) == 0 for p in packs):
        raise param_error(name, owner, expected, Described("a list holding an empty pack"))
    flat = np.asarray([i for p in packs for i in p])
    if flat.dtype.kind not in "iu":
        raise param_error(
            name, owner, expected, Described(f"entries of dtype {flat.dtype}"), cls=TypeError
        )
    if flat.min() < low or (high is not None and flat.max() >= high):
        bad = int(flat.min()) if flat.min() < low else int(flat.max())
        raise param_error(name, owner, expected, Described(f"the entry {bad}"))
    return flat.astype(np.int64)


def _lengths_and_pack_len(
    lengths: Sequence[int] | np.ndarray, pack_len: int, owner: str
) -> np.ndarray:
    ell = sample_lengths("lengths", owner, lengths)
    pack_len = check_int("pack_len", owner, pack_len, low=1)
    if ell.max() > pack_len:
        raise param_error(
            "lengths", owner, f"at most 'pack_len' = {pack_len} tokens per sample", int(ell.max())
        )
    return ell


def _pack_in_order(ell: np.ndarray, order: np.ndarray, pack_len: int) -> list[list[int]]:
    packs: list[list[int]] = []
    current: list[int] = []
    used = 0
    for i in order.tolist():
        length = int(ell[i])
        if used + length > pack_len:
            packs.append(current)
            current, used = [], 0
        current.append(i)
        used += length
    packs.append(current)
    return packs


def naive_pack(lengths: Sequence[int] | np.ndarray, pack_len: int) -> list[list[int]]:
    """Fixed-length packing in data order (the naive baseline).

    ``lengths`` are positive integers (floats refused, so NaN cannot occur), each at most
    ``pack_len``.

    >>> naive_pack([6, 5, 4, 3, 2], 10)
    [[0], [1, 2], [3, 4]]
    """
    ell = _lengths_and_pack_len(lengths, pack_len, "naive_pack")
    return _pack_in_order(ell, np.arange(ell.size), int(pack_len))


def sorted_pack(lengths: Sequence[int] | np.ndarray, pack_len: int) -> list[list[int]]:
    """Length bucketing: sort by length (descending, stable), then pack consecutively.

    Same inputs as :func:`naive_pack`.

    >>> sorted_pack([2, 6, 3, 5, 4], 10)
    [[1], [3, 4], [2, 0]]
    """
    ell = _lengths_and_pack_len(lengths, pack_len, "sorted_pack")
    return _pack_in_order(ell, np.argsort(-ell, kind="stable"), int(pack_len))


class _Pool:
    """Remaining samples as counts per distinct length, with predecessor/successor queries."""

    def __init__(self, ell: np.ndarray) -> None:
        order = np.argsort(-ell, kind="stable")[::-1]  # ascending length, ties by index descending
        values, starts, counts = np.unique(ell[order], return_index=True, return_counts=True)
        self.order = order.tolist()
        self.value_list = values.tolist()
        self.start = starts.tolist()
        self.count = counts.tolist()
        m = len(self.value_list)
        self.down = list(range(m + 1))  # down[j + 1]: union-find, largest non-empty index <= j
        self.up = list(range(m + 1))  # up[j]: smallest non-empty index >= j (m = none)

    def _find(self, parent: list[int], j: int) -> int:
        root = j
        while parent[root] != root:
            root = parent[root]
        while parent[j] != root:
            parent[j], j = root, parent[j]
        return root

    def largest_at_most(self, cap: float) -> int:
        """Index of the largest remaining length <= cap, or -1."""
        j = bisect_right(self.value_list, cap) - 1
        return self._find(self.down, j + 1) - 1

    def smallest_at_least(self, low: float) -> int:
        """Index of the smallest remaining length >= low, or len(values)."""
        j = bisect_left(self.value_list, low)
        return self._find(self.up, j)

    def take(self, j: int, m: int) -> list[int]:
        """Remove ``m`` samples of length ``values[j]`` (lowest indices first); return them."""
        end = self.start[j] + self.count[j]
        taken = self.order[end - m : end][::-1]
        self.count[j] -= m
        if self.count[j] == 0:
            self.down[j + 1] = j
            self.up[j] = j + 1
        return taken


def greedy_fill(
    lengths: Sequence[int] | np.ndarray,
    pack_len: int,
    balance: Literal["attn"] | None = None,
) -> list[list[int]]:
    """The paper's GreedyFill packing; packs come out in the order they were opened.

    Same inputs as :func:`naive_pack`; ``balance`` is None or ``"attn"`` (see the module).

    >>> greedy_fill([6, 5, 4, 3, 2], 10)
    [[0, 2], [1, 3, 4]]
    """
    ell = _lengths_and_pack_len(lengths, pack_len, "greedy_fill")
    check_choice("balance", "greedy_fill", balance, (None, "attn"))
    L = int(pack_len)
    pool = _Pool(ell)
    values = pool.value_list
    target = float((ell.astype(np.float64) ** 2).sum()) / int(np.ceil(ell.sum() / L))
    packs: list[list[int]] = []
    remaining = int(ell.size)
    while remaining:
        j = pool.largest_at_most(L)
        pack = pool.take(j, 1)
        cap, attn = L - values[j], float(values[j]) ** 2
        while True:
            j = pool.largest_at_most(cap)
            if j < 0:
                break
            v = values[j]
            if balance is None:
                m = min(pool.count[j], cap // v)
            else:
                j, m = _closest_to_target(pool, cap, attn, target)
                v = values[j]
            pack += pool.take(j, m)
            cap -= m * v
            attn += m * float(v) ** 2
        remaining -= len(pack)
        packs.append(pack)
    return packs


def _closest_to_target(pool: _Pool, cap: int, attn: float, target: float) -> tuple[int, int]:
    """The length (index) that keeps a(P) closest to ``target``, and how many copies to add."""
    values = pool.value_list
    if attn >= target:  # every addition overshoots: the smallest one is closest
        j = pool.smallest_at_least(0)
        return j, min(pool.count[j], cap // values[j])
    ideal = (target - attn) ** 0.5
    below = pool.largest_at_most(min(ideal, cap))
    above = pool.smallest_at_least(ideal)
    candidates = [j for j in (below, above) if 0 <= j < len(values) and values[j] <= cap]
    j = min(candidates, key=lambda k: abs(attn + float(values[k]) ** 2 - target))
    v = values[j]
    fill = max(1, int((target - attn) // (v * v)))  # copies that stay below the target
    return j, min(pool.count[j], cap // v, fill)
