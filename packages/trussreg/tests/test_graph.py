import itertools

import numpy as np
import pytest

from paperkit.testing import assert_param_error
from trussreg import compatibility_graph, consensus_sample, edge_support, vote_counts
from trussreg.graph import edge_list


def naive_support(A):
    """Triangle supports by a triple loop over all node triples (the definition)."""
    D = A.toarray() != 0
    n = len(D)
    count = {}
    for u, v in itertools.combinations(range(n), 2):
        if D[u, v]:
            count[(u, v)] = sum(1 for w in range(n) if D[u, w] and D[v, w])
    return count


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_edge_support_matches_triple_loop(random_graph, seed):
    A = random_graph(40, 0.3, seed)
    edges, support = edge_support(A)
    expected = naive_support(A)
    assert [tuple(e) for e in edges.tolist()] == sorted(expected)
    assert support.tolist() == [expected[tuple(e)] for e in edges.tolist()]


def test_edge_support_sparse_path_equals_dense(random_graph, monkeypatch):
    A = random_graph(60, 0.25, 5)
    _, dense = edge_support(A)
    monkeypatch.setattr("trussreg.graph.DENSE_MAX", 10)
    monkeypatch.setattr("trussreg.graph.BLOCK_ENTRIES", 200)  # several row blocks
    _, sparse_ = edge_support(A)
    assert np.array_equal(dense, sparse_)


def test_compatibility_graph_symmetric_zero_diagonal_and_rigid_invariant(rigid):
    rng = np.random.default_rng(0)
    P = rng.uniform(0, 3, (80, 3))
    Q = P.copy()
    Q[40:] = rng.uniform(0, 3, (40, 3))  # half outliers
    A = compatibility_graph(P, Q, 0.1)
    assert (A != A.T).nnz == 0
    assert np.all(A.diagonal() == 0)
    assert A[:40, :40].nnz == 40 * 39  # inliers are mutually compatible
    R1, t1 = rigid(1)
    R2, t2 = rigid(2)
    moved = compatibility_graph(P @ R1.T + t1, Q @ R2.T + t2, 0.1)
    assert (moved != A).nnz == 0


def test_compatibility_graph_soft_weights():
    P = np.array([[0, 0, 0], [1, 0, 0], [0, 2, 0]], float)
    Q = P.copy()
    Q[2] = [0, 2.05, 0]  # d_02 = d_12-ish = 0.05
    S = compatibility_graph(P, Q, 0.1, soft=True)
    assert S[0, 1] == pytest.approx(1.0)
    assert S[0, 2] == pytest.approx(1 - (0.05 / 0.1) ** 2)


def test_consensus_sample_distinct_and_sorted_by_votes(random_graph):
    A = random_graph(60, 0.2, 3)
    idx = consensus_sample(A, 25)
    votes = vote_counts(A)
    assert len(idx) == 25 and len(set(idx.tolist())) == 25
    assert np.all(np.diff(votes[idx]) <= 0)
    assert votes[idx].min() >= np.delete(votes, idx).max()  # the top 25 by votes


def test_consensus_votes_count_triangles(random_graph):
    A = random_graph(30, 0.3, 4)
    D = A.toarray()
    assert np.allclose(vote_counts(A), np.diag(D @ D @ D) / 2)


def test_consensus_sample_returns_all_when_m_exceeds_n(random_graph):
    assert sorted(consensus_sample(random_graph(10, 0.5, 0), 50).tolist()) == list(range(10))


def test_edge_list_ignores_diagonal_and_direction():
    from scipy import sparse

    A = sparse.csr_matrix(np.array([[1, 1, 0], [0, 0, 0], [1, 0, 0]], float))
    assert edge_list(A).tolist() == [[0, 1], [0, 2]]


def test_bad_inputs():
    P = np.zeros((5, 3))
    assert_param_error(compatibility_graph, P[:2], P[:2], 0.1, param="P")
    assert_param_error(compatibility_graph, P, np.zeros((4, 3)), 0.1, param="Q")
    assert_param_error(compatibility_graph, P, P, 0.0, param="tau")
    assert_param_error(compatibility_graph, P, P, -1.0, param="tau")
    bad = P.copy()
    bad[1, 1] = np.nan
    assert_param_error(compatibility_graph, bad, P, 0.1, param="P")
    assert_param_error(compatibility_graph, np.zeros((5, 2)), P, 0.1, param="P")
    assert_param_error(compatibility_graph, [["a"] * 3] * 5, P, 0.1, param="P", exc=TypeError)
    A = compatibility_graph(np.eye(3), np.eye(3), 0.1)
    assert_param_error(consensus_sample, A, 2, param="m")
    assert_param_error(consensus_sample, np.eye(3), 5, param="A", exc=TypeError)
