r"""Exhaustive enumeration of binary hierarchies and the exact posterior :math:`p(T \mid x)`.

Over ``n`` leaves there are :math:`(2n-3)!!` binary hierarchies (1, 3, 15, 105, 945, 10395,
135135 for n = 2..8). A hierarchy is a set of ``n - 1`` *splits* (parent leaf-set ``P`` into
``A`` and ``P \ A``); there are :math:`(3^n - 2^{n+1} + 1)/2` distinct splits, and the
likelihood of every hierarchy is a sum of split terms. So the exact posterior
:math:`p(T \mid x) \propto L(T)` costs one pass over the :math:`2^n` leaf subsets (their summed
momenta and masses, by bitmask doubling), one vectorised pass over the splits, and a gather of
a fixed ``((2n-3)!!, n-1)`` table of split indices.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from paperkit import check_int, param_error
from treegen.checks import check_leaves
from treegen.ginkgo import GinkgoLike, check_model
from treegen.likelihood import split_logpdf
from treegen.physics import mass2
from treegen.tree import Tree, canonicalize

__all__ = ["count_trees", "enumerate_trees", "exact_posterior", "posterior_sample", "tree_table"]

#: Largest leaf count enumerated (135135 hierarchies).
N_MAX_ENUM = 8


def count_trees(n: int) -> int:
    """:math:`(2n-3)!!`, the number of binary hierarchies over ``n >= 2`` leaves.

    >>> [count_trees(n) for n in range(2, 9)]
    [1, 3, 15, 105, 945, 10395, 135135]
    """
    n = check_int("n", "count_trees", n, low=2, high=1000)
    return int(np.prod(np.arange(1, 2 * n - 2, 2, dtype=object)))


@dataclass(frozen=True)
class TreeTable:
    """Every hierarchy over ``n`` leaves as rows of split indices.

    ``split_parent``, ``split_a``, ``split_b``: leaf bitmasks of each split (``A`` holds the
    lowest leaf of ``P``); ``trees``: ``(count, n-1)`` split indices, the root split first;
    ``index``: topology key (sorted internal bitmasks, :meth:`Tree.key`) to row.
    """

    n: int
    split_parent: np.ndarray
    split_a: np.ndarray
    split_b: np.ndarray
    trees: np.ndarray
    index: dict[tuple[int, ...], int]

    def tree(self, row: int) -> Tree:
        """Row ``row`` as a :class:`Tree`, internal nodes ordered by (-leaf count, bitmask)."""
        n = self.n
        splits = self.trees[row]
        masks = self.split_parent[splits]
        counts = np.array([bin(int(m)).count("1") for m in masks])
        order = np.lexsort((masks, -counts))
        masks, splits = masks[order], splits[order]
        node_of = {int(m): j for j, m in enumerate(masks)}
        parents = np.empty(2 * n - 1, dtype=np.int64)
        parents[n] = -1
        for j, s in enumerate(splits):
            for child in (int(self.split_a[s]), int(self.split_b[s])):
                if child & (child - 1):
                    parents[n + node_of[child]] = j
                else:
                    parents[child.bit_length() - 1] = j
        return Tree(parents)


@functools.lru_cache(maxsize=N_MAX_ENUM + 1)
def tree_table(n: int) -> TreeTable:
    """The (cached) :class:`TreeTable` for ``2 <= n <= 8`` leaves."""
    n = check_int("n", "tree_table", n, low=2, high=N_MAX_ENUM)
    split_of: dict[tuple[int, int], int] = {}
    parent, left, right = [], [], []
    for p in range(1, 1 << n):
        if p & (p - 1) == 0:
            continue
        low = p & -p
        rest = p ^ low
        sub = rest
        while True:  # every A = low | (subset of rest), A != P
            a = low | sub
            if a != p:
                split_of[(p, a)] = len(parent)
                parent.append(p)
                left.append(a)
                right.append(p ^ a)
            if sub == 0:
                break
            sub = (sub - 1) & rest

    @functools.cache
    def trees_of(s: int) -> np.ndarray:
        """Every hierarchy over leaf set ``s``: ``(count, |s| - 1)`` split indices."""
        if s & (s - 1) == 0:
            return np.zeros((1, 0), dtype=np.int64)
        low = s & -s
        rest = s ^ low
        sub, blocks = rest, []
        while True:
            a = low | sub
            if a != s:
                ta, tb = trees_of(a), trees_of(s ^ a)
                head = np.full((ta.shape[0] * tb.shape[0], 1), split_of[(s, a)], dtype=np.int64)
                blocks.append(
                    np.concatenate(
                        [head, np.repeat(ta, tb.shape[0], 0), np.tile(tb, (ta.shape[0], 1))], 1
                    )
                )
            if sub == 0:
                break
            sub = (sub - 1) & rest
        return np.concatenate(blocks, 0)

    rows = trees_of((1 << n) - 1)
    split_parent = np.array(parent, dtype=np.int64)
    keys = np.sort(split_parent[rows], axis=1)
    index = {k: i for i, k in enumerate(map(tuple, keys.tolist()))}
    return TreeTable(
        n,
        split_parent,
        np.array(left, dtype=np.int64),
        np.array(right, dtype=np.int64),
        rows,
        index,
    )


def enumerate_trees(n: int) -> Iterator[Tree]:
    """Every binary hierarchy over ``n`` leaves (``2 <= n <= 8``), exactly :math:`(2n-3)!!` of
    them, each once; internal nodes in a leaf-independent order (decreasing leaf count, then
    leaf bitmask), so parents precede children. :func:`canonicalize` relabels one by mass.

    >>> [sum(1 for _ in enumerate_trees(n)) for n in (2, 3, 4)]
    [1, 3, 15]
    """
    table = tree_table(check_int("n", "enumerate_trees", n, low=2, high=N_MAX_ENUM))
    return (table.tree(row) for row in range(table.trees.shape[0]))


def subset_mass2(leaves: np.ndarray) -> np.ndarray:
    """Mass² of the summed momentum of every leaf subset, indexed by bitmask, ``(2^n,)``."""
    n = leaves.shape[0]
    mom = np.zeros((1 << n, 4))
    for b in range(n):
        mom[1 << b : 2 << b] = mom[: 1 << b] + leaves[b]
    return mass2(mom)


def tree_logliks(leaves: np.ndarray, model: GinkgoLike) -> np.ndarray:
    """:math:`\\log L(T)` of every row of :func:`tree_table` (vectorised), ``((2n-3)!!,)``."""
    n = leaves.shape[0]
    table = tree_table(n)
    t = subset_mass2(leaves)
    if (t[1 << np.arange(n)] > model.t_cut).any():
        return np.full(table.trees.shape[0], -np.inf)
    a, b = table.split_a, table.split_b
    inner_a = (a & (a - 1)) != 0
    inner_b = (b & (b - 1)) != 0
    scores = split_logpdf(t[a], t[b], t[table.split_parent], inner_a, inner_b, model)
    return scores[table.trees].sum(1)


def _posterior(leaves: np.ndarray, model: GinkgoLike, owner: str) -> np.ndarray:
    logl = tree_logliks(leaves, model)
    top = logl.max()
    if not np.isfinite(top):
        raise param_error("leaves", owner, "a jet with at least one valid hierarchy", "none")
    w = np.exp(logl - top)
    return w / w.sum()


def exact_posterior(leaves: np.ndarray, model: GinkgoLike) -> tuple[list[Tree], np.ndarray]:
    r"""Every hierarchy over the ``n <= 8`` leaves and :math:`p(T \mid x) = L(T) / \sum_T L(T)`.

    Trees are in :func:`enumerate_trees`'s order and labelling (use :meth:`Tree.key` to match a
    differently labelled tree); invalid ones have probability 0. NaN/inf leaves are refused, and
    leaves with no valid hierarchy (a leaf above ``t_cut``) raise ``ValueError``.

    >>> from treegen import GinkgoLike
    >>> model = GinkgoLike()
    >>> leaves, _ = model.sample_jets(1, seed=0, n_min=5, n_max=5)[0]
    >>> trees, probs = exact_posterior(leaves, model)
    >>> len(trees) == count_trees(leaves.shape[0]), bool(np.isclose(probs.sum(), 1.0))
    (True, True)
    """
    owner = "exact_posterior"
    leaves = check_leaves("leaves", owner, leaves, n_max=N_MAX_ENUM)
    model = check_model("model", owner, model)
    probs = _posterior(leaves, model, owner)
    table = tree_table(leaves.shape[0])
    return [table.tree(r) for r in range(table.trees.shape[0])], probs


def posterior_sample(
    leaves: np.ndarray, model: GinkgoLike, size: int, seed: int | np.random.Generator = 0
) -> list[Tree]:
    r"""``size`` independent draws from the exact posterior, canonically labelled (by mass).

    NaN/inf leaves are refused; ``n <= 8``.
    """
    owner = "posterior_sample"
    leaves = check_leaves("leaves", owner, leaves, n_max=N_MAX_ENUM)
    model = check_model("model", owner, model)
    size = check_int("size", owner, size, low=1, high=10**7)
    if not isinstance(seed, np.random.Generator):
        seed = np.random.default_rng(check_int("seed", owner, seed, low=0))
    probs = _posterior(leaves, model, owner)
    table = tree_table(leaves.shape[0])
    rows = seed.choice(probs.size, size=size, p=probs)
    cache: dict[int, Tree] = {}
    for r in np.unique(rows):
        cache[int(r)] = canonicalize(table.tree(int(r)), leaves)
    return [cache[int(r)] for r in rows]
