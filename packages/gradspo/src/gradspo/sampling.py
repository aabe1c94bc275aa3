"""Classifier-free-guided noise predictions and the DDIM sampling loop.

A denoiser is any callable ``model(x [B, D], t [B], cond [B]) -> eps [B, D]`` whose null label
is ``cond = −1``. With guidance scale w, ε = ε_u + w (ε_c − ε_u), the conditional and
unconditional branches evaluated in one batched forward.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from gradspo.scheduler import DDIMScheduler
from paperkit import check_callable, check_int, check_real, check_tensor, describe, param_error

__all__ = ["cfg_eps", "sample"]

#: ``model(x [B, D], t [B], cond [B]) -> eps [B, D]``; the null label is ``cond = -1``.
Denoiser = Callable[[torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]
#: ``reward_fn(x [N, D], t, cond [N]) -> [N]``.
RewardFn = Callable[[torch.Tensor, Any, torch.Tensor], torch.Tensor]


def cfg_eps(
    model: Denoiser, x: torch.Tensor, t: torch.Tensor, cond: torch.Tensor, cfg_scale: float
) -> torch.Tensor:
    """ε_u + w (ε_c − ε_u) in one forward over ``[x; x]`` (w = 1: the conditional ε only).

    Shapes: x ``[B, D]``, t and cond ``[B]`` (integer, cond ≥ 0). NaN policy: refused.
    """
    owner = "cfg_eps"
    check_callable("model", owner, model)
    dims: dict = {}
    check_tensor("x", owner, x, shape=("B", None), dims=dims)
    check_tensor("t", owner, t, shape=("B",), dims=dims, dtype="int")
    check_tensor("cond", owner, cond, shape=("B",), dims=dims, dtype="int")
    if bool((t < 0).any()):
        raise param_error("t", owner, "non-negative timesteps", describe(t))
    if bool((cond < 0).any()):
        raise param_error("cond", owner, "non-negative class labels", describe(cond))
    cfg_scale = check_real("cfg_scale", owner, cfg_scale, low=0)
    if cfg_scale == 1.0:
        return model(x, t, cond)
    both = model(torch.cat([x, x]), torch.cat([t, t]), torch.cat([torch.full_like(cond, -1), cond]))
    eps_u, eps_c = both.chunk(2)
    return eps_u + cfg_scale * (eps_c - eps_u)


def check_sampler_args(
    owner: str,
    model: Denoiser,
    scheduler: DDIMScheduler,
    cond: torch.Tensor,
    steps: int,
    cfg_scale: float,
) -> tuple[int, float]:
    """Shared checks of the sampling entry points; returns (steps, cfg_scale)."""
    check_callable("model" if owner == "sample" else "model_ema", owner, model)
    if not isinstance(scheduler, DDIMScheduler):
        raise param_error(
            "scheduler", owner, "a gradspo.DDIMScheduler", describe(scheduler), cls=TypeError
        )
    check_tensor("cond", owner, cond, shape=("B",), dtype="int")
    if bool((cond < 0).any()):
        raise param_error("cond", owner, "non-negative class labels", describe(cond))
    steps = check_int("steps", owner, steps, low=1, high=scheduler.num_train_steps)
    cfg_scale = check_real("cfg_scale", owner, cfg_scale, low=0)
    return steps, cfg_scale


def model_dim(owner: str, model: Denoiser, dim: int | None) -> int:
    """``dim`` if given, else ``model.dim``."""
    if dim is None:
        dim = getattr(model, "dim", None)
        if dim is None:
            raise param_error("dim", owner, "given (the model has no .dim)", None, cls=TypeError)
    return check_int("dim", owner, dim, low=1, high=10**6)


@torch.no_grad()
def sample(
    model: Denoiser,
    scheduler: DDIMScheduler,
    cond: torch.Tensor,
    steps: int = 20,
    cfg_scale: float = 5.0,
    eta: float = 1.0,
    dim: int | None = None,
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """Draw x_0 ``[B, dim]`` for classes ``cond [B]`` with ``steps`` DDIM steps from x_T ~ N(0, I).

    NaN policy: not applicable (the model's outputs are checked by the scheduler, NaN refused).
    """
    steps, cfg_scale = check_sampler_args("sample", model, scheduler, cond, steps, cfg_scale)
    eta = check_real("eta", "sample", eta, low=0)
    dim = model_dim("sample", model, dim)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator", "sample", "a torch.Generator or None", describe(generator), cls=TypeError
        )
    scheduler.set_timesteps(steps)
    x = torch.randn(cond.shape[0], dim, generator=generator)
    for t in scheduler.timesteps.tolist():
        tt = torch.full_like(cond, t)
        x = scheduler.step(cfg_eps(model, x, tt, cond, cfg_scale), t, x, eta, generator=generator)[
            0
        ]
    return x
