import networkx as nx
import numpy as np
import pytest
from scipy import sparse


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


def to_csr(graph: nx.Graph) -> sparse.csr_matrix:
    n = graph.number_of_nodes()
    return sparse.csr_matrix(nx.to_scipy_sparse_array(graph, nodelist=range(n), dtype=float))


@pytest.fixture
def as_csr():
    """networkx graph (nodes 0..n-1) -> scipy CSR adjacency."""
    return to_csr


@pytest.fixture
def random_graph():
    def make(n=40, p=0.3, seed=0):
        return to_csr(nx.gnp_random_graph(n, p, seed=seed))

    return make


@pytest.fixture
def rigid():
    """A random proper rotation and translation from a seed."""

    def make(seed=0):
        from scipy.spatial.transform import Rotation

        rng = np.random.default_rng(seed)
        return Rotation.random(random_state=rng).as_matrix(), rng.uniform(-2, 2, 3)

    return make
