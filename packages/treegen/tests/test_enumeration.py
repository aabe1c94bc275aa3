"""Enumeration counts and uniqueness, and the exact posterior."""

import networkx as nx
import numpy as np
import pytest

from treegen import canonicalize, count_trees, enumerate_trees, exact_posterior, posterior_sample
from treegen.enumeration import tree_table


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6])
def test_counts_and_distinct_topologies(n):
    trees = list(enumerate_trees(n))
    # (2n-3)!!: 1, 3, 15 for n = 2, 3, 4 (and 105, 945)
    assert len(trees) == count_trees(n) == [1, 3, 15, 105, 945][n - 2]
    assert len({t.key() for t in trees}) == len(trees)
    for t in trees:
        assert t.is_binary
        g = t.to_networkx()
        assert nx.is_arborescence(g) and sum(1 for v in g if g.out_degree(v) == 0) == n


def test_split_table_size():
    # (3^n - 2^{n+1} + 1) / 2 distinct splits
    for n in range(2, 8):
        assert tree_table(n).split_parent.size == (3**n - 2 ** (n + 1) + 1) // 2


def test_exact_posterior_normalised_and_consistent_with_samples(model, jets):
    leaves = next(lv for lv, _ in jets if lv.shape[0] == 5)
    trees, probs = exact_posterior(leaves, model)
    assert probs.sum() == pytest.approx(1.0) and (probs >= 0).all()
    draws = posterior_sample(leaves, model, 4000, seed=1)
    index = {t.key(): i for i, t in enumerate(trees)}
    freq = np.bincount([index[d.key()] for d in draws], minlength=probs.size) / 4000
    # TV of 4000 draws over 105 trees: the bias is about sum sqrt(p(1-p)/M) / 2; 0.1 is generous
    assert 0.5 * np.abs(freq - probs).sum() < 0.1
    for d in draws[:20]:  # draws come canonically labelled
        assert d == canonicalize(d, leaves)


def test_exact_posterior_refuses_large_n(model):
    leaves = model.sample_jets(1, seed=0, n_min=9, n_max=12)[0][0]
    with pytest.raises(ValueError, match="'leaves'"):
        exact_posterior(leaves, model)
