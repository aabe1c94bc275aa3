r"""The zoom embedding (paper Sec. 3, "scale-sensitive zoom embedding").

A zoom factor :math:`z>0` (the apparent magnification against a reference field of view) enters
through :math:`e=\mathrm{MLP}([\log z,\sin(\omega_j\log z),\cos(\omega_j\log z)]_{j<F})
+w\log z\in\mathbb{R}^d` with :math:`F` = ``n_freq`` low frequencies
:math:`\omega_j=2^{-j/2}` (periods from :math:`2\pi` up): a linear term plus slowly varying
sinusoids, so the embedding extrapolates beyond the training zoom range instead of acting as a
lookup table over it. It is used twice: as a FiLM on the encoder tokens,
:math:`t\mapsto t\odot(1+\gamma(e))+\beta(e)` with :math:`\gamma,\beta` zero-initialised (so a
fresh model ignores zoom), and added to every decoder query.

Without a zoom label at inference the zoom is predicted, trained with an L1 loss on
:math:`\log z`: :class:`ZoomRegressor` regresses it from the pooled encoder tokens;
:class:`BoxZoomEstimator` reads it off the box sizes of a first, zoom-free decoder pass,
:math:`\widehat{\log z}=\sum_{q,k}w_{qk}(\tfrac12\log w_qh_q-\mu_k)/\sum_{q,k}w_{qk}`, which is
equivariant to zoom by construction (scaling every box by :math:`z` adds :math:`\log z`) and
does not depend on image intensities.
"""

from __future__ import annotations

import torch
from torch import nn

from paperkit import check_int, check_real, check_tensor, param_error

__all__ = [
    "BoxZoomEstimator",
    "ZoomEmbedding",
    "ZoomFiLM",
    "ZoomRegressor",
    "check_dtype",
    "check_zoom",
]


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
    r""":math:`e(z)=\mathrm{MLP}([\log z,\mathrm{sinusoid}(\log z)])+w\log z`, (B,) -> (B, d).

    Args:
        d_model: output width d.
        n_freq: number of frequencies :math:`\omega_j=2^{-j/2}`, :math:`j<` ``n_freq``
            (all at most 1 rad per unit of :math:`\log z`: no feature wraps around within
            :math:`|\log z|<\pi/2`, i.e. zoom 0.2 to 4.8).
    """

    def __init__(self, d_model: int, n_freq: int = 16) -> None:
        super().__init__()
        self.d_model = check_int("d_model", "ZoomEmbedding", d_model, low=1, high=8192)
        self.n_freq = check_int("n_freq", "ZoomEmbedding", n_freq, low=1, high=64)
        freqs = 2.0 ** (-torch.arange(n_freq, dtype=torch.float32) / 2)
        self.register_buffer("freqs", freqs, persistent=False)
        self.mlp = nn.Sequential(
            nn.Linear(2 * n_freq + 1, d_model), nn.GELU(), nn.Linear(d_model, d_model)
        )
        self.linear = nn.Linear(1, d_model, bias=False)

    def forward(self, zoom: torch.Tensor) -> torch.Tensor:
        check_zoom("ZoomEmbedding", zoom)
        return self.embed_log(torch.log(zoom))

    def features(self, log_zoom: torch.Tensor) -> torch.Tensor:
        r""":math:`[\log z,\sin(\omega_j\log z),\cos(\omega_j\log z)]`, (B,) -> (B, 2F + 1)."""
        lz = log_zoom[:, None].to(self.freqs.dtype)
        angle = lz * self.freqs
        return torch.cat([lz, angle.sin(), angle.cos()], dim=-1)

    def embed_log(self, log_zoom: torch.Tensor) -> torch.Tensor:
        r"""The embedding from :math:`\log z` (B,) directly (no checks; used on predictions)."""
        feats = self.features(log_zoom).to(self.mlp[0].weight.dtype)
        return self.mlp(feats) + self.linear(feats[:, :1])


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


class BoxZoomEstimator(nn.Module):
    r"""Predicts :math:`\log z` from the boxes of a zoom-free decoder pass: (B, Q, 4), (B, Q, K)
    -> (B,).

    :math:`\widehat{\log z}=\sum_{q,k}w_{qk}(\tfrac12\log(w_qh_q)-\mu_k)/
    (\epsilon+\sum_{q,k}w_{qk})` with :math:`w_{qk}=p_q(k)\,c_q`: the probability that query q
    is structure k times :math:`c_q=\mathrm{clip}((\mathrm{margin}_q-0.005)/0.02,0,1)`, which
    drops boxes cut by the frame (their size is clipped); :math:`\mu_k` (``offset``) is the
    log-size of structure k at zoom 1, learned by the L1 loss on :math:`\log z`
    (:math:`\epsilon=10^{-6}`: with no visible structure the estimate falls back to zoom 1).
    Boxes and probabilities are detached: the zoom loss trains only :math:`\mu`.

    Args:
        n_classes: K.
        init_log_size: initial :math:`\mu_k` (log of a typical structure size at zoom 1).
    """

    def __init__(self, n_classes: int, init_log_size: float = -1.9) -> None:
        super().__init__()
        self.n_classes = check_int("n_classes", "BoxZoomEstimator", n_classes, low=1, high=1024)
        check_real("init_log_size", "BoxZoomEstimator", init_log_size, low=-20, high=0)
        self.offset = nn.Parameter(torch.full((n_classes,), float(init_log_size)))

    def forward(self, boxes: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
        owner = "BoxZoomEstimator"
        dims: dict = {}
        check_tensor("boxes", owner, boxes, shape=("B", "Q", 4), dims=dims)
        check_tensor("probs", owner, probs, shape=("B", "Q", self.n_classes), dims=dims)
        check_dtype("boxes", owner, boxes, self)
        check_dtype("probs", owner, probs, self)
        return self.estimate(boxes, probs)

    def estimate(self, boxes: torch.Tensor, probs: torch.Tensor) -> torch.Tensor:
        """The estimate without input checks (used inside :class:`~zrdetr.model.ZRDETR`)."""
        b, p = boxes.detach().float(), probs.detach().float()
        half = b[..., 2:] / 2
        margin = torch.cat([b[..., :2] - half, 1 - b[..., :2] - half], -1).amin(-1)
        weight = p * ((margin - 0.005) / 0.02).clamp(0, 1)[..., None]
        log_size = 0.5 * torch.log(b[..., 2:].clamp(min=1e-6)).sum(-1)
        num = (weight * (log_size[..., None] - self.offset.float())).sum((-2, -1))
        return num / (weight.sum((-2, -1)) + 1e-6)
