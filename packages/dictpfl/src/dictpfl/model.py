"""The small "pretrained" model: an MLP body (ReLU) and a linear ``head``.

Pretraining trains body and head on the public split (Adam); :func:`pretrained_mlp` then puts a
freshly initialised head on it, the new task's classifier that federated fine-tuning learns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from torch import nn

from dictpfl.data import FederatedData, check_federated_data
from paperkit import (
    Described,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)

__all__ = ["MLP", "accuracy", "check_model", "mlp_bytes", "pretrained_mlp"]


def _widths(owner: str, hidden: Any) -> list[int]:
    """A non-empty sequence of integer widths >= 1."""
    expected = "a non-empty sequence of integer widths >= 1"
    if isinstance(hidden, (str, bytes)) or not hasattr(hidden, "__len__"):
        raise param_error(
            "hidden", owner, expected, Described(f"a {type(hidden).__name__}"), cls=TypeError
        )
    widths = list(hidden)
    if any(isinstance(h, bool) or not isinstance(h, (int, np.integer)) for h in widths):
        raise param_error("hidden", owner, expected, widths, cls=TypeError)
    if not widths or min(widths) < 1:
        raise param_error("hidden", owner, expected, widths)
    return [int(h) for h in widths]


def mlp_bytes(d_in: int, hidden: Sequence[int], n_classes: int) -> int:
    """Bytes an MLP's float32 weights take with their gradients and Adam's two moments."""
    dims = [d_in, *hidden, n_classes]
    return 16 * sum((a + 1) * b for a, b in zip(dims, dims[1:], strict=False))


class MLP(nn.Module):
    """``x -> relu(L_1 x) -> ... -> relu(L_m ·) -> head``; layers in ``self.body``.

    Args:
        d_in: input features (>= 1).
        hidden: the widths of the body's layers (a non-empty sequence of integers >= 1).
        n_classes: outputs of the head (>= 2); the weights must fit in memory.

    ``forward(x)``: x (n, d_in) of the model's dtype; NaN or inf in x is refused.
    """

    def __init__(self, d_in: int, hidden: Sequence[int], n_classes: int):
        super().__init__()
        owner = "MLP"
        d_in = check_int("d_in", owner, d_in, low=1)
        widths = _widths(owner, hidden)
        n_classes = check_int("n_classes", owner, n_classes, low=2)
        check_memory("hidden", owner, hidden, mlp_bytes(1, widths, 1))
        check_memory("d_in", owner, d_in, 16 * (d_in + 1) * widths[0])
        check_memory("n_classes", owner, n_classes, 16 * (widths[-1] + 1) * n_classes)
        dims = [d_in, *widths]
        self.body = nn.ModuleList(nn.Linear(a, b) for a, b in zip(dims, dims[1:], strict=False))
        self.head = nn.Linear(dims[-1], n_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Logits (n, n_classes) of inputs x (n, d_in)."""
        weight = self.head.weight
        d_in = self.body[0].in_features
        check_tensor("x", "MLP", x, shape=(None, d_in), dtype=weight.dtype, device=weight.device)
        for layer in self.body:
            x = torch.relu(layer(x))
        return self.head(x)


def check_model(name: str, owner: str, model: Any) -> nn.Module:
    """An ``nn.Module`` with trainable parameters (the shared set is not empty)."""
    if not isinstance(model, nn.Module):
        raise param_error(name, owner, "a torch.nn.Module", describe(model), cls=TypeError)
    if not any(p.requires_grad for p in model.parameters()):
        raise param_error(
            name, owner, "a model with trainable parameters", Described("a model with none")
        )
    return model


@torch.no_grad()
def accuracy(model: nn.Module, X: torch.Tensor, y: torch.Tensor) -> float:
    """Top-1 accuracy of ``model`` on inputs X (n, d) and integer labels y (n,).

    X is cast to the dtype of the model's parameters; NaN or inf in X is refused; labels must
    be >= 0.
    """
    owner = "accuracy"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", describe(model), cls=TypeError)
    dims: dict = {}
    check_tensor("X", owner, X, shape=("n", "d"), dims=dims)
    check_tensor("y", owner, y, shape=("n",), dims=dims, dtype="int")
    if int(y.min()) < 0:
        raise param_error("y", owner, "labels >= 0", Described(f"a smallest label {int(y.min())}"))
    if isinstance(model, MLP) and X.shape[1] != model.body[0].in_features:
        raise param_error(
            "X", owner, f"of shape (n, {model.body[0].in_features}) for this model", describe(X)
        )
    weight = next(model.parameters(), None)
    if weight is not None:
        X = X.to(weight.dtype)
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
    """Train an MLP on ``data.public``, then replace its head by a new random one (seeded).

    ``epochs`` >= 1, ``lr`` > 0, ``batch_size`` >= 1, ``seed`` >= 0; ``data`` as
    :func:`dictpfl.data.check_federated_data` requires (finite features: NaN is refused).
    """
    owner = "pretrained_mlp"
    check_federated_data("data", owner, data)
    hidden = _widths(owner, hidden)
    check_memory("hidden", owner, hidden, mlp_bytes(data.n_features, hidden, data.n_classes))
    epochs = check_int("epochs", owner, epochs, low=1)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    batch_size = check_int("batch_size", owner, batch_size, low=1)
    seed = check_int("seed", owner, seed, low=0)
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
