"""Argument checks shared by the public entry points (one wording: paperkit's)."""

from __future__ import annotations

from typing import Any

import torch

from paperkit import Described, check_real, check_tensor, param_error

Dims = dict[str, tuple[int, str]]


def image(name: str, owner: str, value: Any, dims: Dims | None = None) -> torch.Tensor:
    """A finite floating RGB batch ``(B, 3, H, W)``; ``dims`` ties B, H, W to other arguments."""
    return check_tensor(name, owner, value, shape=("B", 3, "H", "W"), dims=dims)


def alpha_map(name: str, owner: str, value: Any, dims: Dims | None = None) -> torch.Tensor:
    """An opacity map ``(B, 1, H, W)`` with every value in [0, 1]."""
    alpha = check_tensor(name, owner, value, shape=("B", 1, "H", "W"), dims=dims)
    if bool((alpha < 0).any()) or bool((alpha > 1).any()):
        got = Described(f"values in [{float(alpha.min()):.4g}, {float(alpha.max()):.4g}]")
        raise param_error(name, owner, "in [0, 1] (an opacity)", got)
    return alpha


def rho_vector(name: str, owner: str, value: Any, dims: Dims | None = None) -> torch.Tensor:
    """The per-image, per-channel ambient ratio ``(B, 3)``, every value in (0, 1]."""
    rho = check_tensor(name, owner, value, shape=("B", 3), dims=dims)
    if bool((rho <= 0).any()) or bool((rho > 1).any()):
        got = Described(f"values in [{float(rho.min()):.4g}, {float(rho.max()):.4g}]")
        raise param_error(name, owner, "in (0, 1] (ambient / total light)", got)
    return rho


def real_range(
    name: str, owner: str, value: Any, low: float, high: float, low_open: bool = False
) -> tuple[float, float]:
    """A pair ``(min, max)`` of reals in ``[low, high]`` with ``min <= max``."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise param_error(name, owner, "a pair (min, max)", value, cls=TypeError)
    a = check_real(name, owner, value[0], low=low, high=high, low_open=low_open)
    b = check_real(name, owner, value[1], low=low, high=high, low_open=low_open)
    if a > b:
        raise param_error(name, owner, "a pair (min, max) with min <= max", tuple(value))
    return a, b
