"""Graph pre-processing of the paper (Sec. 5, "Setup"): feature normalisation, one-hot context
labels, a simple undirected graph, and the mean-aggregation operator :math:`M`.

:math:`M` is the row-normalised adjacency, :math:`(MZ)_i = \\frac{1}{|N(i)|}\\sum_{j \\in N(i)} Z_j`
(zero for an isolated node), applied to any tensor whose first axis is the node axis by a
``torch_geometric.utils.scatter`` mean over the flattened ``(N, -1)`` view.
"""

from __future__ import annotations

from typing import Any

import torch
from torch import Tensor
from torch_geometric.data import Data
from torch_geometric.utils import coalesce, remove_self_loops, scatter, to_undirected

from paperkit import Described, check_int, check_tensor, describe, param_error

__all__ = [
    "check_graph",
    "check_layers",
    "clean_edges",
    "mean_aggregate",
    "normalize_features",
    "one_hot_context",
]

EPS = 1e-8


def mean_aggregate(z: Tensor, edge_index: Tensor) -> Tensor:
    """:math:`MZ`: the mean of ``z`` over each node's in-neighbours (``edge_index[0] -> [1]``).

    ``z`` is ``(N, ...)``; the result has its shape. Isolated nodes get 0. No checks (an inner
    operator; the public entry points validate the graph). NaN propagates.

    >>> ei = torch.tensor([[0, 1, 2], [1, 0, 0]])
    >>> mean_aggregate(torch.tensor([[1.0], [3.0], [5.0]]), ei).flatten().tolist()
    [4.0, 1.0, 0.0]
    """
    n = z.shape[0]
    flat = z.reshape(n, -1)
    out = scatter(flat[edge_index[0]], edge_index[1], dim=0, dim_size=n, reduce="mean")
    return out.reshape(z.shape)


def clean_edges(edge_index: Tensor, num_nodes: int) -> Tensor:
    """The simple undirected graph of ``edge_index``: self-loops removed, both directions, sorted
    and without duplicates."""
    edge_index, _ = remove_self_loops(edge_index)
    return coalesce(to_undirected(edge_index, num_nodes=num_nodes), num_nodes=num_nodes)


def normalize_features(x: Tensor, pca_dim: int = 2048) -> Tensor:
    """Rows scaled to unit L2 norm; when ``F > pca_dim`` the rows are first standardised and
    projected on the first ``min(pca_dim, N)`` principal components of the whole graph
    (scikit-learn PCA), as in the paper's code."""
    if x.shape[1] > pca_dim:
        from sklearn.decomposition import PCA

        z = (x - x.mean(1, keepdim=True)) / (x.std(1, keepdim=True) + EPS)
        k = min(pca_dim, x.shape[0])
        z = PCA(n_components=k, svd_solver="full").fit_transform(z.double().numpy())
        x = torch.from_numpy(z).to(x.dtype)
    return x / (x.norm(dim=1, keepdim=True) + EPS)


def one_hot_context(y: Tensor, mask: Tensor, num_classes: int, dtype: torch.dtype) -> Tensor:
    """:math:`Y_0`: one-hot rows of ``y`` where ``mask`` holds, zero rows elsewhere; ``(N, C)``."""
    y0 = torch.zeros(y.shape[0], num_classes, dtype=dtype)
    y0[mask, y[mask]] = 1.0
    return y0


def check_graph(
    owner: str, data: Any, train_mask: Any, name: str = "data", mask_name: str = "train_mask"
) -> tuple[Tensor, Tensor, Tensor, Tensor, int]:
    """Validate a node-classification graph and its context mask; return
    ``(x, y, edge_index, train_mask, C)``.

    ``data`` must be a ``torch_geometric.data.Data`` with ``x`` ``(N, F)`` floating and finite,
    ``y`` ``(N,)`` integer labels in ``0..C-1`` (``C = y.max() + 1 >= 2``) and ``edge_index``
    ``(2, E)`` integer in ``[0, N)``; ``train_mask`` a boolean ``(N,)`` tensor holding at least one
    node of every class (the least-squares maps are undefined otherwise). Errors name ``name``
    (the graph) or ``mask_name`` (the mask; the graph's name when the mask is ``data.train_mask``).
    """
    if not isinstance(data, Data):
        raise param_error(name, owner, "a torch_geometric.data.Data", describe(data), cls=TypeError)
    x, y, ei = data.get("x"), data.get("y"), data.get("edge_index")
    for key, value, kind in (("x", x, "float"), ("y", y, "int"), ("edge_index", ei, "int")):
        try:
            check_tensor(name, owner, value, dtype=kind, ndim=(1 if key == "y" else 2))
        except (TypeError, ValueError) as exc:
            raise type(exc)(f"{exc} (the tensor data.{key})") from None
    n = x.shape[0]
    if y.shape != (n,):
        raise param_error(name, owner, f"a Data whose y has shape (N,) = ({n},)", describe(y))
    if ei.shape[0] != 2 or (ei.numel() and (ei.min() < 0 or ei.max() >= n)):
        raise param_error(
            name, owner, f"a Data whose edge_index is (2, E) with entries in [0, {n})", describe(ei)
        )
    if y.min() < 0:
        raise param_error(name, owner, "a Data whose labels y are 0..C-1", int(y.min()))
    C = int(y.max()) + 1
    if C < 2:
        raise param_error(name, owner, "a Data with at least 2 classes (C >= 2)", C)
    check_tensor(mask_name, owner, train_mask, shape=(n,), dtype=torch.bool)
    counts = torch.bincount(y[train_mask], minlength=C)
    if (counts == 0).any():
        missing = int(torch.nonzero(counts == 0)[0])
        raise param_error(
            mask_name,
            owner,
            f"a mask holding at least one node of every class 0..{C - 1}",
            Described(f"no node of class {missing}"),
        )
    return x, y, ei, train_mask, C


def check_layers(owner: str, ls_num_layers: int) -> int:
    """``ls_num_layers`` :math:`L \\in [0, 8]`."""
    return check_int("ls_num_layers", owner, ls_num_layers, low=0, high=8)
