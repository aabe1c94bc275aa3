r"""Training and evaluation of the operator network on trajectories (paper, Sec. 5 protocol).

Samples are windows of a trajectory ``w`` (n, T, H, W): the input stacks ``in_frames``
consecutive frames on the last axis, the target is the next frame. Training minimises the MSE
with AdamW (cosine schedule) over the trainable parameters only. Evaluation: the one-step
:func:`fadapter.l2re` over every window, the ``rollout``-step autoregressive L2RE from the
first window of every trajectory, and :func:`fadapter.band_errors` of the one-step
predictions (4 Chebyshev bands, low first).
"""

from __future__ import annotations

import time
from typing import Any

import torch
from torch import nn

from fadapter.metrics import band_errors, l2re
from paperkit import check_int, check_real, check_tensor, progress

__all__ = ["evaluate", "fit", "windows"]


def windows(traj: torch.Tensor, in_frames: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Every (input, next frame) pair: x (N, H, W, in_frames), y (N, H, W, 1),
    ``N = n (T - in_frames)``. NaN policy: NaN or inf in ``traj`` is refused.

    >>> x, y = windows(torch.zeros(2, 6, 4, 4), 4)
    >>> tuple(x.shape), tuple(y.shape)
    ((4, 4, 4, 4), (4, 4, 4, 1))
    """
    check_tensor("traj", "windows", traj, ndim=4)
    n, T, H, W = traj.shape
    in_frames = check_int("in_frames", "windows", in_frames, low=1, high=T - 1)
    idx = torch.arange(T - in_frames)[:, None] + torch.arange(in_frames + 1)[None, :]
    win = traj[:, idx].reshape(-1, in_frames + 1, H, W).permute(0, 2, 3, 1)
    return win[..., :in_frames].contiguous(), win[..., in_frames:].contiguous()


def fit(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    *,
    epochs: int,
    lr: float,
    batch_size: int = 32,
    weight_decay: float = 1e-4,
    seed: int = 0,
    desc: str = "",
) -> dict[str, Any]:
    """Train the trainable parameters of ``model`` on (x, y) with AdamW and MSE; returns the
    final training loss and the seconds spent. NaN policy: NaN or inf inputs are refused."""
    owner = "fit"
    check_tensor("x", owner, x, ndim=4)
    check_tensor("y", owner, y, shape=(x.shape[0], x.shape[1], x.shape[2], None))
    epochs = check_int("epochs", owner, epochs, low=1)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    batch_size = check_int("batch_size", owner, batch_size, low=1)
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(params, lr=lr, weight_decay=weight_decay)
    n = x.shape[0]
    per_epoch = -(-n // batch_size)
    sched = torch.optim.lr_scheduler.OneCycleLR(
        opt, max_lr=lr, total_steps=epochs * per_epoch, pct_start=0.1
    )
    g = torch.Generator().manual_seed(seed)
    model.train()
    started = time.perf_counter()
    loss = torch.tensor(float("nan"))
    for _ in progress(range(epochs), desc or "training"):
        perm = torch.randperm(n, generator=g)
        for i in range(per_epoch):
            idx = perm[i * batch_size : (i + 1) * batch_size]
            opt.zero_grad(set_to_none=True)
            loss = (model(x[idx]) - y[idx]).pow(2).mean()
            loss.backward()
            opt.step()
            sched.step()
    model.eval()
    return {"train_loss": loss.item(), "seconds": time.perf_counter() - started}


@torch.no_grad()
def evaluate(
    model: nn.Module, traj: torch.Tensor, in_frames: int, rollout: int = 10
) -> dict[str, Any]:
    """One-step L2RE, ``rollout``-step L2RE and the 4 one-step band errors on ``traj``.

    NaN policy: NaN or inf in ``traj`` is refused."""
    check_tensor("traj", "evaluate", traj, ndim=4)
    rollout = check_int("rollout", "evaluate", rollout, low=1, high=traj.shape[1] - in_frames)
    model.eval()
    x, y = windows(traj, in_frames)
    pred = torch.cat([model(x[i : i + 256]) for i in range(0, x.shape[0], 256)])
    state = traj[:, :in_frames].permute(0, 2, 3, 1)
    frames = []
    for _ in range(rollout):
        nxt = model(state)
        frames.append(nxt)
        state = torch.cat([state[..., 1:], nxt], dim=-1)
    roll = torch.cat(frames, dim=-1).permute(0, 3, 1, 2)
    true_roll = traj[:, in_frames : in_frames + rollout]
    bands = band_errors(pred[..., 0], y[..., 0], 4)
    return {
        "l2re_1step": float(l2re(pred, y)),
        "l2re_rollout": float(l2re(roll, true_roll)),
        "band_errors": [float(b) for b in bands],
    }
