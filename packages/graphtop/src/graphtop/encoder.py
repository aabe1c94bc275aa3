r"""The backbone: a GCN with edge weights (the paper's and the official code's 2-layer GCN).

.. math::
    H^{(l+1)} = \sigma\big(\hat D^{-1/2} (A_w + I) \hat D^{-1/2} H^{(l)} W^{(l)} + b^{(l)}\big),
    \qquad \hat D_{ii} = 1 + \textstyle\sum_j (A_w)_{ij},

with ReLU between layers and no activation after the last one. The edge weights :math:`A_w` enter
the degree as well as the messages (PyG ``GCNConv``), so an edge of weight 0 is exactly an absent
edge: this is what lets GraphTOP switch candidate edges on and off through their weights.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F
from torch import nn
from torch_geometric.nn import GCNConv

from graphtop._checks import check_positive_int

__all__ = ["GCNEncoder"]


class GCNEncoder(nn.Module):
    """``num_layers`` GCNConv layers ``in_dim -> hidden -> ... -> out_dim``.

    ``forward(x, edge_index, edge_weight=None) -> (N, out_dim)``. ``message_prompts`` (one vector
    per layer, used by the EdgePrompt baseline) is added to every layer's input, i.e. to every
    message :math:`h_j` that the layer aggregates (the self-loop message included).
    """

    def __init__(self, in_dim: int, hidden: int = 128, out_dim: int = 128, num_layers: int = 2):
        super().__init__()
        for name, value in (("in_dim", in_dim), ("hidden", hidden), ("out_dim", out_dim)):
            check_positive_int(value, name, "GCNEncoder")
        check_positive_int(num_layers, "num_layers", "GCNEncoder")
        dims = [in_dim] + [hidden] * (num_layers - 1) + [out_dim]
        self.in_dim, self.hidden, self.out_dim, self.num_layers = (
            in_dim,
            hidden,
            out_dim,
            num_layers,
        )
        self.convs = nn.ModuleList(GCNConv(a, b) for a, b in zip(dims[:-1], dims[1:], strict=True))

    def forward(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        edge_weight: torch.Tensor | None = None,
        message_prompts: Sequence[torch.Tensor] | None = None,
    ) -> torch.Tensor:
        for i, conv in enumerate(self.convs):
            if message_prompts is not None:
                x = x + message_prompts[i]
            x = conv(x, edge_index, edge_weight)
            if i < self.num_layers - 1:
                x = F.relu(x)
        return x
