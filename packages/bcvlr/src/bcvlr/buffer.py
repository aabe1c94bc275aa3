"""The online replay buffer: clips and true actions, never rewards (Sec. 3.2 of the paper:
the online stage is reward-free)."""

from __future__ import annotations

import numpy as np
import torch

__all__ = ["ClipBuffer"]


class ClipBuffer:
    """A ring buffer of ``capacity`` clips (uint8, (3, H, W, 3) each: o_{t-1}, o_t, o_{t+1}) and
    the actions taken at o_t. It has no reward field by design."""

    fields = ("clips", "actions")

    def __init__(
        self,
        capacity: int,
        frame_shape: tuple[int, ...],
        action_shape: tuple[int, ...],
        discrete: bool,
    ) -> None:
        self.clips = np.zeros((capacity, 3, *frame_shape), dtype=np.uint8)
        self.actions = np.zeros(
            (capacity, *action_shape), dtype=np.int64 if discrete else np.float32
        )
        self.capacity, self.size, self.pos = capacity, 0, 0

    def __len__(self) -> int:
        return self.size

    def add(self, clips: np.ndarray, actions: np.ndarray) -> None:
        """Append a batch of clips (n, 3, H, W, 3) and actions (n, ...)."""
        for c, a in zip(clips, actions, strict=True):
            self.clips[self.pos], self.actions[self.pos] = c, a
            self.pos = (self.pos + 1) % self.capacity
            self.size = min(self.size + 1, self.capacity)

    def sample(self, batch: int, generator: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
        """``batch`` clips as float frames (B, 3, 3, H, W) in [0, 1] and their actions."""
        return self.take(torch.randint(0, self.size, (batch,), generator=generator))

    def take(self, rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The clips (as float frames) and actions at ``rows``."""
        rows = rows.numpy()
        clips = torch.from_numpy(self.clips[rows]).movedim(-1, -3).float().div_(255.0)
        return clips, torch.from_numpy(self.actions[rows])
