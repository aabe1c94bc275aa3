"""The baselines of the paper's comparison (Sec. 5), each ``fit_predict(data) -> (N, C)`` scores
for a ``Data`` with ``x``, ``y``, ``edge_index`` and ``train_mask`` (only train labels are fed).

* :class:`LinearGNN`: GraphAny's non-parametric linear GNNs. For each hop :math:`l`, the closed-form
  ridge fit of :math:`M^l X[\\mathrm{train}] \\to Y[\\mathrm{train}]`
  (:func:`symgfm.ridge_ls`) predicts :math:`M^l X W_l + b_l`; the hop with the least
  leave-one-out error on the train nodes is used (no learned combination, no training graph).
* :class:`LabelPropagation`: ``torch_geometric.nn.LabelPropagation`` from the train labels.
* :class:`EndToEndMeanGNN`: a two-layer mean-aggregation GNN trained on the graph's own train
  labels (Adam, dropout 0.5, weight decay 5e-4): the per-graph supervised reference.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import Tensor, nn
from torch_geometric.data import Data
from torch_geometric.nn import GraphConv
from torch_geometric.nn import LabelPropagation as PyGLabelPropagation

from paperkit import check_int, check_real, param_error
from symgfm.conversions import propagate_features
from symgfm.graph import check_graph, clean_edges, normalize_features, one_hot_context
from symgfm.ridge import ridge_loo_errors, ridge_ls

__all__ = ["EndToEndMeanGNN", "LabelPropagation", "LinearGNN"]


def _graph(owner: str, data: Data) -> tuple[Tensor, Tensor, Tensor, Tensor, int]:
    mask = data.get("train_mask") if isinstance(data, Data) else None
    if mask is None:
        raise param_error(
            "data", owner, "a Data with a train_mask", type(data).__name__, cls=TypeError
        )
    x, y, ei, mask, C = check_graph(owner, data, mask, "data", "data")
    return normalize_features(x), y, clean_edges(ei, x.shape[0]), mask, C


class LinearGNN:
    """GraphAny-style linear GNN: ridge from :math:`M^l X` to the one-hot train labels, the hop
    :math:`l \\in` ``hops`` picked by leave-one-out error. ``fit_predict(data)`` returns
    ``(N, C)`` scores; ``chosen_hop_`` the hop used. NaN features are refused.

    >>> g = Data(x=torch.eye(4), y=torch.tensor([0, 1, 0, 1]),
    ...          edge_index=torch.tensor([[0, 2], [2, 0]]),
    ...          train_mask=torch.ones(4, dtype=torch.bool))
    >>> LinearGNN().fit_predict(g).argmax(1).tolist()
    [0, 1, 0, 1]
    """

    def __init__(self, hops: Sequence[int] = (0, 1, 2)) -> None:
        if isinstance(hops, (str, bytes)) or not isinstance(hops, Sequence) or not hops:
            raise param_error(
                "hops", "LinearGNN", "a non-empty sequence of integers", hops, cls=TypeError
            )
        self.hops = tuple(check_int("hops", "LinearGNN", h, low=0, high=8) for h in hops)

    def fit_predict(self, data: Data) -> Tensor:
        x, y, ei, mask, C = _graph("LinearGNN.fit_predict", data)
        y0 = one_hot_context(y, mask, C, x.dtype)
        feats = propagate_features(x, ei, max(self.hops))
        errs = [float(ridge_loo_errors(feats[str(h)][mask], y0[mask]).min()) for h in self.hops]
        self.chosen_hop_ = self.hops[min(range(len(errs)), key=errs.__getitem__)]
        xh = feats[str(self.chosen_hop_)]
        W, b = ridge_ls(xh[mask], y0[mask])
        return xh @ W + b


class LabelPropagation:
    """Label propagation (PyG): :math:`Y^{(t+1)} = \\alpha \\hat A Y^{(t)} + (1-\\alpha) Y^{(0)}`,
    :math:`\\hat A = D^{-1/2} A D^{-1/2}`, from the one-hot train labels. ``fit_predict(data)``
    returns ``(N, C)`` scores (features unused; NaN in them refused all the same).

    >>> g = Data(x=torch.ones(4, 1), y=torch.tensor([0, 0, 1, 1]),
    ...          edge_index=torch.tensor([[0, 1, 2], [1, 0, 3]]),
    ...          train_mask=torch.tensor([True, False, True, False]))
    >>> LabelPropagation().fit_predict(g).argmax(1).tolist()
    [0, 0, 1, 1]
    """

    def __init__(self, num_layers: int = 10, alpha: float = 0.9) -> None:
        self.num_layers = check_int("num_layers", "LabelPropagation", num_layers, low=1, high=1000)
        self.alpha = check_real("alpha", "LabelPropagation", alpha, low=0, high=1)

    def fit_predict(self, data: Data) -> Tensor:
        x, y, ei, mask, C = _graph("LabelPropagation.fit_predict", data)
        lp = PyGLabelPropagation(self.num_layers, self.alpha)
        return lp(y, ei, mask=mask)


class EndToEndMeanGNN(nn.Module):
    """A per-graph supervised two-layer mean GNN, ``GraphConv(aggr="mean")`` (the 2-D
    :class:`symgfm.MeanGNN`) with ReLU and dropout; ``fit_predict(data)`` trains it on the train
    nodes (cross-entropy, Adam) from ``seed`` and returns ``(N, C)`` logits. NaN refused.

    Args:
        hidden: hidden width (``[1, 4096]``).
        epochs: full-batch training epochs (``[1, 100000]``).
        lr: Adam learning rate (``(0, 1]``); weight decay 5e-4, dropout 0.5.
        seed: initialisation and dropout seed (``>= 0``).
    """

    def __init__(
        self, hidden: int = 64, epochs: int = 200, lr: float = 0.01, seed: int = 0
    ) -> None:
        super().__init__()
        owner = "EndToEndMeanGNN"
        self.hidden = check_int("hidden", owner, hidden, low=1, high=4096)
        self.epochs = check_int("epochs", owner, epochs, low=1, high=100_000)
        self.lr = check_real("lr", owner, lr, low=0, low_open=True, high=1)
        self.seed = check_int("seed", owner, seed, low=0)

    def fit_predict(self, data: Data) -> Tensor:
        x, y, ei, mask, C = _graph("EndToEndMeanGNN.fit_predict", data)
        torch.manual_seed(self.seed)
        self.conv1 = GraphConv(x.shape[1], self.hidden, aggr="mean")
        self.conv2 = GraphConv(self.hidden, C, aggr="mean")
        self.to(x.dtype)
        opt = torch.optim.Adam(self.parameters(), lr=self.lr, weight_decay=5e-4)
        self.train()
        for _ in range(self.epochs):
            loss = F.cross_entropy(self(x, ei)[mask], y[mask])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        self.eval()
        with torch.no_grad():
            return self(x, ei)

    def forward(self, x: Tensor, edge_index: Tensor) -> Tensor:
        h = F.dropout(F.relu(self.conv1(x, edge_index)), 0.5, self.training)
        return self.conv2(h, edge_index)
