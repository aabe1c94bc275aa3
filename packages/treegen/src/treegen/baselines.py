r"""Baselines for jet clustering: greedy and beam-search likelihood maximisation, generalised
:math:`k_t` clustering, and uniformly random valid hierarchies.

* Greedy / beam search (as in the Ginkgo toolkit): start from the leaves, repeatedly merge two
  clusters into their summed momentum; a merge scores the split term
  :math:`\log[\frac12 f(t_a,t_b|t_P)+\frac12 f(t_b,t_a|t_P)]` of the likelihood (``-inf`` when the
  split breaks a physical constraint). Greedy takes the best merge; beam search keeps the
  ``beam`` partial clusterings of highest accumulated :math:`\log L`. Both return a valid tree
  whenever the search finds one (a merge of finite score always exists in a simulator jet).
* Generalised :math:`k_t`: merge the pair of smallest
  :math:`d_{ij} = \min(p_{T,i}^{2p}, p_{T,j}^{2p})\,\Delta R_{ij}^2` (``p = 1``: :math:`k_t`,
  ``0``: Cambridge/Aachen, ``-1``: anti-:math:`k_t`), E-scheme recombination, until one cluster is
  left; it ignores the likelihood, so its trees may be invalid.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from paperkit import check_choice, check_int, param_error
from treegen.checks import check_leaves
from treegen.enumeration import N_MAX_ENUM, subset_mass2, tree_logliks, tree_table
from treegen.ginkgo import GinkgoLike, check_model
from treegen.likelihood import split_logpdf
from treegen.tree import Tree, canonicalize

__all__ = ["beam_cluster", "greedy_cluster", "kt_cluster", "random_valid_trees"]

#: Most leaves for greedy/beam search (a mass table over all 2^n leaf subsets).
MAX_SEARCH = 20


def tree_from_merges(leaves: np.ndarray, merges: Sequence[tuple[int, int]]) -> Tree:
    """The canonical :class:`Tree` built by merging the clusters with the given leaf bitmasks in
    order (every merge creates the node ``a | b``)."""
    n = leaves.shape[0]
    node_of = {1 << i: i for i in range(n)}
    parent_of: dict[int, int] = {}
    for k, (a, b) in enumerate(merges):  # internal node k (creation order)
        parent_of[node_of[a]] = parent_of[node_of[b]] = k
        node_of[a | b] = n + k
    # reverse creation order: the root (last merge) becomes internal 0, parents precede children
    new = {k: n - 2 - k for k in range(n - 1)}
    parents = np.empty(2 * n - 1, dtype=np.int64)
    for i in range(n):
        parents[i] = new[parent_of[i]]
    for k in range(n - 1):
        node = n + k
        parents[n + new[k]] = new[parent_of[node]] if node in parent_of else -1
    return canonicalize(Tree(parents), leaves)


def _merge_scores(clusters: list[int], t: np.ndarray, model: GinkgoLike):
    """Scores of every pair of clusters, as (score, i, j) arrays."""
    i, j = np.triu_indices(len(clusters), 1)
    a = np.array(clusters)[i]
    b = np.array(clusters)[j]
    inner = lambda m: (m & (m - 1)) != 0  # noqa: E731 - more than one leaf
    scores = split_logpdf(t[a], t[b], t[a | b], inner(a), inner(b), model)
    return scores, a, b


def beam_cluster(leaves: np.ndarray, model: GinkgoLike, beam: int = 20) -> Tree:
    r"""Beam search over merge sequences for the maximum-likelihood hierarchy (``beam`` partial
    clusterings kept per step, duplicates merged). ``n <= 20`` leaves; NaN/inf refused.
    The result is canonically labelled; if no sequence of finite score exists, the best of
    ``-inf`` score is returned (then invalid).

    >>> from treegen import GinkgoLike, is_valid
    >>> model = GinkgoLike()
    >>> leaves, _ = model.sample(seed=2)
    >>> is_valid(beam_cluster(leaves, model), leaves, model)
    True
    """
    owner = "beam_cluster"
    leaves = check_leaves("leaves", owner, leaves, n_max=MAX_SEARCH)
    model = check_model("model", owner, model)
    beam = check_int("beam", owner, beam, low=1, high=10**4)
    return _beam(leaves, model, beam)


def _beam(leaves: np.ndarray, model: GinkgoLike, beam: int) -> Tree:
    n = leaves.shape[0]
    t = subset_mass2(leaves)
    states: list[tuple[float, list[int], list[tuple[int, int]]]] = [
        (0.0, [1 << i for i in range(n)], [])
    ]
    for _ in range(n - 1):
        cands: dict[frozenset[int], tuple[float, list[int], list[tuple[int, int]]]] = {}
        for score, clusters, merges in states:
            s, a, b = _merge_scores(clusters, t, model)
            for k in np.argsort(-s, kind="stable")[:beam]:
                ak, bk = int(a[k]), int(b[k])
                new = [c for c in clusters if c not in (ak, bk)] + [ak | bk]
                key = frozenset(new)
                total = score + float(s[k])
                if key not in cands or total > cands[key][0]:
                    cands[key] = (total, new, [*merges, (ak, bk)])
        states = sorted(cands.values(), key=lambda c: -c[0])[:beam]
    return tree_from_merges(leaves, states[0][2])


def greedy_cluster(leaves: np.ndarray, model: GinkgoLike) -> Tree:
    r"""Greedy likelihood clustering: always merge the pair with the largest split term
    (beam search with ``beam = 1``). ``n <= 20`` leaves; NaN/inf refused."""
    owner = "greedy_cluster"
    leaves = check_leaves("leaves", owner, leaves, n_max=MAX_SEARCH)
    model = check_model("model", owner, model)
    return _beam(leaves, model, 1)


def kt_cluster(leaves: np.ndarray, p: int = 1) -> Tree:
    r"""Generalised :math:`k_t` clustering of all leaves into one tree (``p`` in {1, 0, -1}:
    :math:`k_t`, C/A, anti-:math:`k_t`), with
    :math:`\Delta R^2 = \Delta y^2 + \Delta\phi^2` (rapidity ``y``). NaN/inf refused.

    >>> from treegen import GinkgoLike
    >>> leaves, _ = GinkgoLike().sample(seed=2)
    >>> kt_cluster(leaves, p=0).is_binary
    True
    """
    owner = "kt_cluster"
    leaves = check_leaves("leaves", owner, leaves, n_max=30)
    p = check_choice("p", owner, p, (1, 0, -1))
    n = leaves.shape[0]
    clusters = {1 << i: leaves[i] for i in range(n)}
    merges = []
    while len(clusters) > 1:
        keys = list(clusters)
        mom = np.array([clusters[k] for k in keys])
        pt2 = np.clip(mom[:, 1] ** 2 + mom[:, 2] ** 2, 1e-12, None)
        energy = mom[:, 0]
        plus = np.clip(energy + mom[:, 3], 1e-12, None)
        y = 0.5 * np.log(plus / np.clip(energy - mom[:, 3], 1e-12, None))
        phi = np.arctan2(mom[:, 2], mom[:, 1])
        dphi = np.remainder(phi[:, None] - phi[None, :] + np.pi, 2 * np.pi) - np.pi
        dr2 = (y[:, None] - y[None, :]) ** 2 + dphi**2
        w = pt2**p
        d = np.minimum(w[:, None], w[None, :]) * dr2
        d[np.tril_indices(len(keys))] = np.inf
        i, j = np.unravel_index(np.argmin(d), d.shape)
        a, b = keys[i], keys[j]
        clusters[a | b] = clusters.pop(a) + clusters.pop(b)
        merges.append((a, b))
    return tree_from_merges(leaves, merges)


def random_valid_trees(
    leaves: np.ndarray, model: GinkgoLike, num: int = 1, seed: int = 0
) -> list[Tree]:
    """``num`` hierarchies drawn uniformly from the valid ones (finite likelihood), by
    enumeration (``n <= 8``), canonically labelled. NaN/inf refused."""
    owner = "random_valid_trees"
    leaves = check_leaves("leaves", owner, leaves, n_max=N_MAX_ENUM)
    model = check_model("model", owner, model)
    num = check_int("num", owner, num, low=1, high=10**7)
    seed = check_int("seed", owner, seed, low=0)
    valid = np.flatnonzero(np.isfinite(tree_logliks(leaves, model)))
    if valid.size == 0:
        raise param_error("leaves", owner, "a jet with at least one valid hierarchy", "none")
    rows = np.random.default_rng(seed).choice(valid, size=num)
    table = tree_table(leaves.shape[0])
    return [canonicalize(table.tree(int(r)), leaves) for r in rows]
