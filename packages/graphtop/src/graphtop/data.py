r"""Graphs and splits: the contextual SBM, the few-shot split, and the real graphs at hand.

Contextual SBM (``make_csbm``): ``n`` nodes in ``num_classes`` balanced classes; features
:math:`x_i = \mu_{y_i} + \mathcal N(0, I_F)` with class means
:math:`\mu_c = (\mu_{sep}/\sqrt 2)\, q_c` for orthonormal :math:`q_c`, so that
:math:`\|\mu_a - \mu_b\| = \mu_{sep}`; about :math:`n\,\bar d/2` undirected edges, each drawn from
a uniform random endpoint to a node of the same class with probability ``homophily`` and of a
uniformly chosen other class otherwise (self-loops and duplicates dropped), so the edge
homophily is close to ``homophily`` and the mean degree close to ``avg_degree``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from paperkit import (
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["PLANETOID", "few_shot_split", "load_karate_club", "load_planetoid", "make_csbm"]

#: The Planetoid citation graphs PyG's loader reads.
PLANETOID = ("Cora", "CiteSeer", "PubMed")


def make_csbm(
    n: int,
    num_classes: int,
    feat_dim: int,
    avg_degree: float,
    homophily: float,
    mu_sep: float,
    seed: int,
) -> Data:
    """A contextual stochastic block model graph (``x``, undirected ``edge_index``, ``y``).

    Sizes are positive integers (``n >= num_classes``, ``feat_dim >= num_classes``), ``avg_degree``
    in (0, n - 1], ``homophily`` in [0, 1], ``mu_sep >= 0``, all finite (NaN and inf refused); a
    graph that would not fit in memory is refused before it is drawn.

    >>> g = make_csbm(40, 2, 4, 3.0, 0.9, 2.0, seed=0)
    >>> g.x.shape, int(g.y.max())
    (torch.Size([40, 4]), 1)
    """
    owner = "make_csbm"
    num_classes = check_int("num_classes", owner, num_classes, low=2)
    n = check_int("n", owner, n, low=num_classes)
    feat_dim = check_int("feat_dim", owner, feat_dim, low=num_classes)
    avg_degree = check_real("avg_degree", owner, avg_degree, low=0, low_open=True, high=n - 1)
    homophily = check_real("homophily", owner, homophily, low=0, high=1)
    mu_sep = check_real("mu_sep", owner, mu_sep, low=0)
    seed = check_int("seed", owner, seed, low=0)
    # float64 features and their float32 copy; about a dozen int64 arrays per drawn edge.
    check_memory("n" if n >= feat_dim else "feat_dim", owner, max(n, feat_dim), 12 * n * feat_dim)
    check_memory("n", owner, n, 96 * n * avg_degree / 2)
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(n) % num_classes)
    q, _ = np.linalg.qr(rng.standard_normal((feat_dim, num_classes)))
    means = (mu_sep / np.sqrt(2.0)) * q.T
    x = means[y] + rng.standard_normal((n, feat_dim))

    members = np.argsort(y, kind="stable")
    sizes = np.bincount(y, minlength=num_classes)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    m = int(round(n * avg_degree / 2))
    src = rng.integers(0, n, size=m)
    shift = rng.integers(1, num_classes, size=m)
    dst_class = np.where(rng.random(m) < homophily, y[src], (y[src] + shift) % num_classes)
    dst = members[starts[dst_class] + (rng.random(m) * sizes[dst_class]).astype(np.int64)]
    edge_index = torch.from_numpy(np.stack([src, dst])).long()
    edge_index, _ = remove_self_loops(edge_index)
    edge_index = coalesce(to_undirected(edge_index, num_nodes=n), num_nodes=n)
    return Data(x=torch.from_numpy(x).float(), edge_index=edge_index, y=torch.from_numpy(y).long())


def few_shot_split(
    y: torch.Tensor, shots: int = 5, num_test: int = 2000, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``shots`` random training nodes per class (classes ``0..y.max()``), ``num_test`` random test
    nodes among the rest.

    ``y`` is a non-empty 1-D integer tensor of labels >= 0. ValueError when a class has fewer than
    ``shots`` nodes or fewer than ``num_test`` nodes remain.

    >>> train, test = few_shot_split(torch.arange(12) % 3, shots=2, num_test=4, seed=0)
    >>> len(train), len(test)
    (6, 4)
    """
    owner = "few_shot_split"
    check_tensor("y", owner, y, ndim=1, dtype="int")
    shots = check_int("shots", owner, shots, low=1)
    num_test = check_int("num_test", owner, num_test, low=1)
    seed = check_int("seed", owner, seed, low=0)
    if int(y.min()) < 0:
        raise param_error("y", owner, "non-negative class labels", int(y.min()))
    check_memory("y", owner, int(y.max()), 8 * (int(y.max()) + 1))  # one count per class
    y = y.long()
    counts = torch.bincount(y)
    if int(counts.min()) < shots:
        c = int(counts.argmin())
        raise param_error(
            "shots", owner, f"at most the smallest class size {int(counts[c])} (class {c})", shots
        )
    g = torch.Generator().manual_seed(seed)
    train = torch.cat(
        [
            (y == c).nonzero().reshape(-1)[torch.randperm(int(counts[c]), generator=g)[:shots]]
            for c in range(len(counts))
        ]
    )
    rest = torch.ones(y.numel(), dtype=torch.bool)
    rest[train] = False
    pool = rest.nonzero().reshape(-1)
    if num_test > pool.numel():
        raise param_error(
            "num_test", owner, f"at most the {pool.numel()} non-training nodes", num_test
        )
    test = pool[torch.randperm(pool.numel(), generator=g)[:num_test]]
    return train, test


def load_karate_club() -> Data:
    """Zachary's karate club as PyG ships it (34 nodes, 4 communities, one-hot features)."""
    from torch_geometric.datasets import KarateClub

    return KarateClub()[0]


def load_planetoid(root: str | Path, name: str) -> Data:
    """A Planetoid citation graph (``"Cora"``, ``"CiteSeer"``, ``"PubMed"``) with PyG's loader.

    ``root`` holds ``<name>/raw``; it is copied to a temporary folder first, since the loader
    writes a ``processed/`` folder next to ``raw/`` (the original root may be read-only).
    ``name`` is one of :data:`PLANETOID`; a root without ``<name>/raw`` is refused.
    """
    from torch_geometric.datasets import Planetoid

    owner = "load_planetoid"
    if not isinstance(root, (str, os.PathLike)):
        raise param_error("root", owner, "a folder (str or path)", describe(root), cls=TypeError)
    if not isinstance(name, str):
        raise param_error("name", owner, "a Planetoid graph name", describe(name), cls=TypeError)
    check_choice("name", owner, name, PLANETOID)
    source = Path(root) / name
    if not (source / "raw").is_dir():
        raise param_error("root", owner, f"a folder holding {name}/raw", str(root))
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(source, Path(tmp) / name, ignore=shutil.ignore_patterns("processed"))
        return Planetoid(tmp, name)[0]
