"""Training loop shared by every simulator (ROBIN Sec. 4, training details): Adam, cosine decay of
the learning rate, gradient clipping at 1.0, batches of random (trajectory, step) pairs."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from paperkit import check_int, check_real, param_error, progress
from robin.data import Trajectory
from robin.simulator import _Base, step_batch

__all__ = ["fit"]


def fit(
    model,
    trajs: Sequence[Trajectory],
    steps: int,
    batch_size: int = 8,
    lr: float = 1e-3,
    seed: int = 0,
    label: str | None = None,
) -> list[float]:
    """Train ``model`` (any simulator of this package) for ``steps`` Adam steps on the one-step
    pairs of ``trajs``; sets its target normalisation first. Returns the loss per step."""
    owner = "fit"
    if not isinstance(model, _Base):
        raise param_error(
            "model", owner, "a simulator of robin", type(model).__name__, cls=TypeError
        )
    if (
        not isinstance(trajs, Sequence)
        or not trajs
        or not all(isinstance(t, Trajectory) for t in trajs)
    ):
        raise param_error("trajs", owner, "a non-empty list of Trajectory", trajs, cls=TypeError)
    steps = check_int("steps", owner, steps, low=1, high=10**7)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=4096)
    lr = check_real("lr", owner, lr, low=0, low_open=True, high=1)
    seed = check_int("seed", owner, seed, low=0)
    if label is not None and not isinstance(label, str):
        raise param_error("label", owner, "a string or None", label, cls=TypeError)
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    model.set_normalization(trajs)
    model.train()
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps, eta_min=0.1 * lr)
    pairs = [(i, t) for i, tr in enumerate(trajs) for t in range(tr.steps)]
    losses = []
    it = progress(range(steps), label) if label else range(steps)
    for _ in it:
        idx = rng.choice(len(pairs), size=batch_size, replace=len(pairs) < batch_size)
        batch = step_batch(trajs, [pairs[i] for i in idx])
        loss = (
            model.loss(batch, generator=gen) if hasattr(model, "num_steps") else model.loss(batch)
        )
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        losses.append(loss.item())
    model.eval()
    return losses
