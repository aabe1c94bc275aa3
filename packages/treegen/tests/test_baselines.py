"""Baselines on simulator jets."""

import numpy as np

from treegen import (
    beam_cluster,
    greedy_cluster,
    is_valid,
    kt_cluster,
    random_valid_trees,
    tree_loglik,
)
from treegen.enumeration import tree_logliks


def test_greedy_and_beam_are_valid_and_beam_is_at_least_greedy(model, jets):
    for leaves, _ in jets:
        g, b = greedy_cluster(leaves, model), beam_cluster(leaves, model, 20)
        assert is_valid(g, leaves, model) and is_valid(b, leaves, model)
        assert tree_loglik(leaves, b, model) >= tree_loglik(leaves, g, model) - 1e-9


def test_beam_search_finds_the_exact_map_most_of_the_time(model, jets):
    hits = [
        tree_loglik(lv, beam_cluster(lv, model, 20), model) >= tree_logliks(lv, model).max() - 1e-9
        for lv, _ in jets
    ]
    assert np.mean(hits) > 0.6


def test_kt_family_returns_binary_trees_over_the_leaves(jets):
    for leaves, _ in jets[:10]:
        for p in (1, 0, -1):
            t = kt_cluster(leaves, p)
            assert t.is_binary and t.n == leaves.shape[0]


def test_random_valid_trees_are_valid_and_uniform(model, jets):
    leaves = next(lv for lv, _ in jets if lv.shape[0] == 4)
    trees = random_valid_trees(leaves, model, 3000, seed=0)
    assert all(is_valid(t, leaves, model) for t in trees[:100])
    counts = np.unique([t.key() for t in trees], axis=0, return_counts=True)[1]
    n_valid = np.isfinite(tree_logliks(leaves, model)).sum()
    assert len(counts) == n_valid
    assert counts.max() / counts.min() < 2.0  # 3000 draws over <= 15 trees
