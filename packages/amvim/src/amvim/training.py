"""Training and evaluation loops of the reproduction: AdamW with a cosine schedule, cross-entropy,
and accuracy under a pruner."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from amvim.pruning import TokenPruner
from paperkit import check_int, check_real, check_tensor

__all__ = ["accuracy", "fit"]


def fit(
    model: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int,
    lr: float = 1e-3,
    batch_size: int = 64,
    weight_decay: float = 0.05,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` on (X, y) for ``epochs`` with AdamW (``lr``, ``weight_decay``) and a
    cosine learning-rate decay, shuffled mini-batches; returns the mean loss per epoch.
    NaN policy: NaN or inf in X is refused."""
    owner = "fit"
    dims: dict = {}
    check_tensor("X", owner, X, shape=("n", None, None, None), dims=dims)
    check_tensor("y", owner, y, shape=("n",), dims=dims, dtype="int")
    epochs = check_int("epochs", owner, epochs, low=1, high=10_000)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    batch_size = check_int("batch_size", owner, batch_size, low=1)
    g = torch.Generator().manual_seed(check_int("seed", owner, seed, low=0))
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    steps = epochs * math.ceil(len(X) / batch_size)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: 0.5 * (1 + math.cos(math.pi * s / steps))
    )
    losses = []
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(X), generator=g)
        total = 0.0
        for start in range(0, len(X), batch_size):
            idx = order[start : start + batch_size]
            loss = F.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += float(loss.detach()) * len(idx)
        losses.append(total / len(X))
    model.eval()
    return losses


@torch.no_grad()
def accuracy(
    model: nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    pruner: TokenPruner | None = None,
    batch_size: int = 256,
) -> float:
    """Top-1 accuracy of ``model(X, pruner=pruner)`` on labels y, in eval mode."""
    model.eval()
    hits = 0
    for start in range(0, len(X), batch_size):
        logits = model(X[start : start + batch_size], pruner=pruner)
        hits += int((logits.argmax(-1) == y[start : start + batch_size]).sum())
    return hits / len(X)
