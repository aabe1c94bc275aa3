"""The message-passing baseline: GIN (Xu et al., 2019), 3 layers, sum readout.

h_v^{(k+1)} = MLP^{(k)}((1 + ε) h_v^{(k)} + Σ_{u ∈ N(v)} h_u^{(k)}), graph readout Σ_v h_v^{(K)},
then an MLP head. GIN is as expressive as 1-WL, so it cannot separate the 4-regular CSL classes.
"""

from __future__ import annotations

import torch
from torch import nn
from torch_geometric.data import Batch, Data
from torch_geometric.nn import GINConv, global_add_pool

from rsnn.graph import check_positive

__all__ = ["GIN"]


class GIN(nn.Module):
    """GIN with ``num_layers`` GINConv layers (2-layer MLPs, learnable ε) and a sum readout."""

    def __init__(self, in_dim: int, hidden: int = 64, out_dim: int = 1, num_layers: int = 3):
        super().__init__()
        check_positive(in_dim, "in_dim", "GIN")
        check_positive(num_layers, "num_layers", "GIN")
        dims = [in_dim] + [hidden] * num_layers
        self.convs = nn.ModuleList(
            GINConv(
                nn.Sequential(nn.Linear(a, hidden), nn.ReLU(), nn.Linear(hidden, hidden)),
                train_eps=True,
            )
            for a in dims[:-1]
        )
        self.head = nn.Sequential(nn.Linear(hidden, hidden), nn.ReLU(), nn.Linear(hidden, out_dim))

    def forward(self, batch: Data) -> torch.Tensor:
        h = batch.x.float()
        for conv in self.convs:
            h = torch.relu(conv(h, batch.edge_index))
        graph_of = batch.batch if isinstance(batch, Batch) else torch.zeros_like(h[:, 0]).long()
        return self.head(global_add_pool(h, graph_of))
