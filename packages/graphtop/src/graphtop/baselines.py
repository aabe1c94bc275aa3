r"""The baselines, on the same target subgraphs, head and training loop as GraphTOP.

* :class:`LinearProbe`: frozen encoder, linear head: :math:`W f_\theta(X_S, E_S)[v] + b`.
* :class:`GPF` (Fang et al., 2023): one learnable vector added to every node feature,
  :math:`x_i + p`.
* :class:`GPFPlus`: :math:`x_i + \sum_k \alpha_{ik} p_k`, :math:`\alpha_i =
  \mathrm{softmax}(a_k^\top x_i)_k` over P = 10 learnable basis vectors.
* :class:`EdgePromptLite` (after Fu et al., 2025): a learnable vector per layer added to every
  message, :math:`h_i' = \sum_j \hat a_{ij} (h_j + e^{(l)}) W^{(l)}` (the self-loop message too).
* :class:`FineTune`: no prompt; the encoder's weights are trained with the head (from a copy of
  the pre-trained weights, restored at every ``fit``).

Every baseline checks its inputs as :class:`~graphtop.base.SubgraphClassifier` does (NaN or inf
features refused, see there).
"""

from __future__ import annotations

import copy
from typing import Any

import torch
from torch import nn
from torch_geometric.data import Batch

from graphtop.base import SubgraphClassifier, target_positions
from graphtop.encoder import GCNEncoder
from paperkit import Described, check_int, param_error

__all__ = ["GPF", "EdgePromptLite", "FineTune", "GPFPlus", "LinearProbe"]


def _in_dim(encoder: nn.Module, owner: str) -> int:
    width = getattr(encoder, "in_dim", None)
    if not isinstance(width, int):
        raise param_error(
            "encoder",
            owner,
            "a GNN with an integer in_dim (e.g. GCNEncoder)",
            Described(type(encoder).__name__),
        )
    return width


class LinearProbe(SubgraphClassifier):
    """Frozen encoder on the unmodified subgraph, trainable linear head. Inputs are checked as in
    :meth:`~graphtop.base.SubgraphClassifier.fit` (NaN or inf features refused)."""

    def _forward(self, batch: Batch, ctx: dict[str, Any], **kw: Any) -> tuple[torch.Tensor, dict]:
        z = self.encoder(batch.x, batch.edge_index, batch.edge_weight)[target_positions(batch)]
        return self.classifier(z), {}


class GPF(SubgraphClassifier):
    """Graph Prompt Feature: one learnable vector ``p`` (Xavier-initialised) added to all ``x``.
    Inputs are checked as in :meth:`~graphtop.base.SubgraphClassifier.fit` (NaN features
    refused)."""

    def __init__(self, encoder: nn.Module, num_classes: int, hidden: int = 128, num_hops: int = 2):
        super().__init__(encoder, num_classes, hidden, num_hops)
        self.prompt = nn.Parameter(torch.empty(1, _in_dim(encoder, type(self).__name__)))
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters(generator)
        nn.init.xavier_uniform_(self.prompt, generator=generator)

    def prompted(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.prompt

    def _forward(self, batch: Batch, ctx: dict[str, Any], **kw: Any) -> tuple[torch.Tensor, dict]:
        x = self.prompted(batch.x)
        z = self.encoder(x, batch.edge_index, batch.edge_weight)[target_positions(batch)]
        return self.classifier(z), {}


class GPFPlus(GPF):
    """GPF-plus: a per-node attention mixture of ``num_basis`` (>= 1) learnable basis vectors.
    Inputs are checked as in :meth:`~graphtop.base.SubgraphClassifier.fit` (NaN features
    refused)."""

    def __init__(
        self,
        encoder: nn.Module,
        num_classes: int,
        hidden: int = 128,
        num_hops: int = 2,
        num_basis: int = 10,
    ):
        SubgraphClassifier.__init__(self, encoder, num_classes, hidden, num_hops)
        in_dim = _in_dim(encoder, type(self).__name__)
        num_basis = check_int("num_basis", "GPFPlus", num_basis, low=1)
        self.prompt = nn.Parameter(torch.empty(num_basis, in_dim))
        self.attention = nn.Linear(in_dim, num_basis)
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters(generator)
        nn.init.xavier_uniform_(self.attention.weight, generator=generator)
        nn.init.zeros_(self.attention.bias)

    def prompted(self, x: torch.Tensor) -> torch.Tensor:
        alpha = torch.softmax(self.attention(x), dim=-1)
        return x + alpha @ self.prompt


class EdgePromptLite(SubgraphClassifier):
    """One learnable vector per layer added to every message of that layer (needs a
    :class:`~graphtop.encoder.GCNEncoder`). Inputs are checked as in
    :meth:`~graphtop.base.SubgraphClassifier.fit` (NaN features refused)."""

    def __init__(self, encoder: nn.Module, num_classes: int, hidden: int = 128, num_hops: int = 2):
        if not isinstance(encoder, GCNEncoder):
            raise param_error(
                "encoder",
                "EdgePromptLite",
                "a GCNEncoder",
                Described(type(encoder).__name__),
                cls=TypeError,
            )
        super().__init__(encoder, num_classes, hidden, num_hops)
        self.prompts = nn.ParameterList(
            nn.Parameter(torch.empty(1, conv.in_channels)) for conv in encoder.convs
        )
        self.reset_parameters()

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters(generator)
        for prompt in self.prompts:
            nn.init.xavier_uniform_(prompt, generator=generator)

    def _forward(self, batch: Batch, ctx: dict[str, Any], **kw: Any) -> tuple[torch.Tensor, dict]:
        h = self.encoder(batch.x, batch.edge_index, batch.edge_weight, message_prompts=self.prompts)
        return self.classifier(h[target_positions(batch)]), {}


class FineTune(LinearProbe):
    """Encoder and head trained together, starting from (a copy of) the pre-trained weights.
    Inputs are checked as in :meth:`~graphtop.base.SubgraphClassifier.fit` (NaN features
    refused)."""

    frozen = False

    def __init__(self, encoder: nn.Module, num_classes: int, hidden: int = 128, num_hops: int = 2):
        super().__init__(copy.deepcopy(encoder), num_classes, hidden, num_hops)
        self.encoder.requires_grad_(True)
        self.pretrained_state = copy.deepcopy(self.encoder.state_dict())

    def reset_parameters(self, generator: torch.Generator | None = None) -> None:
        super().reset_parameters(generator)
        if hasattr(self, "pretrained_state"):
            self.encoder.load_state_dict(self.pretrained_state)

    def trainable_parameters(self) -> list[nn.Parameter]:
        return list(self.parameters())
