"""Training and evaluating the small classifiers of the reproduction (digits, Sec. 4 at small
scale): AdamW with a cosine learning-rate schedule and cross-entropy, full-batch evaluation."""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from paperkit import check_int, check_real

__all__ = ["accuracy", "train_classifier"]


def accuracy(model: torch.nn.Module, X: torch.Tensor, y: torch.Tensor, batch: int = 512) -> float:
    """Fraction of ``X`` the model classifies as ``y`` (evaluation mode, no gradients)."""
    model.eval()
    with torch.no_grad():
        hits = sum(
            int((model(X[i : i + batch]).argmax(-1) == y[i : i + batch]).sum())
            for i in range(0, len(X), batch)
        )
    return hits / len(X)


def train_classifier(
    model: torch.nn.Module,
    X: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int,
    lr: float = 2e-3,
    weight_decay: float = 0.05,
    batch: int = 64,
    seed: int = 0,
) -> list[float]:
    """Train ``model`` on (X, y) with AdamW (linear warm-up over the first epoch, then cosine
    decay); returns the mean training loss of each epoch."""
    owner = "train_classifier"
    epochs = check_int("epochs", owner, epochs, low=1, high=10**5)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    batch = check_int("batch", owner, batch, low=1)
    g = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    per_epoch = math.ceil(len(X) / batch)
    total = epochs * per_epoch

    def factor(step: int) -> float:
        if step < per_epoch:
            return (step + 1) / per_epoch
        return 0.5 * (1 + math.cos(math.pi * (step - per_epoch) / max(total - per_epoch, 1)))

    sched = torch.optim.lr_scheduler.LambdaLR(opt, factor)
    losses = []
    for _ in range(epochs):
        model.train()
        order = torch.randperm(len(X), generator=g)
        running = 0.0
        for i in range(0, len(X), batch):
            idx = order[i : i + batch]
            loss = F.cross_entropy(model(X[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            running += float(loss.detach()) * len(idx)
        losses.append(running / len(X))
    return losses
