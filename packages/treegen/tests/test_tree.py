"""The encoding and canonicalize."""

import itertools

import numpy as np
import pytest

from treegen import Tree, canonicalize, enumerate_trees
from treegen.physics import mass2
from treegen.tree import relabel


def test_canonicalize_is_idempotent_and_orders_masses(jets):
    for leaves, _ in jets[:10]:
        for tree in itertools.islice(enumerate_trees(leaves.shape[0]), 30):
            c = canonicalize(tree, leaves)
            assert canonicalize(c, leaves) == c
            assert c.key() == tree.key()
            t = mass2(c.internal_momenta(leaves))
            assert (np.diff(t) <= 1e-9).all()


def test_isomorphic_labellings_map_to_one_representative(jets):
    rng = np.random.default_rng(1)
    for leaves, tree in jets[:10]:
        n = tree.n
        # a random relabelling of the internal nodes that keeps parents first
        for _ in range(5):
            order = [0]
            remaining = list(range(1, n - 1))
            while remaining:
                ready = [j for j in remaining if tree.parents[n + j] in order]
                pick = ready[rng.integers(len(ready))]
                order.append(pick)
                remaining.remove(pick)
            other = relabel(tree, np.array(order))
            assert other.key() == tree.key()
            assert canonicalize(other, leaves) == canonicalize(tree, leaves)


def test_encoding_is_checked():
    with pytest.raises(ValueError, match="'parents'"):
        Tree([0, 0, -1, 1])  # even length
    with pytest.raises(ValueError, match="'parents'"):
        Tree([0, 0, 0, -1, 1])  # internal 1's parent must be < 1
    with pytest.raises(TypeError, match="'parents'"):
        Tree([0.0, 0.0, -1.0])
