r"""The denoising-diffusion next-step simulator (ROBIN Sec. 3.2; DDPM, Ho et al. 2020).

Cosine schedule (Nichol & Dhariwal 2021): :math:`\bar\alpha_k = f(k)/f(0)`,
:math:`f(k) = \cos^2\!\big(\tfrac{k/K + s}{1 + s}\tfrac{\pi}{2}\big)`, :math:`s = 0.008`,
:math:`\beta_k = \min(1 - \bar\alpha_k/\bar\alpha_{k-1}, 0.999)`, so :math:`\bar\alpha_0 = 1` and
:math:`\bar\alpha_K \approx 0`. Training: :math:`k \sim U\{1..K\}`, :math:`\epsilon \sim N(0, I)`,
:math:`x_k = \sqrt{\bar\alpha_k}\, y_t + \sqrt{1 - \bar\alpha_k}\,\epsilon`, loss
:math:`\lVert\hat\epsilon(x_k, k, \mathrm{cond}_t) - \epsilon\rVert^2` over the non-Dirichlet nodes.
A reverse step from level :math:`k` to :math:`j < k` (:math:`j = k - 1` for DDPM) uses
:math:`\hat x_0 = (x_k - \sqrt{1 - \bar\alpha_k}\hat\epsilon)/\sqrt{\bar\alpha_k}` and the
q-posterior

.. math::
    \mu = \frac{\sqrt{\bar\alpha_j}\,(1 - a)}{1 - \bar\alpha_k}\hat x_0
        + \frac{\sqrt{a}\,(1 - \bar\alpha_j)}{1 - \bar\alpha_k} x_k, \quad
    \sigma^2 = \frac{1 - \bar\alpha_j}{1 - \bar\alpha_k}(1 - a), \quad
    a = \bar\alpha_k/\bar\alpha_j,

with no noise added when :math:`j = 0` (so :math:`x_0 = \hat x_0`). At sampling time
:math:`\hat x_0` is clipped to :math:`\pm 1.1 \max|y|` of the training targets (Ho et al.'s
``clip_denoised``; ``clip=False`` turns it off): with :math:`\bar\alpha_K \approx 10^{-4}` the
division by :math:`\sqrt{\bar\alpha_K}` amplifies the network's error a hundredfold.
"""

from __future__ import annotations

import math

import torch
from torch import nn

from paperkit import check_bool, check_choice, check_int, check_real, check_tensor, param_error
from robin.layers import AMPN, mlp
from robin.simulator import Cond, StepBatch, _Base, _check_cond, edge_dim, node_dim

__all__ = ["ROBIN", "DiffusionSimulator", "cosine_alpha_bar", "step_embedding"]

EMB = 32  # width of the sinusoidal step embedding


def cosine_alpha_bar(num_steps: int, s: float = 0.008) -> torch.Tensor:
    r""":math:`\bar\alpha_k`, k = 0..K, of the cosine schedule (float64, module docstring)."""
    K = check_int("num_steps", "cosine_alpha_bar", num_steps, low=1, high=10_000)
    s = check_real("s", "cosine_alpha_bar", s, low=0, high=1, high_open=True)
    k = torch.arange(K + 1, dtype=torch.float64)
    f = torch.cos((k / K + s) / (1 + s) * math.pi / 2) ** 2
    beta = (1 - f[1:] / f[:-1]).clamp(max=0.999)
    return torch.cat([torch.ones(1, dtype=torch.float64), torch.cumprod(1 - beta, 0)])


def step_embedding(k: torch.Tensor, width: int = EMB) -> torch.Tensor:
    r"""Sinusoidal embedding of integer steps ``k`` (any shape) -> (..., width):
    :math:`[\sin(k\omega_i), \cos(k\omega_i)]`, :math:`\omega_i = 10^{-4 i/(w/2)}`."""
    half = width // 2
    freq = torch.exp(-math.log(1e4) * torch.arange(half, device=k.device) / half)
    arg = k.to(torch.float32)[..., None] * freq
    return torch.cat([arg.sin(), arg.cos()], dim=-1)


