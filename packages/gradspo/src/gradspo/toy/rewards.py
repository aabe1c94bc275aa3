"""Directional rewards: the toy's stand-in for a step-aware preference model.

Class c prefers the direction u_c of its second mode, angle (2c + 1)π/4, and staying near the
ring: r_c(x) = <x, u_c> − weight·||x||. On the ring of radius 2 the preferred mode scores
2 − 2·weight and the other mode of the class 2cos(π/4) − 2·weight. The score is evaluated on the
model's x̂0 at every sampler step ("step-aware"), exactly, with no learned preference model.
"""

from __future__ import annotations

import math

import torch

from paperkit import check_int, check_real, check_tensor, describe, param_error

__all__ = ["DirectionalReward", "directional"]


class DirectionalReward:
    """r(x, t, c) = <x, u_c> − weight·||x|| for ``x [N, 2]``, classes ``c [N]``; ``t`` unused
    (the reward is exact at every step). NaN policy: refused.

    >>> r = directional()
    >>> float(r(torch.tensor([[0.0, 2.0]]), 0, torch.tensor([0]))) > 0
    True
    """

    def __init__(self, n_cond: int = 4, weight: float = 0.5) -> None:
        self.n_cond = check_int("n_cond", "DirectionalReward", n_cond, low=1, high=10**6)
        self.weight = check_real("weight", "DirectionalReward", weight, low=0)
        angles = (2 * torch.arange(self.n_cond, dtype=torch.float64) + 1) * math.pi / 4
        self.directions = torch.stack([angles.cos(), angles.sin()], 1).float()

    def __call__(self, x: torch.Tensor, t: int | torch.Tensor, cond: torch.Tensor) -> torch.Tensor:
        owner = "DirectionalReward"
        dims: dict = {}
        check_tensor("x", owner, x, shape=("N", 2), dims=dims)
        check_tensor("cond", owner, cond, shape=("N",), dims=dims, dtype="int")
        if bool(((cond < 0) | (cond >= self.n_cond)).any()):
            raise param_error("cond", owner, f"labels in [0, {self.n_cond - 1}]", describe(cond))
        u = self.directions.to(x.dtype)[cond]
        return (x * u).sum(1) - self.weight * x.norm(dim=1)


def directional(n_cond: int = 4, weight: float = 0.5) -> DirectionalReward:
    """The directional reward family, one direction per class (see :class:`DirectionalReward`).

    NaN policy: not applicable (scalar arguments, NaN refused).
    """
    return DirectionalReward(n_cond, weight)
