"""Hadamard and random orthogonal rotations, and the fast Walsh–Hadamard transform.

The normalised Sylvester Hadamard matrix of size d = 2^k is built by doubling,

    H_1 = [1],   H_{2n} = [[H_n, H_n], [H_n, -H_n]] / sqrt(2),

so every entry is ±1/sqrt(d) and H H^T = I. QuaRot's random Hadamard rotation is H diag(s) with
random signs s ∈ {±1}^d. :func:`fwht` applies the unnormalised transform x ↦ x (sqrt(d) H) along
the last dimension in O(d log d) by the butterfly (a, b) ↦ (a + b, a - b).
"""

from __future__ import annotations

import torch

from paperkit import Described, param_error

__all__ = [
    "fwht",
    "hadamard",
    "is_power_of_two",
    "online_hadamard",
    "random_hadamard",
    "random_orthogonal",
]


def is_power_of_two(d: int) -> bool:
    """True when ``d`` is a positive power of two (1, 2, 4, ...)."""
    return isinstance(d, int) and d > 0 and d & (d - 1) == 0


def _check_size(d: int, owner: str) -> None:
    if isinstance(d, bool) or not isinstance(d, int):
        raise param_error("d", owner, "an int", d, cls=TypeError)
    if not is_power_of_two(d):
        raise param_error("d", owner, "a power of 2 (a Sylvester Hadamard matrix is needed)", d)


def hadamard(d: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The normalised Sylvester Hadamard matrix H_d (d x d, entries ±1/sqrt(d), H H^T = I).

    Raises ValueError when ``d`` is not a power of 2 (no 12/20/28-type factorisations).
    """
    _check_size(d, "hadamard")
    H = torch.ones(1, 1, dtype=torch.float64)
    while H.shape[0] < d:
        H = torch.cat([torch.cat([H, H], 1), torch.cat([H, -H], 1)], 0)
    return (H / d**0.5).to(dtype)


def random_hadamard(d: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """QuaRot's randomised Hadamard rotation H_d diag(s), s_i = ±1 drawn from ``seed``.

    (x H diag(s))_i = s_i (x H)_i, so every row keeps the ±1/sqrt(d) flatness of H.
    """
    _check_size(d, "random_hadamard")
    gen = torch.Generator().manual_seed(seed)
    signs = torch.randint(0, 2, (d,), generator=gen, dtype=torch.float64) * 2 - 1
    return (hadamard(d, torch.float64) * signs).to(dtype)


def random_orthogonal(d: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A Haar-random orthogonal d x d matrix: Q R of a Gaussian matrix with sign(diag R) fixed."""
    if isinstance(d, bool) or not isinstance(d, int) or d < 1:
        raise param_error("d", "random_orthogonal", "a positive int", d)
    gen = torch.Generator().manual_seed(seed)
    Q, R = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=torch.float64))
    return (Q * torch.sign(torch.diagonal(R))).to(dtype)


def fwht(x: torch.Tensor) -> torch.Tensor:
    """Unnormalised fast Walsh–Hadamard transform along the last dim: x ↦ x (sqrt(d) H_d).

    log2(d) butterfly stages of cost O(d) each; differentiable (pure torch). The last dimension
    must be a power of 2.
    """
    if not isinstance(x, torch.Tensor):
        raise param_error("x", "fwht", "a torch.Tensor", type(x).__name__, cls=TypeError)
    d = x.shape[-1] if x.dim() else 0
    if not is_power_of_two(d):
        raise param_error(
            "x",
            "fwht",
            "a tensor whose last dimension is a power of 2",
            Described(f"shape {tuple(x.shape)}"),
        )
    lead = x.shape[:-1]
    y = x.reshape(-1, d)
    h = 1
    while h < d:
        y = y.view(-1, d // (2 * h), 2, h)
        a, b = y[:, :, 0, :], y[:, :, 1, :]
        y = torch.stack([a + b, a - b], dim=2)
        h *= 2
    return y.reshape(*lead, d)


def online_hadamard(x: torch.Tensor) -> torch.Tensor:
    """The normalised online rotation x ↦ x H_d used for R3 / R4 (orthogonal, O(d log d))."""
    return fwht(x) / x.shape[-1] ** 0.5
