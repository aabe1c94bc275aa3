"""The small "pretrained" model: an MLP body (ReLU) and a linear ``head``.

Pretraining trains body and head on the public split (Adam); :func:`pretrained_mlp` then puts a
freshly initialised head on it, the new task's classifier that federated fine-tuning learns.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from dictpfl.data import FederatedData
from paperkit import param_error

__all__ = ["MLP", "accuracy", "pretrained_mlp"]


class MLP(nn.Module):
    """``x -> relu(L_1 x) -> ... -> relu(L_m ·) -> head``; layers in ``self.body``."""

    def __init__(self, d_in: int, hidden: Sequence[int], n_classes: int):
        super().__init__()
        if len(hidden) == 0 or any(int(h) < 1 for h in hidden):
            raise param_error("hidden", "MLP", "a non-empty list of positive widths", hidden)
        dims = [d_in, *[int(h) for h in hidden]]
        self.body = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:], strict=False))
        self.head = nn.Linear(dims[-1], n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for layer in self.body:
            x = torch.relu(layer(x))
        return self.head(x)


@torch.no_grad()
def accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Top-1 accuracy."""
    return float((model(X).argmax(1) == y).float().mean())


def pretrained_mlp(
    data: FederatedData,
    hidden: Sequence[int] = (256, 256),
    *,
    epochs: int = 30,
    lr: float = 1e-3,
    batch_size: int = 32,
    seed: int = 0,
) -> MLP:
    """Train an MLP on ``data.public``, then replace its head by a new random one (seeded)."""
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    model = MLP(data.n_features, hidden, data.n_classes)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    X, y = data.public
    for _ in range(epochs):
        for idx in torch.randperm(len(y), generator=gen).split(batch_size):
            opt.zero_grad()
            nn.functional.cross_entropy(model(X[idx]), y[idx]).backward()
            opt.step()
    torch.manual_seed(seed + 1)
    model.head = nn.Linear(model.head.in_features, data.n_classes)
    return model