class DiffusionSimulator(_Base):
    r"""DDPM next-step simulator around a message-passing backbone (ROBIN Sec. 3.2).

    ``backbone(node_feat, edge_feat, hier, k_emb)`` predicts :math:`\hat\epsilon` (N, D); the
    step embedding (sinusoid -> MLP, width ``backbone.latent``) is passed as ``k_emb``.

    Args:
        backbone: an :class:`AMPN` or :class:`MGNProcessor` with ``node_in = node_dim(D)``,
            ``edge_in = edge_dim(D)``, ``out_dim = D``.
        num_steps: K denoising steps (paper default 20).
        schedule: ``"cosine"`` (the paper's) or ``"linear"`` (:math:`\beta` from 1e-4 to 0.02
            rescaled to K steps).
        predict: ``"residual"`` (:math:`u_{t+1} - u_t`, the paper's choice) or ``"state"``.
    """

    def __init__(
        self,
        backbone: nn.Module,
        num_steps: int = 20,
        schedule: str = "cosine",
        predict: str = "residual",
    ) -> None:
        owner = "DiffusionSimulator"
        if not isinstance(backbone, nn.Module) or not hasattr(backbone, "latent"):
            raise param_error(
                "backbone", owner, "an AMPN or MGNProcessor", type(backbone).__name__, cls=TypeError
            )
        K = check_int("num_steps", owner, num_steps, low=1, high=1000)
        schedule = check_choice("schedule", owner, schedule, ("cosine", "linear"))
        predict = check_choice("predict", owner, predict, ("residual", "state"))
        super().__init__(backbone, predict, backbone.out_dim)
        self.num_steps = self.calls_per_step = K
        if schedule == "cosine":
            ab = cosine_alpha_bar(K)
        else:
            beta = torch.linspace(
                1e-4 * 1000 / K, min(0.02 * 1000 / K, 0.999), K, dtype=torch.float64
            )
            ab = torch.cat([torch.ones(1, dtype=torch.float64), torch.cumprod(1 - beta, 0)])
        self.schedule = schedule
        self.register_buffer("alpha_bar", ab)
        self.step_mlp = mlp(EMB, backbone.latent, backbone.latent, norm=False)

    def eps(self, x: torch.Tensor, k: torch.Tensor, cond: Cond) -> torch.Tensor:
        r""":math:`\hat\epsilon(x_k, k, \mathrm{cond})` for B graphs: x (B, N, D), k (B,)."""
        node, edge, hier = self.features(cond, x)
        B, N, _ = x.shape
        k_emb = self.step_mlp(step_embedding(k.to(x.device)).to(x.dtype))
        k_emb = k_emb[:, None].expand(B, N, -1).reshape(B * N, -1)
        return self.backbone(node, edge, hier, k_emb).reshape(x.shape)

    def forward(self, x: torch.Tensor, k: torch.Tensor, cond: Cond) -> torch.Tensor:
        return self.eps(x, k, cond)

    def loss(
        self,
        batch: StepBatch,
        k: torch.Tensor | None = None,
        noise: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> torch.Tensor:
        """The ε-loss over the free nodes; ``k`` (B,) and ``noise`` (B, N, D) drawn when None."""
        owner = "DiffusionSimulator.loss"
        if not isinstance(batch, StepBatch):
            raise param_error("batch", owner, "a StepBatch", type(batch).__name__, cls=TypeError)
        y = self.target(batch.cond.u, batch.u_next)
        B = y.shape[0]
        if k is None:
            k = torch.randint(1, self.num_steps + 1, (B,), generator=generator).to(y.device)
        check_tensor("k", owner, k, shape=(B,), dtype="int")
        if int(k.min()) < 1 or int(k.max()) > self.num_steps:
            raise param_error("k", owner, f"steps in [1, {self.num_steps}]", k.tolist())
        if noise is None:
            noise = torch.randn(y.shape, generator=generator).to(y)
        check_tensor("noise", owner, noise, shape=tuple(y.shape), dtype=y.dtype)
        ab = self.alpha_bar[k].to(y.dtype)[:, None, None]
        x_k = ab.sqrt() * y + (1 - ab).sqrt() * noise
        return self._masked_mse(self.eps(x_k, k, batch.cond), noise, batch.cond)

    def posterior(self, x_k, x0, k, j):
        """Mean and std of q(x_j | x_k, x0) for per-graph levels k > j >= 0 (module docstring)."""
        ab_k = self.alpha_bar[k].to(x_k.dtype)[:, None, None]
        ab_j = self.alpha_bar[j].to(x_k.dtype)[:, None, None]
        a = ab_k / ab_j
        mean = (ab_j.sqrt() * (1 - a) * x0 + a.sqrt() * (1 - ab_j) * x_k) / (1 - ab_k)
        var = (1 - ab_j) / (1 - ab_k) * (1 - a)
        return mean, var.clamp_min(0).sqrt()

    def denoise_step(
        self,
        x_k: torch.Tensor,
        k: torch.Tensor,
        cond: Cond,
        k_prev: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
        clip: bool = True,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        r"""One reverse step of B graphs at levels ``k`` (B,) to ``k_prev`` (default k - 1):
        returns :math:`(x_{k_{prev}}, \hat x_0)`; no noise where ``k_prev`` is 0; ``clip``
        bounds :math:`\hat x_0` (module docstring)."""
        owner = "DiffusionSimulator.denoise_step"
        cond = _check_cond(owner, cond)
        dims: dict = {}
        check_tensor("x_k", owner, x_k, shape=("B", "N", self.dim), dims=dims, dtype=cond.u.dtype)
        check_tensor("k", owner, k, shape=("B",), dims=dims, dtype="int")
        if int(k.min()) < 1 or int(k.max()) > self.num_steps:
            raise param_error("k", owner, f"steps in [1, {self.num_steps}]", k.tolist())
        if tuple(cond.u.shape) != tuple(x_k.shape):
            raise param_error(
                "x_k", owner, f"of the shape of cond.u {tuple(cond.u.shape)}", tuple(x_k.shape)
            )
        j = k - 1 if k_prev is None else k_prev
        if bool(((j < 0) | (j >= k)).any()):
            raise param_error("k_prev", owner, "levels in [0, k)", j.tolist())
        eps = self.eps(x_k, k, cond)
        ab_k = self.alpha_bar[k].to(x_k.dtype)[:, None, None]
        x0 = (x_k - (1 - ab_k).sqrt() * eps) / ab_k.sqrt()
        if check_bool("clip", owner, clip):
            x0 = x0.clamp(-self.y_bound, self.y_bound)
        mean, std = self.posterior(x_k, x0, k, j)
        z = torch.randn(x_k.shape, generator=generator, dtype=x_k.dtype).to(x_k.device)
        return mean + std * z, x0

    @torch.no_grad()
    def sample_next(self, cond: Cond, generator: torch.Generator | None = None):
        """K sequential reverse steps from :math:`x_K \\sim N(0, I)`: :math:`u_{t+1}` (B, N, D)
        with exact Dirichlet values, and the number of network calls K."""
        x = torch.randn(cond.u.shape, generator=generator).to(cond.u)
        B = x.shape[0]
        for k in range(self.num_steps, 0, -1):
            x, _ = self.denoise_step(
                x, torch.full((B,), k, dtype=torch.long), cond, generator=generator
            )
        return self.impose(self.from_target(cond.u, x), cond.bc, cond.dirichlet), self.num_steps


class ROBIN(DiffusionSimulator):
    """ROBIN: an :class:`AMPN` backbone inside a :class:`DiffusionSimulator` (roll it out with
    :func:`robin.robi_rollout` or :func:`robin.sequential_rollout`)."""

    def __init__(
        self,
        dim: int = 2,
        latent: int = 128,
        blocks_per_level: int = 2,
        levels: int = 3,
        share_levels: bool = True,
        num_steps: int = 20,
    ) -> None:
        dim = check_int("dim", "ROBIN", dim, low=1, high=3)
        net = AMPN(
            node_dim(dim), edge_dim(dim), dim, latent, blocks_per_level, levels, share_levels, dim
        )
        super().__init__(net, num_steps=num_steps)
