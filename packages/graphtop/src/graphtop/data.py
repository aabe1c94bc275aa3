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

import shutil
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, to_undirected

from graphtop._checks import check_int_labels, check_positive_float, check_positive_int
from paperkit import Described, param_error

__all__ = ["few_shot_split", "load_karate_club", "load_planetoid", "make_csbm"]


def make_csbm(
    n: int,
    num_classes: int,
    feat_dim: int,
    avg_degree: float,
    homophily: float,
    mu_sep: float,
    seed: int,
) -> Data:
    """A contextual stochastic block model graph (``x``, undirected ``edge_index``, ``y``)."""
    owner = "make_csbm"
    check_positive_int(num_classes, "num_classes", owner, minimum=2)
    check_positive_int(n, "n", owner, minimum=num_classes)
    check_positive_int(feat_dim, "feat_dim", owner, minimum=num_classes)
    check_positive_float(avg_degree, "avg_degree", owner)
    check_positive_float(mu_sep, "mu_sep", owner, allow_zero=True)
    check_positive_int(seed, "seed", owner, minimum=0)
    if not isinstance(homophily, (int, float)) or not 0.0 <= homophily <= 1.0:
        raise param_error("homophily", owner, "in [0, 1]", homophily)
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
    nodes among the rest. ValueError when a class has fewer than ``shots`` nodes or fewer than
    ``num_test`` nodes remain."""
    owner = "few_shot_split"
    check_int_labels(y, owner)
    y = y.reshape(-1).long()
    check_positive_int(shots, "shots", owner)
    check_positive_int(num_test, "num_test", owner)
    check_positive_int(seed, "seed", owner, minimum=0)
    if y.numel() == 0 or int(y.min()) < 0:
        raise param_error("y", owner, "non-empty, non-negative class labels", Described(repr(y)))
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
    """
    from torch_geometric.datasets import Planetoid

    source = Path(root) / name
    if not (source / "raw").is_dir():
        raise param_error("root", "load_planetoid", f"a folder holding {name}/raw", str(root))
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copytree(source, Path(tmp) / name, ignore=shutil.ignore_patterns("processed"))
        return Planetoid(tmp, name)[0]
