r"""The parent-array encoding of a hierarchy over ``n`` leaves.

A :class:`Tree` over ``n`` leaves has ``2n - 1`` nodes: leaves ``0..n-1`` first, then the internal
nodes ``0..n-2`` (stored at positions ``n..2n-2``). ``parents[i]`` for a leaf is the *internal
index* ``a_i ∈ {0..n-2}`` of its parent; ``parents[n + j]`` for internal node ``j ≥ 1`` is
``b_j ∈ {0..j-1}``; the root is internal node 0 with ``parents[n] = -1``. These are exactly the
categorical variables of TreeGen (one per node, with ``K = n - 1`` classes for a leaf and
``K_j = j`` for internal node ``j``); because a parent always has a smaller index than its
child, every such array is acyclic. A *valid* hierarchy is binary (every internal node has two
children) and physical (:func:`treegen.is_valid`); it is *canonical* when its internal nodes are
indexed by decreasing invariant mass (:func:`canonicalize`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, param_error
from treegen.checks import check_leaves
from treegen.physics import mass2

__all__ = ["Tree", "canonicalize"]


class Tree:
    """A parent configuration over ``n`` leaves (see the module docstring for the encoding).

    >>> t = Tree([1, 1, 0, -1, 0])  # ((leaf0, leaf1), leaf2): internal 1 holds leaves 0 and 1
    >>> t.n, t.is_binary, [bin(m) for m in t.leaf_masks()]
    (3, True, ['0b111', '0b11'])
    """

    __slots__ = ("_key", "parents")

    def __init__(self, parents: Any) -> None:
        arr = check_array("parents", "Tree", parents, ndim=1, kind="int")
        if arr.size < 3 or arr.size % 2 == 0:
            raise param_error("parents", "Tree", "of odd length 2n - 1 with n >= 2", arr.size)
        n = (arr.size + 1) // 2
        arr = arr.astype(np.int64)
        leaf_ok = ((arr[:n] >= 0) & (arr[:n] <= n - 2)).all()
        internal = arr[n + 1 :]
        int_ok = ((internal >= 0) & (internal < np.arange(1, n - 1))).all()
        if arr[n] != -1 or not leaf_ok or not int_ok:
            raise param_error(
                "parents",
                "Tree",
                "an encoding with parents[n] = -1, leaf parents in [0, n-2] and internal node j's "
                "parent in [0, j-1]",
                arr.tolist(),
            )
        arr.setflags(write=False)
        self.parents = arr
        self._key: tuple[int, ...] | None = None

    @property
    def n(self) -> int:
        """Number of leaves."""
        return (self.parents.size + 1) // 2

    def child_counts(self) -> np.ndarray:
        """Number of children of each internal node, ``(n - 1,)``."""
        n = self.n
        return np.bincount(
            np.concatenate([self.parents[:n], self.parents[n + 1 :]]), minlength=n - 1
        )

    @property
    def is_binary(self) -> bool:
        """Every internal node has exactly two children."""
        return bool((self.child_counts() == 2).all())

    def leaf_masks(self) -> np.ndarray:
        """Bitmask of the leaves below each internal node, ``(n - 1,)`` int64 (``n <= 62``)."""
        n = self.n
        masks = np.zeros(n - 1, dtype=np.int64)
        np.bitwise_or.at(masks, self.parents[:n], np.int64(1) << np.arange(n, dtype=np.int64))
        for j in range(n - 2, 0, -1):  # children have larger indices than their parents
            masks[self.parents[n + j]] |= masks[j]
        return masks

    def key(self) -> tuple[int, ...]:
        """The topology, independent of internal labels: the sorted leaf bitmasks of the internal
        nodes. Two labellings of one hierarchy have the same key."""
        if self._key is None:
            self._key = tuple(sorted(int(m) for m in self.leaf_masks()))
        return self._key

    def internal_momenta(self, leaves: np.ndarray) -> np.ndarray:
        """Four-momentum of each internal node: the sum of its leaves' momenta, ``(n - 1, 4)``."""
        n = self.n
        below = (self.leaf_masks()[:, None] >> np.arange(n)) & 1
        return below.astype(np.float64) @ leaves

    def to_networkx(self) -> Any:
        """A ``networkx.DiGraph`` with edges parent → child; nodes are positions ``0..2n-2``
        (leaves ``0..n-1``, internal node ``j`` at ``n + j``) with attribute ``kind``."""
        import networkx as nx

        n = self.n
        graph = nx.DiGraph()
        graph.add_nodes_from(range(n), kind="leaf")
        graph.add_nodes_from(range(n, 2 * n - 1), kind="internal")
        for child, parent in enumerate(self.parents):
            if parent >= 0:
                graph.add_edge(n + int(parent), child)
        return graph

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Tree) and np.array_equal(self.parents, other.parents)

    def __hash__(self) -> int:
        return hash(self.parents.tobytes())

    def __repr__(self) -> str:
        return f"Tree({self.parents.tolist()})"


