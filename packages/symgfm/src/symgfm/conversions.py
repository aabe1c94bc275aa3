"""The data-dependent least-squares maps between feature space and label space (paper Sec. 4).

For :math:`l = 0..L` let :math:`X_l = M^l X` (homophilic) and, for :math:`l \\ge 1`,
:math:`\\tilde X_l = (I - M)^l X` (heterophilic), with :math:`M` the mean-aggregation operator.
Fitted by :func:`symgfm.ridge_ls` on the context nodes :math:`S` (the nodes whose labels are fed):

==================  =========================================================  ==============
key                 fit                                                        ``W`` shape
==================  =========================================================  ==============
``ls2y_{l}``        :math:`X_l[S] \\to Y[S]`                                     ``(F, C)``
``ls2x_{l}``        :math:`Y[S] \\to X_l[S]`                                     ``(C, F)``
``ls2y_{l}_het``    :math:`\\tilde X_l[S] \\to Y[S]` (``l >= 1``)                 ``(F, C)``
``ls2x_{l}_het``    :math:`Y[S] \\to \\tilde X_l[S]` (``l >= 1``)                 ``(C, F)``
``pool2y``          :math:`\\mathrm{mean}_F X[S] \\to Y[S]`                       ``(1, C)``
``pool2x``          :math:`\\mathrm{mean}_C Y[S] \\to X[S]`                       ``(1, F)``
==================  =========================================================  ==============

Each value is ``(W, b)``. Permuting the features permutes the rows/columns of every map
consistently, relabelling the classes likewise, and permuting the nodes changes nothing (the
penalty is chosen by leave-one-out, not random folds): the maps keep the triple symmetry.
"""

from __future__ import annotations

import torch
from torch import Tensor

from paperkit import check_tensor, param_error
from symgfm.graph import check_layers, mean_aggregate
from symgfm.ridge import ridge_ls

__all__ = ["least_squares_maps", "maps_from_features", "propagate_features"]

Maps = dict[str, tuple[Tensor, Tensor]]


def propagate_features(x: Tensor, edge_index: Tensor, ls_num_layers: int) -> dict[str, Tensor]:
    """:math:`X_l = M^l X` (``"0"``..``"L"``) and :math:`\\tilde X_l = (I-M)^l X`
    (``"1_het"``..``"L_het"``), keyed as the maps they feed. No checks (inner helper)."""
    feats = {"0": x}
    homo, het = x, x
    for layer in range(1, ls_num_layers + 1):
        homo = mean_aggregate(homo, edge_index)
        het = het - mean_aggregate(het, edge_index)
        feats[str(layer)], feats[f"{layer}_het"] = homo, het
    return feats


def maps_from_features(feats: dict[str, Tensor], y_onehot: Tensor, mask: Tensor) -> Maps:
    """Every map of the table above, fitted on the rows ``mask`` of the propagated features
    ``feats`` (:func:`propagate_features`) and of ``y_onehot``. No checks (inner helper)."""
    ys = y_onehot[mask]
    maps: Maps = {}
    for key, feat in feats.items():
        xs = feat[mask]
        maps[f"ls2y_{key}"] = ridge_ls(xs, ys)
        maps[f"ls2x_{key}"] = ridge_ls(ys, xs)
    x0 = feats["0"][mask]
    maps["pool2y"] = ridge_ls(x0.mean(1, keepdim=True), ys)
    maps["pool2x"] = ridge_ls(ys.mean(1, keepdim=True), x0)
    return maps


def least_squares_maps(
    x: Tensor,
    y_onehot: Tensor,
    edge_index: Tensor,
    train_mask: Tensor,
    ls_num_layers: int = 1,
) -> Maps:
    """The least-squares conversions of the paper, fitted on the nodes of ``train_mask``.

    Args:
        x: ``(N, F)`` node features (normalised as by :func:`symgfm.prepare_graph`); floating,
            NaN and inf refused.
        y_onehot: ``(N, C)`` one-hot labels (rows outside ``train_mask`` are ignored), same dtype.
        edge_index: ``(2, E)`` integer edges in ``[0, N)``.
        train_mask: ``(N,)`` boolean: the context nodes the maps are fitted on (at least one).
        ls_num_layers: :math:`L \\in [0, 8]`, the largest power of :math:`M` and :math:`I - M`.

    Returns:
        ``{key: (W, b)}`` with the keys of the module table; ``2 + 2(2L + 1)`` entries.

    >>> x = torch.eye(4)
    >>> y = torch.eye(2).repeat(2, 1)
    >>> ei = torch.tensor([[0, 1, 2, 3], [1, 0, 3, 2]])
    >>> m = least_squares_maps(x, y, ei, torch.ones(4, dtype=torch.bool), 1)
    >>> sorted(m)
    ['ls2x_0', 'ls2x_1', 'ls2x_1_het', 'ls2y_0', 'ls2y_1', 'ls2y_1_het', 'pool2x', 'pool2y']
    >>> tuple(m["ls2y_1"][0].shape), tuple(m["pool2x"][0].shape)
    ((4, 2), (1, 4))
    """
    owner = "least_squares_maps"
    dims: dict = {}
    check_tensor("x", owner, x, shape=("N", "F"), dims=dims)
    check_tensor("y_onehot", owner, y_onehot, shape=("N", "C"), dims=dims, dtype=x.dtype)
    check_tensor("edge_index", owner, edge_index, shape=(2, None), dtype="int", nonempty=False)
    check_tensor("train_mask", owner, train_mask, shape=("N",), dims=dims, dtype=torch.bool)
    n = x.shape[0]
    if edge_index.numel() and (edge_index.min() < 0 or edge_index.max() >= n):
        bad = edge_index.min() if edge_index.min() < 0 else edge_index.max()
        raise param_error("edge_index", owner, f"entries in [0, {n})", int(bad))
    if not bool(train_mask.any()):
        raise param_error("train_mask", owner, "a mask with at least one True", "none")
    L = check_layers(owner, ls_num_layers)
    return maps_from_features(propagate_features(x, edge_index, L), y_onehot, train_mask)
