"""The message-passing baseline: GIN (Xu et al., 2019), 3 layers, sum readout.

h_v^{(k+1)} = MLP^{(k)}((1 + ε) h_v^{(k)} + Σ_{u ∈ N(v)} h_u^{(k)}), graph readout Σ_v h_v^{(K)},
then an MLP head. GIN is as expressive as 1-WL, so it cannot separate the 4-regular CSL classes.
"""

from __future__ import annotations

import torch
from torch import nn
from torch_geometric.data import Batch, Data
from torch_geometric.nn import GINConv, global_add_pool

from paperkit import check_int, check_memory
from rsnn.graph import check_graph_data

__all__ = ["GIN"]


class GIN(nn.Module):
    """GIN with ``num_layers`` GINConv layers (2-layer MLPs, learnable ε) and a sum readout.

    Args:
        in_dim: node feature size F >= 1 (the batch's ``x`` is (N, F)).
        hidden: width of every layer.
        out_dim: output size.
        num_layers: message-passing layers; the weights (about 2·hidden² per layer) must fit in
            memory.

    NaN or inf in the batch's ``x`` is refused; ``x`` is cast to the model's dtype.
    """

    def __init__(self, in_dim: int, hidden: int = 64, out_dim: int = 1, num_layers: int = 3):
        super().__init__()
        owner = "GIN"
        in_dim = check_int("in_dim", owner, in_dim, low=1)
        hidden = check_int("hidden", owner, hidden, low=1)
        out_dim = check_int("out_dim", owner, out_dim, low=1)
        num_layers = check_int("num_layers", owner, num_layers, low=1)
        check_memory("hidden", owner, hidden, 16 * 2 * hidden * hidden)
        check_memory("num_layers", owner, num_layers, 16 * 2 * num_layers * hidden * hidden)
        for name, size in (("in_dim", in_dim), ("out_dim", out_dim)):
            check_memory(name, owner, size, 16 * size * hidden)
        self.in_dim = in_dim
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
        """(B, out_dim) for a PyG ``Batch`` of B graphs, (1, out_dim) for one ``Data``."""
        check_graph_data("batch", "GIN", batch, in_dim=self.in_dim, edge_dim=0)
        h = batch.x.to(self.head[0].weight.dtype)  # cast to the model's dtype
        for conv in self.convs:
            h = torch.relu(conv(h, batch.edge_index))
        graph_of = batch.batch if isinstance(batch, Batch) else torch.zeros_like(h[:, 0]).long()
        return self.head(global_add_pool(h, graph_of))
