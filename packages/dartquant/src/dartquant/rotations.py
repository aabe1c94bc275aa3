"""Hadamard and random orthogonal rotations, and the fast Walsh–Hadamard transform.

The normalised Sylvester Hadamard matrix of size d = 2^k is built by doubling,

    H_1 = [1],   H_{2n} = [[H_n, H_n], [H_n, -H_n]] / sqrt(2),

so every entry is ±1/sqrt(d) and H H^T = I. QuaRot's random Hadamard rotation is H diag(s) with
random signs s ∈ {±1}^d. :func:`fwht` applies the unnormalised transform x ↦ x (sqrt(d) H) along
the last dimension in O(d log d) by the butterfly (a, b) ↦ (a + b, a - b).
"""

from __future__ import annotations

from typing import Any

import torch

from paperkit import Described, check_int, check_memory, check_tensor, describe, param_error

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


def _floating_dtype(owner: str, dtype: Any) -> torch.dtype:
    if not (isinstance(dtype, torch.dtype) and dtype.is_floating_point):
        raise param_error("dtype", owner, "a floating torch.dtype", describe(dtype), cls=TypeError)
    return dtype


def _matrix_size(owner: str, d: Any, *, sylvester: bool) -> int:
    """``d`` checked as the size of a d x d float64 matrix that must fit in memory (the
    construction holds about three of them); a power of 2 when ``sylvester``."""
    d = check_int("d", owner, d, low=1)
    if sylvester and not is_power_of_two(d):
        raise param_error("d", owner, "a power of 2 (a Sylvester Hadamard matrix is needed)", d)
    return check_memory("d", owner, d, 3 * 8 * d * d)


def hadamard(d: int, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """The normalised Sylvester Hadamard matrix H_d (d x d, entries ±1/sqrt(d), H H^T = I).

    Raises ValueError when ``d`` is not a power of 2 (no 12/20/28-type factorisations) or the
    matrix would not fit in memory.

    >>> (hadamard(4) * 2).round()
    tensor([[ 1.,  1.,  1.,  1.],
            [ 1., -1.,  1., -1.],
            [ 1.,  1., -1., -1.],
            [ 1., -1., -1.,  1.]])
    """
    d = _matrix_size("hadamard", d, sylvester=True)
    dtype = _floating_dtype("hadamard", dtype)
    return _sylvester(d).to(dtype)


def _sylvester(d: int) -> torch.Tensor:
    H = torch.ones(1, 1, dtype=torch.float64)
    while H.shape[0] < d:
        H = torch.cat([torch.cat([H, H], 1), torch.cat([H, -H], 1)], 0)
    return H / d**0.5


def random_hadamard(d: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """QuaRot's randomised Hadamard rotation H_d diag(s), s_i = ±1 drawn from ``seed``.

    (x H diag(s))_i = s_i (x H)_i, so every row keeps the ±1/sqrt(d) flatness of H.
    """
    d = _matrix_size("random_hadamard", d, sylvester=True)
    seed = check_int("seed", "random_hadamard", seed, low=0)
    dtype = _floating_dtype("random_hadamard", dtype)
    gen = torch.Generator().manual_seed(seed)
    signs = torch.randint(0, 2, (d,), generator=gen, dtype=torch.float64) * 2 - 1
    return (_sylvester(d) * signs).to(dtype)


def random_orthogonal(d: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """A Haar-random orthogonal d x d matrix: Q R of a Gaussian matrix with sign(diag R) fixed."""
    d = _matrix_size("random_orthogonal", d, sylvester=False)
    seed = check_int("seed", "random_orthogonal", seed, low=0)
    dtype = _floating_dtype("random_orthogonal", dtype)
    gen = torch.Generator().manual_seed(seed)
    Q, R = torch.linalg.qr(torch.randn(d, d, generator=gen, dtype=torch.float64))
    return (Q * torch.sign(torch.diagonal(R))).to(dtype).contiguous()


def _transform_input(owner: str, x: Any) -> torch.Tensor:
    check_tensor("x", owner, x, finite=False)
    if x.dim() == 0 or not is_power_of_two(x.shape[-1]):
        raise param_error(
            "x",
            owner,
            "a tensor whose last dimension is a power of 2",
            Described(f"a tensor of shape {tuple(x.shape)}"),
        )
    return x


def fwht(x: torch.Tensor) -> torch.Tensor:
    """Unnormalised fast Walsh–Hadamard transform along the last dim: x ↦ x (sqrt(d) H_d).

    log2(d) butterfly stages of cost O(d) each; differentiable (pure torch). ``x``: a floating
    tensor ``[..., d]``, d a power of 2. NaN and inf propagate by design (a linear map: they
    spread to the outputs of their row, as in ``x @ H``).

    >>> fwht(torch.tensor([1.0, 0.0, 0.0, 0.0]))
    tensor([1., 1., 1., 1.])
    """
    return fwht_core(_transform_input("fwht", x))


def fwht_core(x: torch.Tensor) -> torch.Tensor:
    d = x.shape[-1]
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
    """The normalised online rotation x ↦ x H_d used for R3 / R4 (orthogonal, O(d log d)).

    ``x``: a floating tensor ``[..., d]``, d a power of 2; NaN and inf propagate as in
    :func:`fwht`.
    """
    return online_hadamard_core(_transform_input("online_hadamard", x))


def online_hadamard_core(x: torch.Tensor) -> torch.Tensor:
    return fwht_core(x) / x.shape[-1] ** 0.5
