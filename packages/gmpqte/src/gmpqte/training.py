"""Training and evaluation of a classifier (the digits CNN, and 2-epoch STE QAT of quantised
copies): Adam on cross-entropy, seeded mini-batches."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from paperkit import check_int, check_real, check_tensor, param_error

__all__ = ["accuracy", "train_classifier"]


def _check_data(owner: str, model: Any, images: Any, labels: Any) -> torch.Tensor:
    """Check the arguments; return ``images`` cast to the model's dtype."""
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "a torch.nn.Module", type(model).__name__, cls=TypeError)
    dims: dict[str, Any] = {}
    check_tensor("images", owner, images, shape=("B", None, None, None), dims=dims)
    check_tensor("labels", owner, labels, shape=("B",), dims=dims, dtype="int")
    if bool((labels < 0).any()):
        raise param_error("labels", owner, "non-negative class labels", "a negative label")
    param = next(model.parameters(), None)
    return images.to(param.dtype) if param is not None else images


def train_classifier(
    model: nn.Module,
    images: torch.Tensor,
    labels: torch.Tensor,
    epochs: int = 30,
    lr: float = 3e-3,
    batch_size: int = 64,
    seed: int = 0,
) -> nn.Module:
    """Train ``model`` in place with Adam on the cross-entropy for ``epochs`` passes over
    shuffled mini-batches (order seeded), the learning rate decaying linearly from ``lr`` to 0;
    returns it in eval mode. Quantised copies
    (:func:`gmpqte.quantize_model`) train their full-precision weights through the STE (QAT).

    NaN policy: NaN or infinite pixels are refused. Images are cast to the model's dtype.

    Shapes: ``images`` (B, C, H, W); ``labels`` (B,).
    """
    owner = "train_classifier"
    images = _check_data(owner, model, images, labels)
    epochs = check_int("epochs", owner, epochs, low=0, high=10_000)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=10)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=1_000_000)
    seed = check_int("seed", owner, seed, low=0)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    steps = max(1, epochs * -(-len(labels) // batch_size))
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda step: 1 - step / steps)
    model.train()
    for _ in range(epochs):
        order = torch.randperm(len(labels), generator=gen)
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            opt.zero_grad()
            F.cross_entropy(model(images[idx]), labels[idx]).backward()
            opt.step()
            sched.step()
    return model.eval()


def accuracy(model: nn.Module, images: torch.Tensor, labels: torch.Tensor) -> float:
    """Top-1 accuracy of ``model`` (eval mode, no gradients) in [0, 1], in batches of 512.

    NaN policy: NaN or infinite pixels are refused.

    Shapes: ``images`` (B, C, H, W); ``labels`` (B,).
    """
    images = _check_data("accuracy", model, images, labels)
    was_training = model.training
    model.eval()
    correct = 0
    with torch.no_grad():
        for start in range(0, len(labels), 512):
            pred = model(images[start : start + 512]).argmax(dim=1)
            correct += int((pred == labels[start : start + 512]).sum())
    model.train(was_training)
    return correct / len(labels)
