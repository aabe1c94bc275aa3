import networkx as nx
import numpy as np
import pytest

from paperkit import cupy_available
from paperkit.testing import assert_param_error, requires_cupy
from trussreg import edge_support, node_truss, truss_decomposition
from trussreg.graph import adjacency


def truss_of(graph, as_csr, backend="reference"):
    edges, tau = truss_decomposition(as_csr(graph), backend=backend)
    return {tuple(e): int(k) for e, k in zip(edges.tolist(), tau, strict=True)}


@pytest.mark.parametrize("n", [3, 4, 7])
def test_complete_graph(as_csr, n):
    assert set(truss_of(nx.complete_graph(n), as_csr).values()) == {n}


def test_tree(as_csr):
    assert set(truss_of(nx.random_labeled_tree(20, seed=0), as_csr).values()) == {2}


def test_two_k5_joined_by_a_bridge(as_csr):
    graph = nx.disjoint_union(nx.complete_graph(5), nx.complete_graph(5))
    graph.add_edge(4, 5)
    tau = truss_of(graph, as_csr)
    assert tau.pop((4, 5)) == 2
    assert set(tau.values()) == {5}


def test_triangle_with_pendant(as_csr):
    graph = nx.Graph([(0, 1), (1, 2), (0, 2), (2, 3)])
    assert truss_of(graph, as_csr) == {(0, 1): 3, (0, 2): 3, (1, 2): 3, (2, 3): 2}


def support_in(edges):
    n = int(edges.max()) + 1 if len(edges) else 1
    return edge_support(adjacency(edges, n))[1]


@pytest.mark.parametrize("seed", [0, 1])
def test_k_truss_property_and_maximality(random_graph, seed):
    """The k-truss property: edges with tau >= k have >= k-2 triangles among themselves, and
    adding back any edge with tau = k-1 breaks that for some edge (maximality)."""
    A = random_graph(40, 0.3, seed)
    edges, tau = truss_decomposition(A)
    for k in range(3, int(tau.max()) + 1):
        kept = edges[tau >= k]
        assert np.all(support_in(kept) >= k - 2)
        for extra in edges[tau == k - 1]:
            grown = np.concatenate([kept, extra[None]])
            assert np.any(support_in(grown) < k - 2)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_networkx_k_truss(random_graph, as_csr, seed):
    graph = nx.gnp_random_graph(50, 0.25, seed=seed)
    edges, tau = truss_decomposition(as_csr(graph))
    for k in range(3, int(tau.max()) + 2):
        ours = {tuple(e) for e in edges[tau >= k].tolist()}
        theirs = {tuple(sorted(e)) for e in nx.k_truss(graph, k).edges}
        assert ours == theirs


def test_sparse_path_equals_dense(random_graph, monkeypatch):
    A = random_graph(60, 0.3, 7)
    _, dense = truss_decomposition(A)
    monkeypatch.setattr("trussreg.graph.DENSE_MAX", 10)
    monkeypatch.setattr("trussreg.graph.BLOCK_ENTRIES", 300)
    _, sparse_ = truss_decomposition(A)
    assert np.array_equal(dense, sparse_)


def test_node_truss_is_max_over_incident_edges():
    edges = np.array([[0, 1], [1, 2], [2, 3]])
    assert node_truss(edges, np.array([3, 5, 2]), 5).tolist() == [3, 5, 5, 2, 0]


def test_empty_graph(as_csr):
    edges, tau = truss_decomposition(as_csr(nx.empty_graph(4)))
    assert edges.shape == (0, 2) and tau.shape == (0,)


def test_bad_backend(random_graph):
    assert_param_error(truss_decomposition, random_graph(5, 0.5), backend="gpu", param="backend")


@pytest.mark.skipif(cupy_available(), reason="a GPU with CuPy is present")
def test_cuda_backend_without_a_gpu_is_an_error_not_a_fallback(random_graph):
    err = assert_param_error(
        truss_decomposition, random_graph(5, 0.5), backend="cuda", param="backend"
    )
    assert "a backend that can run here (reference)" in str(err)
    assert np.array_equal(
        truss_decomposition(random_graph(8, 0.5), backend="auto")[1],
        truss_decomposition(random_graph(8, 0.5))[1],
    )


@pytest.mark.gpu
@requires_cupy
@pytest.mark.parametrize("seed", [0, 1])
def test_cuda_backend_identical_to_reference(random_graph, seed):
    A = random_graph(300, 0.1, seed)
    edges_np, tau_np = truss_decomposition(A, backend="reference")
    edges_cp, tau_cp = truss_decomposition(A, backend="cuda")
    assert np.array_equal(edges_np, edges_cp)
    assert np.array_equal(tau_np, tau_cp)


@pytest.mark.gpu
@requires_cupy
def test_cuda_backend_on_registration_skeleton():
    from trussreg import compatibility_graph, consensus_sample, make_synthetic_pair

    pair = make_synthetic_pair(n_corr=1000, outlier_ratio=0.8, seed=0)
    A = compatibility_graph(pair["P"], pair["Q"], 0.1)
    S = consensus_sample(A, 500)
    A_s = A[S][:, S]
    assert np.array_equal(truss_decomposition(A_s)[1], truss_decomposition(A_s, "cuda")[1])


def test_cuda_csr_layout_sorted_with_edge_ids(random_graph):
    """The layout the CUDA kernel intersects: sorted neighbour lists, each entry's edge id."""
    from trussreg.graph import edge_list
    from trussreg.kernels.truss import csr_with_ids

    A = random_graph(30, 0.3, 1)
    edges = edge_list(A)
    indptr, indices, eid = csr_with_ids(edges, 30)
    D = A.toarray() != 0
    for x in range(30):
        nbrs = indices[indptr[x] : indptr[x + 1]]
        assert nbrs.tolist() == np.flatnonzero(D[x]).tolist()
        for w, e in zip(nbrs, eid[indptr[x] : indptr[x + 1]], strict=True):
            assert sorted(edges[e].tolist()) == sorted([x, int(w)])


def test_kernel_source_ships_with_the_package():
    from paperkit import kernel_source

    source = kernel_source("trussreg", "kernels/truss.cu")
    assert "__global__ void edge_support" in source and "__global__ void peel_edges" in source