def check_tree(name: str, owner: str, tree: Any, n: int | None = None) -> Tree:
    """``tree`` if it is a :class:`Tree` (over ``n`` leaves when given), else a worded error."""
    if not isinstance(tree, Tree):
        raise param_error(name, owner, "a treegen.Tree", type(tree).__name__, cls=TypeError)
    if n is not None and tree.n != n:
        raise param_error(name, owner, f"a Tree over the {n} leaves given", f"{tree.n} leaves")
    return tree


def relabel(tree: Tree, order: np.ndarray) -> Tree:
    """The same hierarchy with internal node ``order[k]`` renamed ``k`` (``order[0]`` the root)."""
    n = tree.n
    new_of_old = np.empty(n - 1, dtype=np.int64)
    new_of_old[order] = np.arange(n - 1)
    parents = tree.parents.copy()
    parents[:n] = new_of_old[tree.parents[:n]]
    internal = np.full(n - 1, -1, dtype=np.int64)
    old_par = tree.parents[n:]
    for new, old in enumerate(order):
        internal[new] = -1 if old_par[old] < 0 else new_of_old[old_par[old]]
    parents[n:] = internal
    return Tree(parents)


def canonicalize(tree: Tree, leaves: np.ndarray) -> Tree:
    r"""Relabel the internal nodes by decreasing invariant mass :math:`t = m^2` of their leaf sums.

    A parent's momentum is the sum of its children's, and for physical (future, time- or
    light-like) four-vectors :math:`\sqrt{t_{a+b}} \ge \sqrt{t_a} + \sqrt{t_b}`, so mass order puts
    every parent before its children; ties (a node with one child, round-off) are broken by the
    number of leaves below and then by the current index, so the result always satisfies the
    encoding. Idempotent; two labellings of one hierarchy give the same result. NaN/inf in
    ``leaves`` are refused.

    >>> import numpy as np
    >>> leaves = np.array([[5.0, 0, 0, 4], [5.0, 0, 0, -4], [2.0, 1, 0, 0]])
    >>> canonicalize(Tree([0, 0, 1, -1, 0]), leaves)  # internal 1 = {2}: one child, lighter
    Tree([0, 0, 1, -1, 0])
    """
    tree = check_tree("tree", "canonicalize", tree)
    leaves = check_leaves("leaves", "canonicalize", leaves)
    if leaves.shape[0] != tree.n:
        raise param_error("leaves", "canonicalize", f"an ({tree.n}, 4) array", leaves.shape)
    masks = tree.leaf_masks()
    t = mass2(tree.internal_momenta(leaves))
    count = np.array([bin(int(m)).count("1") for m in masks])
    order = np.lexsort((np.arange(tree.n - 1), -count, -t))
    if order[0] != 0:  # the root holds every leaf: only round-off can move it
        order = np.lexsort((np.arange(tree.n - 1), -count))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    par = tree.parents[tree.n + 1 :]
    if (rank[par] >= rank[1:]).any():  # round-off put a child first: order by leaf count
        order = np.lexsort((np.arange(tree.n - 1), -count))
    return relabel(tree, order)
