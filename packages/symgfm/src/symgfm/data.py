"""The graphs of the reproduction: a synthetic training pool and held-out real data.

* :func:`csbm_graph`: a contextual stochastic block model. Balanced labels :math:`y_i \\in
  \\{0..C-1\\}`; features :math:`x_i = \\mu_{y_i} + \\varepsilon_i` with
  :math:`\\mu_c \\sim \\mathcal N(0, \\tfrac{s^2}{2F} I_F)` and :math:`\\varepsilon_i \\sim
  \\mathcal N(0, I_F)` (two class means are about :math:`s` noise units apart whatever
  :math:`F`); every node
  sends ``avg_degree / 2`` edges, each to a random node of its own class with probability
  ``homophily`` and to a random node of another class otherwise (then made undirected).
* :func:`csbm_pool`: graphs with random :math:`F \\in [8, 64]`, :math:`C \\in [2, 6]`,
  homophily in :math:`[0.1, 0.9]`, :math:`N \\in [300, 800]`: the feature meanings, widths and
  class counts change from graph to graph.
* :func:`tabular_knn_graph`: a 10-nearest-neighbour graph (cosine) over a scikit-learn data set
  (digits, wine, breast_cancer, iris) with standardised columns as features.
* :func:`karate_graph`: PyG's KarateClub (34 nodes, 4 classes, identity features).

Splits (:func:`split_per_class`): ``train_per_class`` random train nodes per class (20; 2 for
KarateClub), the remaining nodes halved into validation and test.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor
from torch_geometric.data import Data

from paperkit import check_choice, check_int, check_real, param_error

__all__ = [
    "TABULAR",
    "csbm_graph",
    "csbm_pool",
    "karate_graph",
    "split_per_class",
    "tabular_knn_graph",
]

TABULAR = ("digits", "wine", "breast_cancer", "iris")


def split_per_class(y: Tensor, train_per_class: int, seed: int) -> tuple[Tensor, Tensor, Tensor]:
    """Boolean ``(train, val, test)`` masks: ``train_per_class`` random nodes of each class for
    training (all of a class if it is smaller), the rest split in half (val first)."""
    gen = torch.Generator().manual_seed(seed)
    train = torch.zeros(len(y), dtype=torch.bool)
    for c in range(int(y.max()) + 1):
        idx = torch.nonzero(y == c).flatten()
        train[idx[torch.randperm(len(idx), generator=gen)[:train_per_class]]] = True
    rest = torch.nonzero(~train).flatten()
    rest = rest[torch.randperm(len(rest), generator=gen)]
    val = torch.zeros_like(train)
    val[rest[: len(rest) // 2]] = True
    return train, val, ~train & ~val


def _with_split(
    x: Tensor, y: Tensor, edge_index: Tensor, train_per_class: int, seed: int, name: str
) -> Data:
    train, val, test = split_per_class(y, train_per_class, seed)
    return Data(
        x=x, y=y, edge_index=edge_index, train_mask=train, val_mask=val, test_mask=test, name=name
    )


def csbm_graph(
    num_nodes: int,
    num_features: int,
    num_classes: int,
    homophily: float,
    avg_degree: float = 10.0,
    signal: float = 2.0,
    seed: int = 0,
    train_per_class: int = 20,
) -> Data:
    """One CSBM graph (module docstring) with its per-class split; ``x`` float32.

    >>> g = csbm_graph(100, 8, 3, 0.8, seed=1)
    >>> tuple(g.x.shape), int(g.y.max()) + 1, int(g.train_mask.sum())
    ((100, 8), 3, 60)
    """
    owner = "csbm_graph"
    n = check_int("num_nodes", owner, num_nodes, low=4, high=10**7)
    f = check_int("num_features", owner, num_features, low=1, high=100_000)
    c = check_int("num_classes", owner, num_classes, low=2, high=n // 2)
    h = check_real("homophily", owner, homophily, low=0, high=1)
    deg = check_real("avg_degree", owner, avg_degree, low=2, high=1000)
    s = check_real("signal", owner, signal, low=0)
    seed = check_int("seed", owner, seed, low=0)
    tpc = check_int("train_per_class", owner, train_per_class, low=1, high=n // c)
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % c)
    mu = rng.standard_normal((c, f)) * s / np.sqrt(2.0 * f)
    x = mu[y] + rng.standard_normal((n, f))
    order = np.argsort(y, kind="stable")
    counts = np.bincount(y, minlength=c)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    m = max(1, int(round(deg / 2)))
    src = np.repeat(np.arange(n), m)
    cls = y[src].copy()
    other = rng.random(len(src)) >= h
    cls[other] = (cls[other] + rng.integers(1, c, other.sum())) % c
    dst = order[starts[cls] + (rng.random(len(src)) * counts[cls]).astype(np.int64)]
    ei = torch.from_numpy(np.stack([src, dst])).long()
    return _with_split(
        torch.from_numpy(x).float(), torch.from_numpy(y).long(), ei, tpc, seed, f"csbm-{seed}"
    )


def csbm_pool(num_graphs: int, seed: int = 0) -> list[Data]:
    """``num_graphs`` CSBM graphs with random ``F``, ``C``, homophily, ``N`` and signal
    (:math:`s \\in [1.5, 3]`), reproducible from ``seed``.

    >>> a, b = csbm_pool(2, seed=0), csbm_pool(2, seed=0)
    >>> all(torch.equal(g.x, h.x) for g, h in zip(a, b))
    True
    """
    k = check_int("num_graphs", "csbm_pool", num_graphs, low=1, high=1000)
    seed = check_int("seed", "csbm_pool", seed, low=0)
    rng = np.random.default_rng([seed, 7])
    graphs = []
    for i in range(k):
        graphs.append(
            csbm_graph(
                int(rng.integers(300, 801)),
                int(rng.integers(8, 65)),
                int(rng.integers(2, 7)),
                float(rng.uniform(0.1, 0.9)),
                signal=float(rng.uniform(1.5, 3.0)),
                seed=int(rng.integers(0, 2**31 - 1)) + i,
            )
        )
    return graphs


def _tabular(name: str) -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets

    loader = {
        "digits": datasets.load_digits,
        "wine": datasets.load_wine,
        "breast_cancer": datasets.load_breast_cancer,
        "iris": datasets.load_iris,
    }[name]
    bunch = loader()
    return bunch.data.astype(np.float64), bunch.target.astype(np.int64)


def tabular_knn_graph(name: str, k: int = 10, train_per_class: int = 20, seed: int = 0) -> Data:
    """A kNN graph (``k`` neighbours, cosine distance, scikit-learn ``kneighbors_graph``) over a
    bundled scikit-learn data set; features are the standardised columns (float32).

    >>> g = tabular_knn_graph("iris")  # doctest: +SKIP
    >>> tuple(g.x.shape), int(g.y.max()) + 1, int(g.train_mask.sum())  # doctest: +SKIP
    ((150, 4), 3, 60)
    """
    owner = "tabular_knn_graph"
    name = check_choice("name", owner, name, TABULAR)
    k = check_int("k", owner, k, low=1, high=100)
    tpc = check_int("train_per_class", owner, train_per_class, low=1, high=1000)
    seed = check_int("seed", owner, seed, low=0)
    from sklearn.neighbors import kneighbors_graph
    from sklearn.preprocessing import StandardScaler

    X, y = _tabular(name)
    X = StandardScaler().fit_transform(X)
    A = kneighbors_graph(X, n_neighbors=k, metric="cosine", mode="connectivity").tocoo()
    ei = torch.from_numpy(np.stack([A.col, A.row])).long()
    return _with_split(torch.from_numpy(X).float(), torch.from_numpy(y), ei, tpc, seed, name)


def karate_graph(seed: int = 0) -> Data:
    """PyG's KarateClub (34 nodes, 4 classes, identity features) with 2 train nodes per class.

    >>> g = karate_graph()
    >>> tuple(g.x.shape), int(g.train_mask.sum())
    ((34, 34), 8)
    """
    seed = check_int("seed", "karate_graph", seed, low=0)
    from torch_geometric.datasets import KarateClub

    d = KarateClub()[0]
    if d.x is None:  # pragma: no cover - every PyG version ships identity features
        raise param_error("seed", "karate_graph", "usable with this PyG's KarateClub", seed)
    return _with_split(d.x.float(), d.y.long(), d.edge_index, 2, seed, "karate")
