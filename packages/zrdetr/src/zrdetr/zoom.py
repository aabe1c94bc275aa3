r"""The zoom embedding (paper Sec. 3, "scale-sensitive zoom embedding").

A zoom factor :math:`z>0` (the apparent magnification against a reference field of view) enters
through :math:`e=\mathrm{MLP}([\sin(\omega_j\log z),\cos(\omega_j\log z)]_{j<F})\in\mathbb{R}^d`
with :math:`F` = ``n_freq`` frequencies :math:`\omega_j=\pi\,2^{j/2}`. It is used twice: as a
FiLM on the encoder tokens, :math:`t\mapsto t\odot(1+\gamma(e))+\beta(e)` with
:math:`\gamma,\beta` zero-initialised (so a fresh model ignores zoom), and added to every decoder
query. Without a zoom label at inference, :class:`ZoomRegressor` predicts :math:`\log z` from the
pooled tokens; it is trained with an L1 loss on :math:`\log z`.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperkit import check_int, check_tensor, param_error

__all__ = ["ZoomEmbedding", "ZoomFiLM", "ZoomRegressor", "check_dtype", "check_zoom"]


def check_dtype(name: str, owner: str, x: torch.Tensor, module: nn.Module) -> None:
    """Refuse a tensor whose dtype differs from the module's parameters (outside autocast)."""
    want = next(module.parameters()).dtype
    if x.dtype != want and not torch.is_autocast_enabled(x.device.type):
        raise param_error(
            name,
            owner,
            f"a tensor of the module's dtype {want} (convert one with .to)",
            x.dtype,
            cls=TypeError,
        )


def check_zoom(owner: str, zoom: torch.Tensor, batch: int | None = None) -> torch.Tensor:
    """A finite, strictly positive (B,) zoom tensor, else a ValueError naming 'zoom'."""
    check_tensor("zoom", owner, zoom, shape=("B",) if batch is None else (batch,))
    if bool((zoom <= 0).any()):
        raise ValueError(
            f"The 'zoom' parameter of {owner} must be strictly positive (a magnification). "
            f"Got min {zoom.min().item():g} instead."
        )
    return zoom


class ZoomEmbedding(nn.Module):
    r""":math:`e(z)=\mathrm{MLP}(\mathrm{sinusoid}(\log z))`, (B,) -> (B, d).

    Args:
        d_model: output width d.
        n_freq: number of frequencies :math:`\omega_j=\pi 2^{j/2}`, :math:`j<` ``n_freq``.
    """

    def __init__(self, d_model: int, n_freq: int = 16) -> None:
        super().__init__()
        self.d_model = check_int("d_model", "ZoomEmbedding", d_model, low=1, high=8192)
        self.n_freq = check_int("n_freq", "ZoomEmbedding", n_freq, low=1, high=64)
        freqs = math.pi * 2.0 ** (torch.arange(n_freq, dtype=torch.float32) / 2)
        self.register_buffer("freqs", freqs, persistent=False)
        self.mlp = nn.Sequential(
            nn.Linear(2 * n_freq, d_model), nn.GELU(), nn.Linear(d_model, d_model)
        )

    def forward(self, zoom: torch.Tensor) -> torch.Tensor:
        check_zoom("ZoomEmbedding", zoom)
        return self.embed_log(torch.log(zoom))

    def embed_log(self, log_zoom: torch.Tensor) -> torch.Tensor:
        """The embedding from :math:`\\log z` (B,) directly (no checks; used on predictions)."""
        angle = log_zoom[:, None].to(self.freqs.dtype) * self.freqs
        feats = torch.cat([angle.sin(), angle.cos()], dim=-1)
        return self.mlp(feats.to(self.mlp[0].weight.dtype))


class ZoomFiLM(nn.Module):
    r"""FiLM of tokens by the zoom embedding: :math:`t\odot(1+\gamma(e))+\beta(e)`.

    :math:`[\gamma,\beta]` is one linear map of :math:`e`, zero-initialised, so a fresh layer is
    the identity on the tokens. Tokens (B, N, d), embedding (B, d) -> (B, N, d).
    """

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.d_model = check_int("d_model", "ZoomFiLM", d_model, low=1, high=8192)
        self.proj = nn.Linear(d_model, 2 * d_model)
        nn.init.zeros_(self.proj.weight)
        nn.init.zeros_(self.proj.bias)

    def forward(self, tokens: torch.Tensor, e: torch.Tensor) -> torch.Tensor:
        dims: dict = {}
        d = self.d_model
        check_tensor("tokens", "ZoomFiLM", tokens, shape=("B", "N", d), dims=dims)
        check_tensor("e", "ZoomFiLM", e, shape=("B", d), dims=dims)
        check_dtype("tokens", "ZoomFiLM", tokens, self)
        check_dtype("e", "ZoomFiLM", e, self)
        gamma, beta = self.proj(e).chunk(2, dim=-1)
        return tokens * (1 + gamma[:, None]) + beta[:, None]


class ZoomRegressor(nn.Module):
    r"""Predicts :math:`\log z` from the mean of the tokens: (B, N, d) -> (B,)."""

    def __init__(self, d_model: int) -> None:
        super().__init__()
        self.d_model = check_int("d_model", "ZoomRegressor", d_model, low=1, high=8192)
        self.mlp = nn.Sequential(nn.Linear(d_model, d_model), nn.GELU(), nn.Linear(d_model, 1))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        check_tensor("tokens", "ZoomRegressor", tokens, shape=(None, None, self.d_model))
        check_dtype("tokens", "ZoomRegressor", tokens, self)
        return self.mlp(tokens.mean(dim=1)).squeeze(-1)
