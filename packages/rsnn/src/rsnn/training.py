"""A small training loop shared by the reproduction and the benchmark.

Adam, mini-batches of PyG graphs, cross-entropy (classification, accuracy) or L1 (regression,
mean absolute error). Sequence models draw fresh searches or walks at every step (``m`` per graph);
evaluation uses ``m_test`` per graph, and every method gets the same number of epochs.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import torch
from torch import nn
from torch_geometric.data import Batch, Data

from rsnn.baselines import GIN
from rsnn.models import _TraversalNet

__all__ = ["FitResult", "evaluate", "fit"]


@dataclass
class FitResult:
    """Test metric (accuracy or MAE), training losses per epoch, wall time and tokens read."""

    metric: float
    losses: list[float] = field(default_factory=list)
    seconds: float = 0.0
    train_tokens: int = 0


def _call(model: nn.Module, batch: Batch, m: int | None) -> torch.Tensor:
    if isinstance(model, GIN):
        return model(batch)
    return model(batch, m)


def _loss(out: torch.Tensor, y: torch.Tensor, task: str) -> torch.Tensor:
    if task == "classification":
        return nn.functional.cross_entropy(out, y)
    return nn.functional.l1_loss(out.squeeze(-1), y)


@torch.no_grad()
def evaluate(
    model: nn.Module, graphs: list[Data], task: str, m: int | None = None, batch_size: int = 64
) -> float:
    """Accuracy (classification) or mean absolute error (regression) on ``graphs``."""
    model.eval()
    total, n = 0.0, 0
    for i in range(0, len(graphs), batch_size):
        batch = Batch.from_data_list(graphs[i : i + batch_size])
        out = _call(model, batch, m)
        if task == "classification":
            total += float((out.argmax(-1) == batch.y).sum())
        else:
            total += float((out.squeeze(-1) - batch.y).abs().sum())
        n += batch.num_graphs
    return total / n


def fit(
    model: nn.Module,
    train: list[Data],
    test: list[Data],
    *,
    task: str,
    epochs: int,
    m: int | None = None,
    m_test: int | None = None,
    batch_size: int = 32,
    lr: float = 3e-3,
    seed: int = 0,
) -> FitResult:
    """Train ``model`` for ``epochs`` epochs with Adam (cosine learning-rate decay); test it."""
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=max(epochs, 1))
    losses, tokens = [], 0
    start = time.perf_counter()
    for _ in range(epochs):
        model.train()
        perm = torch.randperm(len(train), generator=gen).tolist()
        epoch_loss = 0.0
        for i in range(0, len(train), batch_size):
            batch = Batch.from_data_list([train[k] for k in perm[i : i + batch_size]])
            opt.zero_grad()
            loss = _loss(_call(model, batch, m), batch.y, task)
            if isinstance(model, _TraversalNet):
                tokens += model.last_num_tokens
            loss.backward()
            opt.step()
            epoch_loss += float(loss.detach()) * batch.num_graphs
        sched.step()
        losses.append(epoch_loss / len(train))
    seconds = time.perf_counter() - start
    metric = evaluate(model, test, task, m_test if m_test is not None else m)
    return FitResult(metric=metric, losses=losses, seconds=seconds, train_tokens=tokens)
