"""The toy denoiser: an MLP noise predictor ε(x_t, t, c) with classifier-free guidance.

h₀ = W_in x + E_t(t) + E_c(c), then ``layers`` blocks h ← SiLU(W h), and ε = W_out h. E_t is a
sinusoidal embedding of t followed by a linear map; E_c has one extra row for the null label
c = −1 (used with probability ``p_uncond`` in training, and for the unconditional branch of
classifier-free guidance ε = ε_u + w (ε_c − ε_u)).
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperkit import check_int, check_tensor, describe, param_error

__all__ = ["MLPDenoiser", "timestep_embedding"]


def timestep_embedding(t: torch.Tensor, dim: int) -> torch.Tensor:
    """Sinusoidal embedding [cos(t f_k), sin(t f_k)], f_k = 10000^(−k/(dim/2)); ``[B, dim]``."""
    half = dim // 2
    freqs = torch.exp(-math.log(10000.0) * torch.arange(half, dtype=torch.float32) / half)
    angles = t.float()[:, None] * freqs[None]
    return torch.cat([angles.cos(), angles.sin()], 1)


class MLPDenoiser(nn.Module):
    """Class-conditional ε-prediction MLP (``layers`` × ``hidden``, SiLU).

    Call with ``x [B, dim]``, ``t`` (LongTensor ``[B]`` or int) and ``cond`` (LongTensor ``[B]``
    in [−1, n_cond); −1 is the null label). NaN policy: refused.

    >>> net = MLPDenoiser()
    >>> net(torch.zeros(3, 2), torch.tensor([0, 10, 999]), torch.tensor([0, 3, -1])).shape
    torch.Size([3, 2])
    """

    def __init__(self, dim: int = 2, hidden: int = 128, n_cond: int = 4, layers: int = 3) -> None:
        super().__init__()
        owner = "MLPDenoiser"
        self.dim = check_int("dim", owner, dim, low=1, high=10**5)
        self.hidden = check_int("hidden", owner, hidden, low=2, high=10**5)
        self.n_cond = check_int("n_cond", owner, n_cond, low=1, high=10**6)
        layers = check_int("layers", owner, layers, low=1, high=64)
        self.inp = nn.Linear(dim, hidden)
        self.temb = nn.Linear(hidden, hidden)
        self.cemb = nn.Embedding(n_cond + 1, hidden)
        self.blocks = nn.ModuleList(nn.Linear(hidden, hidden) for _ in range(layers))
        self.out = nn.Linear(hidden, dim)

    def forward(self, x: torch.Tensor, t: torch.Tensor | int, cond: torch.Tensor) -> torch.Tensor:
        owner = "MLPDenoiser.forward"
        dims: dict = {}
        check_tensor("x", owner, x, shape=("B", self.dim), dims=dims, dtype=self.inp.weight.dtype)
        if isinstance(t, torch.Tensor):
            check_tensor("t", owner, t, shape=("B",), dims=dims, dtype="int")
            if bool((t < 0).any()):
                raise param_error("t", owner, "non-negative timesteps", describe(t))
        else:
            t = torch.full((x.shape[0],), check_int("t", owner, t, low=0), dtype=torch.long)
        check_tensor("cond", owner, cond, shape=("B",), dims=dims, dtype="int")
        if bool(((cond < -1) | (cond >= self.n_cond)).any()):
            raise param_error("cond", owner, f"labels in [-1, {self.n_cond - 1}]", describe(cond))
        label = torch.where(cond < 0, torch.full_like(cond, self.n_cond), cond)
        h = (
            self.inp(x)
            + self.temb(timestep_embedding(t, self.hidden).to(x.dtype))
            + self.cemb(label)
        )
        for block in self.blocks:
            h = torch.nn.functional.silu(block(h))
        return self.out(h)
