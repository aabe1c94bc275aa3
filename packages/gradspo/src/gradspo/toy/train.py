"""Training the toy base model: the DDPM ε-prediction loss with label dropout (for CFG).

L = E_{x0, c, t, ε} ||ε − ε_θ(sqrt(ᾱ_t) x0 + sqrt(1 − ᾱ_t) ε, t, c̃)||², with t uniform on
{0, …, T−1} and c̃ the null label −1 with probability ``p_uncond``.
"""

from __future__ import annotations

import torch
from torch import nn

from gradspo.scheduler import DDIMScheduler
from gradspo.toy.data import EightGaussians
from paperkit import check_int, check_real, describe, param_error

__all__ = ["train_ddpm"]


def train_ddpm(
    model: nn.Module,
    data: EightGaussians,
    scheduler: DDIMScheduler,
    steps: int = 3000,
    batch_size: int = 256,
    lr: float = 2e-3,
    p_uncond: float = 0.1,
    generator: torch.Generator | None = None,
) -> list[float]:
    """Train ``model`` in place with Adam (cosine-decayed lr); return the per-step losses.

    NaN policy: not applicable (generates its own data; scalar arguments, NaN refused).
    """
    owner = "train_ddpm"
    if not isinstance(model, nn.Module):
        raise param_error("model", owner, "an nn.Module", describe(model), cls=TypeError)
    if not isinstance(data, EightGaussians):
        raise param_error(
            "data", owner, "a gradspo.toy.EightGaussians", describe(data), cls=TypeError
        )
    if not isinstance(scheduler, DDIMScheduler):
        raise param_error(
            "scheduler", owner, "a gradspo.DDIMScheduler", describe(scheduler), cls=TypeError
        )
    steps = check_int("steps", owner, steps, low=1, high=10**7)
    batch_size = check_int("batch_size", owner, batch_size, low=1, high=10**6)
    lr = check_real("lr", owner, lr, low=0, low_open=True)
    p_uncond = check_real("p_uncond", owner, p_uncond, low=0, high=1)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", owner, "a torch.Generator or None", describe(generator), cls=TypeError
        )
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
    abar = scheduler.alphas_cumprod.float()
    losses = []
    model.train()
    for _ in range(steps):
        x0, c = data.sample(batch_size, generator=generator)
        t = torch.randint(0, scheduler.num_train_steps, (batch_size,), generator=generator)
        eps = torch.randn(x0.shape, generator=generator)
        a = abar[t][:, None]
        xt = a.sqrt() * x0 + (1 - a).sqrt() * eps
        drop = torch.rand(batch_size, generator=generator) < p_uncond
        c = torch.where(drop, torch.full_like(c, -1), c)
        loss = ((model(xt, t, c) - eps) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        losses.append(float(loss.detach()))
    model.eval()
    return losses
