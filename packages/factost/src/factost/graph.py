"""The few ``edge_index`` utilities FactoST needs (PyG's ``(2, E)`` convention, no PyG needed).

``edge_index[0]`` holds source nodes, ``edge_index[1]`` targets; an edge ``j -> i`` lets node ``i``
read node ``j``.
"""

from __future__ import annotations

import torch
from torch import Tensor

from paperkit import check_int, check_tensor, describe, param_error

__all__ = ["knn_graph", "prior_mask", "normalized_adjacency"]


def knn_graph(coords: Tensor, k: int) -> Tensor:
    """Symmetric k-nearest-neighbour graph of points ``coords`` ``(N, c)``: ``(2, E)`` long
    edges (no self loops; each node linked to its ``k`` nearest, both directions). NaN/inf
    coordinates are refused.

    >>> knn_graph(torch.tensor([[0.0], [1.0], [3.0]]), 1).tolist()
    [[0, 1, 1, 2], [1, 0, 2, 1]]
    """
    owner = "knn_graph"
    check_tensor("coords", owner, coords, ndim=2)
    n = coords.shape[0]
    k = check_int("k", owner, k, low=1, high=max(1, n - 1))
    dist = torch.cdist(coords.double(), coords.double())
    dist.fill_diagonal_(float("inf"))
    nbr = dist.topk(k, largest=False).indices
    adj = torch.zeros(n, n, dtype=torch.bool)
    adj[torch.arange(n)[:, None], nbr] = True
    adj = adj | adj.T
    src, dst = adj.nonzero(as_tuple=True)
    return torch.stack([src, dst])


def _check_edges(edge_index: Tensor, n: int, owner: str) -> Tensor:
    check_tensor("edge_index", owner, edge_index, shape=(2, None), dtype="int", nonempty=False)
    if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= n):
        raise param_error(
            "edge_index",
            owner,
            f"node ids below the 'n_nodes' parameter ({n})",
            describe(edge_index),
        )
    return edge_index.long()


def prior_mask(edge_index: Tensor, n_nodes: int) -> Tensor:
    """Dense ``(N, N)`` boolean mask, ``mask[i, j]`` when the edge ``j -> i`` exists or ``i == j``
    (row ``i`` lists the nodes ``i`` may attend to). Ids outside ``[0, n_nodes)`` are refused.

    >>> prior_mask(torch.tensor([[0], [2]]), 3).int().tolist()
    [[1, 0, 0], [0, 1, 0], [1, 0, 1]]
    """
    n = check_int("n_nodes", "prior_mask", n_nodes, low=1, high=1_000_000)
    edge_index = _check_edges(edge_index, n, "prior_mask")
    mask = torch.eye(n, dtype=torch.bool, device=edge_index.device)
    mask[edge_index[1], edge_index[0]] = True
    return mask


def normalized_adjacency(edge_index: Tensor, n_nodes: int) -> Tensor:
    r"""Row-normalised adjacency with self loops, :math:`D^{-1}(A + I)`, dense ``(N, N)`` float.

    >>> normalized_adjacency(torch.tensor([[0, 1], [1, 0]]), 2).tolist()
    [[0.5, 0.5], [0.5, 0.5]]
    """
    mask = prior_mask(edge_index, n_nodes).float()
    return mask / mask.sum(1, keepdim=True)
