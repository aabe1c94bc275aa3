"""Evaluation metrics of the toy reproduction: reward, drift (MMD) and mode coverage."""

from __future__ import annotations

import torch

from gradspo.sampling import RewardFn
from paperkit import check_callable, check_real, check_tensor, param_error

__all__ = ["mean_reward", "mmd_rbf", "mode_coverage"]


@torch.no_grad()
def mean_reward(reward_fn: RewardFn, x: torch.Tensor, cond: torch.Tensor) -> float:
    """(1/N) Σ r(x_i, 0, c_i) for samples ``x [N, D]`` and classes ``cond [N]``.

    NaN policy: refused (ValueError).
    """
    check_callable("reward_fn", "mean_reward", reward_fn)
    dims: dict = {}
    check_tensor("x", "mean_reward", x, shape=("N", None), dims=dims)
    check_tensor("cond", "mean_reward", cond, shape=("N",), dims=dims, dtype="int")
    return float(reward_fn(x, 0, cond).mean())


@torch.no_grad()
def mmd_rbf(
    a: torch.Tensor, b: torch.Tensor, bandwidths: tuple[float, ...] = (0.1, 0.3, 1.0)
) -> float:
    """Squared MMD (biased V-statistic) with the kernel Σ_h exp(−||x − y||²/(2h²)).

    MMD² = mean k(a, a') + mean k(b, b') − 2 mean k(a, b) ≥ 0; shapes ``a [N, D]``, ``b [M, D]``.
    NaN policy: refused (ValueError).

    >>> a = torch.randn(200, 2)
    >>> mmd_rbf(a, a) == 0.0 and mmd_rbf(a, a + 3) > 0.5
    True
    """
    dims: dict = {}
    check_tensor("a", "mmd_rbf", a, shape=("N", "D"), dims=dims)
    check_tensor("b", "mmd_rbf", b, shape=("M", "D"), dims=dims)
    hs = [check_real("bandwidths", "mmd_rbf", h, low=0, low_open=True) for h in bandwidths]
    if not hs:
        raise param_error("bandwidths", "mmd_rbf", "a non-empty tuple of bandwidths", "()")

    def k(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        d2 = torch.cdist(x.double(), y.double()) ** 2
        return sum(torch.exp(-d2 / (2 * h * h)) for h in hs).mean()

    return max(float(k(a, a) + k(b, b) - 2 * k(a, b)), 0.0)


@torch.no_grad()
def mode_coverage(
    x: torch.Tensor, centers: torch.Tensor, radius: float = 0.5, min_frac: float = 0.01
) -> float:
    """Fraction of the modes ``centers [M, D]`` that hold at least ``min_frac`` of the samples
    ``x [N, D]`` within distance ``radius``. NaN policy: refused (ValueError).

    >>> c = torch.tensor([[0.0, 0.0], [5.0, 0.0]])
    >>> mode_coverage(torch.zeros(10, 2), c)
    0.5
    """
    dims: dict = {}
    check_tensor("x", "mode_coverage", x, shape=("N", "D"), dims=dims)
    check_tensor("centers", "mode_coverage", centers, shape=("M", "D"), dims=dims)
    radius = check_real("radius", "mode_coverage", radius, low=0, low_open=True)
    min_frac = check_real("min_frac", "mode_coverage", min_frac, low=0, high=1)
    near = torch.cdist(x.double(), centers.double()) < radius
    return float((near.double().mean(0) >= min_frac).double().mean())
