"""Continual memory replay of Stage 2: a reservoir buffer of ``(window, target)`` samples.

Reservoir sampling (Vitter's algorithm R) keeps a uniform sample of everything ever offered: the
``t``-th sample replaces a random slot with probability ``capacity / t``. Adaptation batches mix
in a fraction of replayed samples from pre-training domains and earlier adapted domains.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import Tensor

from paperkit import check_int, check_tensor, describe, param_error

__all__ = ["ReplayBuffer"]


class ReplayBuffer:
    """Reservoir buffer of univariate ``(x (L,), y (H,))`` samples.

    Args:
        capacity: most samples kept (>= 1).
        seed: seed of the reservoir's and the sampler's random draws.

    ``add`` refuses NaN/inf samples.

    >>> buf = ReplayBuffer(capacity=5, seed=0)
    >>> buf.add(torch.randn(20, 12), torch.randn(20, 12))
    >>> len(buf), buf.seen
    (5, 20)
    >>> [t.shape for t in buf.sample(3)]
    [torch.Size([3, 12]), torch.Size([3, 12])]
    """

    def __init__(self, capacity: int = 4096, seed: int = 0) -> None:
        self.capacity = check_int("capacity", "ReplayBuffer", capacity, low=1, high=10_000_000)
        check_int("seed", "ReplayBuffer", seed, low=0)
        self.rng = np.random.default_rng(seed)
        self.x: list[Tensor] = []
        self.y: list[Tensor] = []
        self.seen = 0

    def __len__(self) -> int:
        return len(self.x)

    def add(self, x: Tensor, y: Tensor) -> None:
        """Offer a batch of samples ``x`` ``(n, L)`` and targets ``y`` ``(n, H)`` (NaN refused)."""
        dims: dict = {}
        check_tensor("x", "ReplayBuffer.add", x, shape=("n", None), dims=dims)
        check_tensor("y", "ReplayBuffer.add", y, shape=("n", None), dims=dims)
        if self.x and (x.shape[1] != self.x[0].shape[0] or y.shape[1] != self.y[0].shape[0]):
            raise param_error(
                "x", "ReplayBuffer.add", "windows as long as those stored", describe(x)
            )
        for xi, yi in zip(x.detach().cpu(), y.detach().cpu(), strict=True):
            self.seen += 1
            if len(self.x) < self.capacity:
                self.x.append(xi)
                self.y.append(yi)
                continue
            slot = int(self.rng.integers(self.seen))
            if slot < self.capacity:
                self.x[slot], self.y[slot] = xi, yi

    def sample(self, n: int) -> tuple[Tensor, Tensor]:
        """``n`` stored samples drawn uniformly with replacement: ``(x (n, L), y (n, H))``."""
        n = check_int("n", "ReplayBuffer.sample", n, low=1, high=10_000_000)
        if not self.x:
            raise param_error("n", "ReplayBuffer.sample", "drawn from a non-empty buffer", n)
        idx = self.rng.integers(len(self.x), size=n)
        return torch.stack([self.x[i] for i in idx]), torch.stack([self.y[i] for i in idx])
