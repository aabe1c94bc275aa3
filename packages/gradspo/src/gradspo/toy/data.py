"""The toy data: a class-conditional mixture of 8 Gaussians on a ring.

Mode k sits at radius·(cos kπ/4, sin kπ/4); class c ∈ {0, 1, 2, 3} covers the two adjacent
modes 2c and 2c + 1, each with probability 1/2, and isotropic noise of scale ``std``.
"""

from __future__ import annotations

import math

import torch

from paperkit import check_int, check_real, describe, param_error

__all__ = ["EightGaussians"]


class EightGaussians:
    """Eight Gaussians of scale ``std`` on a ring of ``radius``; 4 classes of two modes each.

    NaN policy: not applicable (generates data).

    >>> data = EightGaussians()
    >>> x, c = data.sample(400, generator=torch.Generator().manual_seed(0))
    >>> x.shape, c.shape, int(c.max())
    (torch.Size([400, 2]), torch.Size([400]), 3)
    """

    n_modes = 8
    n_classes = 4

    def __init__(self, radius: float = 2.0, std: float = 0.1) -> None:
        self.radius = check_real("radius", "EightGaussians", radius, low=0, low_open=True)
        self.std = check_real("std", "EightGaussians", std, low=0)
        angles = torch.arange(8, dtype=torch.float64) * math.pi / 4
        self.centers = self.radius * torch.stack([angles.cos(), angles.sin()], 1).float()

    def sample(
        self, n: int, cond: torch.Tensor | None = None, generator: torch.Generator | None = None
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """``n`` points ``[n, 2]`` and their classes ``[n]`` (uniform, or the given ``cond``)."""
        n = check_int("n", "EightGaussians.sample", n, low=1, high=10**8)
        if generator is not None and not isinstance(generator, torch.Generator):
            raise param_error(
                "generator",
                "EightGaussians.sample",
                "a torch.Generator or None",
                describe(generator),
                cls=TypeError,
            )
        if cond is None:
            cond = torch.randint(0, 4, (n,), generator=generator)
        else:
            from paperkit import check_tensor

            check_tensor("cond", "EightGaussians.sample", cond, shape=(n,), dtype="int")
            if bool(((cond < 0) | (cond > 3)).any()):
                raise param_error(
                    "cond", "EightGaussians.sample", "classes in [0, 3]", describe(cond)
                )
        mode = 2 * cond + torch.randint(0, 2, (n,), generator=generator)
        x = self.centers[mode] + self.std * torch.randn(n, 2, generator=generator)
        return x, cond.long()
