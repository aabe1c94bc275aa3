"""The exact likelihood: finite on generating trees, label-invariant, equal to the vectorised
enumeration, and -inf exactly when a constraint breaks."""

import numpy as np
import pytest
from scipy import integrate

from treegen import GinkgoLike, Tree, canonicalize, is_valid, tree_loglik
from treegen.enumeration import tree_logliks, tree_table
from treegen.likelihood import _log_f, split_logpdf


def test_generating_tree_has_finite_likelihood(model, jets):
    for leaves, tree in jets:
        assert np.isfinite(tree_loglik(leaves, tree, model))
        assert is_valid(tree, leaves, model)


def test_relabelling_leaves_leaves_likelihood_unchanged(model, jets):
    rng = np.random.default_rng(0)
    for leaves, tree in jets[:15]:
        n = tree.n
        perm = rng.permutation(n)  # new leaf k is old leaf perm[k]
        parents = tree.parents.copy()
        parents[:n] = tree.parents[perm]
        relabelled = Tree(parents)
        a = tree_loglik(leaves, tree, model)
        b = tree_loglik(leaves[perm], relabelled, model)
        assert a == pytest.approx(b, rel=1e-12, abs=1e-12)


def test_split_density_integrates_to_one():
    # f(t1, t2 | tP) is a density on {s1 in [0,1], s2 in [0, (1 - sqrt s1)^2]} (t-units, tP = 1)
    lam = 1.5
    val, _ = integrate.dblquad(
        lambda s2, s1: np.exp(_log_f(np.array(s1), np.array(s2), np.array(1.0), lam)),
        0,
        1,
        0,
        lambda s1: (1 - np.sqrt(s1)) ** 2,
    )
    assert val == pytest.approx(1.0, abs=1e-6)


def test_vectorised_enumeration_equals_per_tree(model, jets):
    for leaves, _ in jets[:6]:
        n = leaves.shape[0]
        table = tree_table(n)
        fast = tree_logliks(leaves, model)
        rows = range(0, table.trees.shape[0], max(1, table.trees.shape[0] // 60))
        slow = np.array([tree_loglik(leaves, table.tree(r), model) for r in rows])
        np.testing.assert_array_equal(np.isfinite(slow), np.isfinite(fast[list(rows)]))
        ok = np.isfinite(slow)
        np.testing.assert_allclose(slow[ok], fast[list(rows)][ok], rtol=1e-12, atol=1e-10)


def test_constraints_give_minus_infinity():
    model = GinkgoLike()
    cut = model.t_cut

    def f(ta, tb, tp, ia, ib):
        arrays = (np.array(v) for v in (ta, tb, tp, ia, ib))
        return float(split_logpdf(*arrays, model))

    assert np.isfinite(f(20.0, 4.0, 100.0, True, False))
    assert f(20.0, 4.0, cut, True, False) == -np.inf  # parent at the cut
    assert f(10.0, 4.0, 100.0, True, False) == -np.inf  # internal child below the cut
    assert f(20.0, 17.0, 100.0, True, False) == -np.inf  # leaf above the cut
    assert f(49.0, 16.0, 100.0, True, False) == -np.inf  # sqrt 49 + sqrt 16 > sqrt 100


def test_non_binary_tree_is_invalid(model, jets):
    leaves, tree = next((lv, t) for lv, t in jets if t.n >= 4)
    n = tree.n
    parents = tree.parents.copy()
    parents[:n] = 0  # every leaf under the root
    bad = Tree(parents)
    assert not bad.is_binary
    assert tree_loglik(leaves, bad, model) == -np.inf
    assert not is_valid(canonicalize(bad, leaves), leaves, model)
