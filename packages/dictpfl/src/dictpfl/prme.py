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

from paperkit import check_array, check_int, check_memory, check_real

__all__ = ["PrMEMask"]


class PrMEMask:
    """History-guided pruning mask over the P shared coordinates.

    Args:
        n_params: P.
        prune_ratio: s in [0, 1); s = 0 keeps everything.
        reactivation: β in [0, 1], probability that a pruned coordinate is sent anyway.
        decay: λ in [0, 1) of the importance moving average (0: last round only).
        seed: the shared seed of the reactivation draws.

    P must fit in memory (about 40 bytes per coordinate for the importance and one mask); NaN is
    refused in every argument, and in the global update given to :meth:`update`.
    """

    def __init__(
        self,
        n_params: int,
        prune_ratio: float = 0.7,
        reactivation: float = 0.2,
        decay: float = 0.5,
        seed: int = 0,
    ):
        owner = "PrMEMask"
        n_params = check_int("n_params", owner, n_params, low=1)
        check_memory("n_params", owner, n_params, 40 * n_params)
        prune_ratio = check_real("prune_ratio", owner, prune_ratio, low=0, high=1, high_open=True)
        reactivation = check_real("reactivation", owner, reactivation, low=0, high=1)
        decay = check_real("decay", owner, decay, low=0, high=1, high_open=True)
        seed = check_int("seed", owner, seed, low=0)
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
        round = check_int("round", "PrMEMask.mask", round, low=0)
        if self.importance is None or self.prune_ratio == 0:
            return torch.ones(self.n_params, dtype=torch.bool)
        order = np.argsort(-self.importance, kind="stable")
        keep = np.zeros(self.n_params, dtype=bool)
        keep[order[: self.n_keep]] = True
        draws = np.random.default_rng([self.seed, round]).random(self.n_params)
        keep |= draws < self.reactivation
        return torch.from_numpy(keep)

    def update(self, global_delta: torch.Tensor | np.ndarray) -> None:
        """Fold the decrypted global update ``Δ̄`` (a length-P real vector, tensor or array) of
        the round into the importance."""
        if isinstance(global_delta, torch.Tensor):
            global_delta = global_delta.detach().cpu().numpy()
        g = np.abs(
            check_array(
                "global_delta", "PrMEMask.update", global_delta, shape=(self.n_params,)
            ).astype(np.float64)
        )
        if self.importance is None:
            self.importance = (1 - self.decay) * g
        else:
            self.importance = self.decay * self.importance + (1 - self.decay) * g
