r"""Euler–Maruyama integration of :math:`dX = f_t(X)dt + \sigma dB` (or the ODE without noise),
recorded at a grid of output times."""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from paperkit import Described, param_error


def euler_maruyama(
    drift: Callable[[torch.Tensor, torch.Tensor], torch.Tensor],
    x0: torch.Tensor,
    grid: torch.Tensor,
    sigma: torch.Tensor | None,
    steps: int,
    generator: torch.Generator | None,
    *,
    owner: str,
) -> torch.Tensor:
    r"""Paths ``(N, T, d)`` recorded at ``grid`` (increasing), started from ``x0`` at
    ``grid[0]``. Each interval gets :math:`\lceil \text{steps}\cdot\Delta/(\text{span})\rceil`
    steps; ``drift(t, x)`` takes a 0-d time. ``sigma=None`` integrates the ODE
    :math:`dX = f_t(X)dt`. The noise is drawn in ``x0``'s dtype from ``generator``."""
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator",
            owner,
            "a torch.Generator or None",
            Described(type(generator).__name__),
            cls=TypeError,
        )
    span = float(grid[-1] - grid[0])
    x, out = x0, [x0]
    for k in range(grid.numel() - 1):
        t0, t1 = grid[k], grid[k + 1]
        n = max(1, math.ceil(steps * float(t1 - t0) / span))
        h = (t1 - t0) / n
        for i in range(n):
            t = t0 + i * h
            x = x + h * drift(t, x)
            if sigma is not None:
                xi = torch.randn(x.shape, generator=generator, dtype=x.dtype)
                x = x + math.sqrt(float(h)) * xi @ sigma.T.to(x.dtype)
        out.append(x)
    return torch.stack(out, dim=1)
