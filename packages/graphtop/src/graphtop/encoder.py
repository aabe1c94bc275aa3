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

from paperkit import Described, check_int, check_tensor, describe, param_error

__all__ = ["GCNEncoder"]


class GCNEncoder(nn.Module):
    """``num_layers`` GCNConv layers ``in_dim -> hidden -> ... -> out_dim``.

    ``forward(x, edge_index, edge_weight=None) -> (N, out_dim)``. ``message_prompts`` (one vector
    per layer, used by the EdgePrompt baseline) is added to every layer's input, i.e. to every
    message :math:`h_j` that the layer aggregates (the self-loop message included).

    Shapes:
        x: ``(N, in_dim)`` in the encoder's dtype, finite (NaN and inf refused, another dtype is
        a ``TypeError``); edge_index: ``(2, E)`` integer ids in ``[0, N)`` (``E = 0`` allowed);
        edge_weight: ``(E,)`` in ``x``'s dtype, finite and non-negative, or None (all ones).

    >>> enc = GCNEncoder(3, hidden=8, out_dim=4)
    >>> enc(torch.randn(5, 3), torch.tensor([[0, 1, 2], [1, 2, 3]])).shape
    torch.Size([5, 4])
    """

    def __init__(self, in_dim: int, hidden: int = 128, out_dim: int = 128, num_layers: int = 2):
        super().__init__()
        owner = "GCNEncoder"
        in_dim = check_int("in_dim", owner, in_dim, low=1)
        hidden = check_int("hidden", owner, hidden, low=1)
        out_dim = check_int("out_dim", owner, out_dim, low=1)
        num_layers = check_int("num_layers", owner, num_layers, low=1)
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
        self._check(x, edge_index, edge_weight, message_prompts)
        for i, conv in enumerate(self.convs):
            if message_prompts is not None:
                x = x + message_prompts[i]
            x = conv(x, edge_index, edge_weight)
            if i < self.num_layers - 1:
                x = F.relu(x)
        return x

    def _check(
        self,
        x: torch.Tensor,
        edge_index: torch.Tensor,
        edge_weight: torch.Tensor | None,
        message_prompts: Sequence[torch.Tensor] | None,
    ) -> None:
        owner = "GCNEncoder.forward"
        weight = next(self.parameters())
        dims: dict = {}
        common = {"dims": dims, "device": weight.device}
        check_tensor("x", owner, x, shape=("N", self.in_dim), dtype=weight.dtype, **common)
        check_tensor(
            "edge_index", owner, edge_index, shape=(2, "E"), dtype="int", nonempty=False, **common
        )
        if edge_index.numel() and (int(edge_index.min()) < 0 or int(edge_index.max()) >= len(x)):
            raise param_error(
                "edge_index",
                owner,
                f"node ids in [0, {len(x)})",
                Described(f"ids from {int(edge_index.min())} to {int(edge_index.max())}"),
            )
        if edge_weight is not None:
            check_tensor(
                "edge_weight",
                owner,
                edge_weight,
                shape=("E",),
                dtype=x.dtype,
                nonempty=False,
                **common,
            )
            if edge_weight.numel() and float(edge_weight.detach().min()) < 0:
                raise param_error(
                    "edge_weight", owner, "non-negative", float(edge_weight.detach().min())
                )
        if message_prompts is not None and len(message_prompts) != self.num_layers:
            raise param_error(
                "message_prompts",
                owner,
                f"one vector per layer ({self.num_layers})",
                describe(message_prompts),
            )
