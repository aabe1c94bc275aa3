"""One call that turns a graph and its context mask into the inputs of :class:`symgfm.TSGNN`."""

from __future__ import annotations

from torch import Tensor
from torch_geometric.data import Data

from paperkit import check_int
from symgfm.conversions import maps_from_features, propagate_features
from symgfm.graph import check_graph, check_layers, clean_edges, normalize_features, one_hot_context

__all__ = ["prepare_graph"]


def prepare_graph(
    data: Data, train_mask: Tensor, ls_num_layers: int = 1, pca_dim: int = 2048
) -> Data:
    """Pre-process a graph as the paper does (Sec. 5) with ``train_mask`` as the context nodes.

    1. ``x_norm``: rows of ``x`` scaled to unit L2 norm (if ``F > pca_dim``: rows standardised
       and projected on ``min(pca_dim, N)`` principal components first);
    2. ``y0`` ``(N, C)``: one-hot labels of the ``train_mask`` nodes, zero rows elsewhere;
    3. ``edge_index``: self-loops removed, made undirected and coalesced;
    4. ``feats``: :math:`M^l X` and :math:`(I - M)^l X` for :math:`l \\le L`
       (:func:`symgfm.conversions.propagate_features`), kept so maps can be refitted cheaply;
    5. ``conversions``: the least-squares maps fitted on the ``train_mask`` nodes
       (:func:`symgfm.least_squares_maps`).

    Args:
        data: a ``Data`` with ``x`` ``(N, F)`` floating (NaN/inf refused), ``y`` ``(N,)`` labels
            ``0..C-1`` with ``C >= 2``, ``edge_index`` ``(2, E)``.
        train_mask: ``(N,)`` boolean; must hold a node of every class.
        ls_num_layers: :math:`L \\in [0, 8]`.
        pca_dim: the feature width above which PCA is applied (``>= 1``).

    Returns:
        A new ``Data`` with ``x`` (the input), ``x_norm``, ``y``, ``y0``, ``train_mask``,
        ``edge_index``, ``feats``, ``conversions``, ``num_classes`` and ``ls_num_layers``.

    >>> import torch
    >>> g = Data(x=torch.rand(6, 3), y=torch.tensor([0, 1, 0, 1, 0, 1]),
    ...          edge_index=torch.tensor([[0, 1, 2, 3, 4], [1, 2, 3, 4, 5]]))
    >>> p = prepare_graph(g, torch.tensor([1, 1, 1, 1, 0, 0], dtype=torch.bool))
    >>> tuple(p.y0.shape), p.y0[4].tolist(), p.edge_index.shape[1]
    ((6, 2), [0.0, 0.0], 10)
    """
    owner = "prepare_graph"
    x, y, edge_index, train_mask, C = check_graph(owner, data, train_mask)
    L = check_layers(owner, ls_num_layers)
    pca_dim = check_int("pca_dim", owner, pca_dim, low=1)
    edge_index = clean_edges(edge_index, x.shape[0])
    x_norm = normalize_features(x, pca_dim)
    y0 = one_hot_context(y, train_mask, C, x_norm.dtype)
    feats = propagate_features(x_norm, edge_index, L)
    return Data(
        x=x,
        x_norm=x_norm,
        y=y,
        y0=y0,
        train_mask=train_mask,
        edge_index=edge_index,
        feats=feats,
        conversions=maps_from_features(feats, y0, train_mask),
        num_classes=C,
        ls_num_layers=L,
    )
