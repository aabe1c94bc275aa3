import pytest
import torch
from torch_geometric.data import Data

from symgfm import csbm_graph


@pytest.fixture(autouse=True)
def _one_thread(one_thread):
    yield


def small_graph(n=24, f=5, c=3, seed=0, dtype=torch.float64) -> Data:
    """A small CSBM graph in ``dtype`` with 4 train nodes per class (fewer on tiny graphs)."""
    g = csbm_graph(n, f, c, 0.7, avg_degree=4, seed=seed, train_per_class=min(4, n // c - 1))
    g.x = g.x.to(dtype)
    return g


@pytest.fixture
def graph():
    return small_graph
