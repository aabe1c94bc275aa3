"""PrME: encryption-aware pruning with a mask every client computes identically.

Importance from the public aggregation history (the decrypted global updates):

    h_t = λ h_{t-1} + (1 − λ) |Δ̄_{t-1}|            (λ = decay; round 0 keeps everything)

The mask keeps the top ⌈(1 − s) P⌉ coordinates of h_t (ties broken by index), then reactivates
each pruned coordinate independently with probability β from a PRNG seeded by
``(seed, t)``, so clients sharing the seed and the history agree on the mask without talking.
Expected kept fraction: 1 − s + s β.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from paperkit import Described, param_error

__all__ = ["PrMEMask"]


class PrMEMask:
    """History-guided pruning mask over the P shared coordinates.

    Args:
        n_params: P.
        prune_ratio: s in [0, 1); s = 0 keeps everything.
        reactivation: β in [0, 1], probability that a pruned coordinate is sent anyway.
        decay: λ in [0, 1) of the importance moving average (0: last round only).
        seed: the shared seed of the reactivation draws.
    """

    def __init__(
        self,
        n_params: int,
        prune_ratio: float = 0.7,
        reactivation: float = 0.2,
        decay: float = 0.5,
        seed: int = 0,
    ):
        if isinstance(n_params, bool) or not isinstance(n_params, int) or n_params < 1:
            raise param_error("n_params", "PrMEMask", "a positive integer", n_params)
        if not (isinstance(prune_ratio, (int, float)) and 0 <= prune_ratio < 1):
            raise param_error("prune_ratio", "PrMEMask", "in [0, 1)", prune_ratio)
        if not (isinstance(reactivation, (int, float)) and 0 <= reactivation <= 1):
            raise param_error("reactivation", "PrMEMask", "in [0, 1]", reactivation)
        if not (isinstance(decay, (int, float)) and 0 <= decay < 1):
            raise param_error("decay", "PrMEMask", "in [0, 1)", decay)
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise param_error("seed", "PrMEMask", "a non-negative integer", seed)
        self.n_params = n_params
        self.prune_ratio = float(prune_ratio)
        self.reactivation = float(reactivation)
        self.decay = float(decay)
        self.seed = seed
        self.importance: np.ndarray | None = None

    @property
    def n_keep(self) -> int:
        """⌈(1 − s) P⌉, the coordinates kept by importance (at least 1)."""
        return max(1, math.ceil((1 - self.prune_ratio) * self.n_params - 1e-9))

    def mask(self, round: int) -> torch.Tensor:
        """The boolean mask of round ``round`` (all true before any history or when s = 0)."""
        if isinstance(round, bool) or not isinstance(round, int) or round < 0:
            raise param_error("round", "PrMEMask.mask", "a non-negative integer", round)
        if self.importance is None or self.prune_ratio == 0:
            return torch.ones(self.n_params, dtype=torch.bool)
        order = np.argsort(-self.importance, kind="stable")
        keep = np.zeros(self.n_params, dtype=bool)
        keep[order[: self.n_keep]] = True
        draws = np.random.default_rng([self.seed, round]).random(self.n_params)
        keep |= draws < self.reactivation
        return torch.from_numpy(keep)

    def update(self, global_delta: torch.Tensor | np.ndarray) -> None:
        """Fold the decrypted global update ``Δ̄`` of the round into the importance."""
        g = np.abs(np.asarray(torch.as_tensor(global_delta).detach().cpu(), dtype=np.float64))
        if g.shape != (self.n_params,):
            raise param_error(
                "global_delta",
                "PrMEMask.update",
                f"a vector of length {self.n_params}",
                Described(f"shape {g.shape}"),
            )
        if self.importance is None:
            self.importance = (1 - self.decay) * g
        else:
            self.importance = self.decay * self.importance + (1 - self.decay) * g
