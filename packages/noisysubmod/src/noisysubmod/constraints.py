r"""Constraints: cardinality, partition matroid and none, as partition matroids.

Every constraint here is a partition matroid: the ground set is split into blocks B_1..B_m with
capacities c_1..c_m, and S is independent iff |S cap B_j| <= c_j for every j. A cardinality
constraint is one block of capacity k; "unconstrained" is one block of capacity n.
Elements outside ``ground`` (a boolean mask) are never chosen: that is how the meta-algorithm
restricts a constraint to N \ P.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit import check_int, param_error

__all__ = [
    "Cardinality",
    "Constraint",
    "PartitionMatroid",
    "Unconstrained",
    "check_constraint",
]


class Constraint:
    """A partition matroid on {0, ..., n-1} (see the module docstring)."""

    def blocks_of(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """(block id of each element (n,), capacity of each block)."""
        raise NotImplementedError  # pragma: no cover - abstract

    def is_independent(self, mask: np.ndarray) -> bool:
        """Whether the set with boolean mask (n,) satisfies the constraint."""
        block, caps = self.blocks_of(len(mask))
        return bool(np.all(np.bincount(block[mask], minlength=len(caps)) <= caps))

    def can_add(self, mask: np.ndarray, ground: np.ndarray | None = None) -> np.ndarray:
        """Elements e notin S (in ``ground``) with S + e independent, as a mask (n,)."""
        block, caps = self.blocks_of(len(mask))
        used = np.bincount(block[mask], minlength=len(caps))
        ok = (used < caps)[block] & ~mask
        return ok if ground is None else ok & ground

    def max_weight_independent(self, weights: np.ndarray, ground: np.ndarray) -> np.ndarray:
        """The max-weight independent set (mask) for ``weights`` over ``ground``: greedy on the
        weights (optimal on a matroid); only strictly positive weights are taken."""
        block, caps = self.blocks_of(len(weights))
        chosen = np.zeros(len(weights), dtype=bool)
        used = np.zeros(len(caps), dtype=int)
        for e in np.argsort(-weights, kind="stable"):
            if weights[e] <= 0:
                break
            if ground[e] and used[block[e]] < caps[block[e]]:
                chosen[e] = True
                used[block[e]] += 1
        return chosen

    def random_base(
        self, n: int, rng: np.random.Generator, ground: np.ndarray | None = None
    ) -> np.ndarray:
        """A uniformly random feasible set of maximal size per block (mask (n,))."""
        block, caps = self.blocks_of(n)
        ground = np.ones(n, dtype=bool) if ground is None else ground
        chosen = np.zeros(n, dtype=bool)
        for j, cap in enumerate(caps):
            members = np.flatnonzero((block == j) & ground)
            take = min(int(cap), len(members))
            chosen[rng.choice(members, size=take, replace=False)] = True
        return chosen


class Cardinality(Constraint):
    """|S| <= k.

    >>> Cardinality(2).is_independent(np.array([True, True, False]))
    True
    """

    def __init__(self, k: int) -> None:
        self.k = check_int("k", "Cardinality", k, low=0, high=10**9)

    def blocks_of(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if self.k > n:
            raise param_error("k", "Cardinality", f"at most the ground-set size {n}", self.k)
        return np.zeros(n, dtype=int), np.array([self.k])

    def __repr__(self) -> str:
        return f"Cardinality({self.k})"


class PartitionMatroid(Constraint):
    """|S cap B_j| <= c_j for the blocks ``blocks`` (a block id per element, or a list of index
    lists covering the ground set) and capacities ``caps``.

    >>> M = PartitionMatroid([[0, 1], [2, 3]], [1, 2])
    >>> M.is_independent(np.array([True, True, False, False]))
    False
    """

    def __init__(self, blocks: Sequence[Sequence[int]] | np.ndarray, caps: Sequence[int]) -> None:
        owner = "PartitionMatroid"
        if isinstance(blocks, np.ndarray) and blocks.ndim == 1:
            block = blocks
        else:
            if not isinstance(blocks, (list, tuple)) or not blocks:
                raise param_error(
                    "blocks", owner, "a non-empty list of index lists", blocks, cls=TypeError
                )
            members = [np.asarray(b) for b in blocks]
            flat = np.concatenate(members) if members else np.array([])
            if flat.dtype.kind not in "iu":
                raise param_error(
                    "blocks", owner, "lists of integer indices", blocks, cls=TypeError
                )
            n = len(flat)
            if n == 0 or sorted(flat.tolist()) != list(range(n)):
                raise param_error("blocks", owner, "a partition of {0, ..., n-1}", blocks)
            block = np.empty(n, dtype=int)
            for j, b in enumerate(members):
                block[b] = j
        block = np.asarray(block)
        if block.dtype.kind not in "iu" or block.size == 0 or block.min() < 0:
            raise param_error("blocks", owner, "block ids >= 0 per element", blocks, cls=TypeError)
        caps_arr = np.asarray(caps)
        if caps_arr.ndim != 1 or caps_arr.dtype.kind not in "iu":
            raise param_error(
                "caps", owner, "a 1-D list of integer capacities", caps, cls=TypeError
            )
        sizes = np.bincount(block, minlength=len(caps_arr))
        if len(sizes) != len(caps_arr):
            raise param_error("caps", owner, f"one capacity per block ({len(sizes)})", caps)
        if np.any(caps_arr < 0) or np.any(caps_arr > sizes):
            raise param_error("caps", owner, "capacities in [0, block size] (feasible)", caps)
        self.block = block.astype(int)
        self.caps = caps_arr.astype(int)

    def blocks_of(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        if n != len(self.block):
            raise param_error(
                "blocks", "PartitionMatroid", f"a partition of {n} elements", len(self.block)
            )
        return self.block, self.caps

    def __repr__(self) -> str:
        return f"PartitionMatroid({len(self.caps)} blocks, caps={self.caps.tolist()})"


class Unconstrained(Constraint):
    """Every subset is feasible.

    >>> Unconstrained().is_independent(np.ones(5, dtype=bool))
    True
    """

    def blocks_of(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        return np.zeros(n, dtype=int), np.array([n])

    def __repr__(self) -> str:
        return "Unconstrained()"


def check_constraint(constraint: object, n: int, owner: str) -> Constraint:
    """``constraint`` if it is a :class:`Constraint` that fits a ground set of ``n`` elements;
    else the worded TypeError / ValueError naming ``constraint``."""
    if not isinstance(constraint, Constraint):
        raise param_error(
            "constraint",
            owner,
            "a Cardinality, PartitionMatroid or Unconstrained",
            type(constraint).__name__,
            cls=TypeError,
        )
    try:
        constraint.blocks_of(n)
    except ValueError as exc:
        raise param_error(
            "constraint", owner, f"a feasible constraint on {n} elements", repr(constraint)
        ) from exc
    return constraint
