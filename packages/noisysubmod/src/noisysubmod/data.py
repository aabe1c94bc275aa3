"""The reproduction's instances: generated coverage, bundled graphs and the bundled digits.

(a) weighted coverage, n = 150 sets over 500 items, incidence density 0.03, weights U(0, 1);
(b) max-cut on networkx ``erdos_renyi_graph(120, 0.08, seed)`` and ``les_miserables_graph()``
    (77 nodes, co-appearance weights; bundled with networkx);
(c) facility location on the first 300 images of scikit-learn's bundled ``load_digits``
    (clients = facilities = the 300 images, RBF similarity with gamma = 1 / median squared
    distance).
"""

from __future__ import annotations

import numpy as np

from noisysubmod.constraints import PartitionMatroid
from noisysubmod.functions import FacilityLocation, GraphCut, WeightedCoverage
from paperkit import check_int

__all__ = ["coverage", "digits_facility", "erdos_renyi_cut", "les_miserables_cut", "partition"]


def coverage(seed: int = 0, n: int = 150, universe: int = 500) -> WeightedCoverage:
    """Instance (a): :meth:`WeightedCoverage.random` with density 0.03."""
    return WeightedCoverage.random(n=n, universe=universe, density=0.03, seed=seed)


def partition(n: int, blocks: int, cap: int) -> PartitionMatroid:
    """``blocks`` contiguous blocks of (nearly) equal size, each of capacity ``cap``."""
    n = check_int("n", "partition", n, low=1)
    blocks = check_int("blocks", "partition", blocks, low=1, high=n)
    return PartitionMatroid(np.arange(n) * blocks // n, [cap] * blocks)


def erdos_renyi_cut(seed: int = 0, n: int = 120, p: float = 0.08) -> GraphCut:
    """Instance (b1): the cut function of ``erdos_renyi_graph(n, p, seed)``."""
    import networkx as nx

    return GraphCut.from_networkx(nx.erdos_renyi_graph(n, p, seed=seed))


def les_miserables_cut() -> GraphCut:
    """Instance (b2): the weighted cut function of ``les_miserables_graph()`` (77 nodes)."""
    import networkx as nx

    return GraphCut.from_networkx(nx.les_miserables_graph())


def digits_facility(n: int = 300) -> FacilityLocation:
    """Instance (c): facility location on the first ``n`` digits images (RBF similarity)."""
    from sklearn.datasets import load_digits

    n = check_int("n", "digits_facility", n, low=2, high=1797)
    return FacilityLocation.rbf(load_digits().data[:n] / 16.0)
