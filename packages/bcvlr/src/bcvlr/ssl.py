r"""Stage 1a: self-supervised, action-relevant features (Sec. 3.1 of the paper).

Two random shifts of the same frame give :math:`z = g(f(\mathrm{aug}(o)))` and the target
:math:`z' = g_{tgt}(f_{tgt}(\mathrm{aug}'(o)))` (EMA copies, :math:`\theta_{tgt} \leftarrow
(1-\tau)\theta_{tgt} + \tau\theta` every 2 steps). With the predictor :math:`q` (MLP) and a
bilinear matrix :math:`W`, the scores over a batch are :math:`S = q(z) (W z')^\top` and

.. math:: L_{con} = -\frac{1}{B}\sum_b \log \mathrm{softmax}(S_{b,:})_b,

plus :math:`0.1\,\mathrm{MSE}(\mathrm{dec}(f(\mathrm{aug}(o))), \mathrm{aug}(o))`, a conv decoder
that reconstructs the augmented frame.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn

from bcvlr.config import BCVLRConfig
from bcvlr.models import Encoder
from paperkit import check_callable, check_int, check_tensor, describe, param_error

__all__ = ["SelfSupervised", "contrastive_loss", "random_shift"]


def random_shift(
    o: torch.Tensor, pad: int = 1, generator: torch.Generator | None = None
) -> torch.Tensor:
    """Random-shift augmentation (DrQ): replicate-pad by ``pad`` pixels and crop back to
    (H, W) at a random offset per image, so content moves by at most ``pad`` pixels.

    ``o``: (B, C, H, W). NaN policy: refused. Deterministic given ``generator``.

    >>> o = torch.arange(16.0).reshape(1, 1, 4, 4)
    >>> random_shift(o, pad=0).equal(o)
    True
    """
    check_tensor("o", "random_shift", o, ndim=4)
    pad = check_int("pad", "random_shift", pad, low=0, high=64)
    if generator is not None and not isinstance(generator, torch.Generator):
        raise param_error(
            "generator",
            "random_shift",
            "a torch.Generator or None",
            describe(generator),
            cls=TypeError,
        )
    if pad == 0:
        return o.clone()
    B, C, H, W = o.shape
    padded = F.pad(o, (pad, pad, pad, pad), mode="replicate")
    off = torch.randint(0, 2 * pad + 1, (2, B), generator=generator).to(o.device)
    rows = off[0][:, None] + torch.arange(H, device=o.device)
    cols = off[1][:, None] + torch.arange(W, device=o.device)
    b = torch.arange(B, device=o.device)[:, None, None]
    return padded.permute(0, 2, 3, 1)[b, rows[:, :, None], cols[:, None, :]].permute(0, 3, 1, 2)


def contrastive_loss(
    z: torch.Tensor,
    z_target: torch.Tensor,
    predictor: Callable[[torch.Tensor], torch.Tensor],
    W: Callable[[torch.Tensor], torch.Tensor],
) -> torch.Tensor:
    """:math:`-\\frac1B\\sum_b \\log\\mathrm{softmax}(q(z)(W z')^\\top)_{bb}` (module docstring).

    ``z``, ``z_target``: (B, P); ``predictor`` and ``W`` map (B, P) -> (B, P) (e.g. an MLP and
    ``nn.Linear(P, P, bias=False)``). NaN policy: refused.

    >>> z = torch.eye(3) * 50
    >>> float(contrastive_loss(z, z, lambda x: x, lambda x: x)) < 1e-6
    True
    """
    dims: dict = {}
    check_tensor("z", "contrastive_loss", z, shape=("B", "P"), dims=dims)
    check_tensor("z_target", "contrastive_loss", z_target, shape=("B", "P"), dims=dims)
    check_callable("predictor", "contrastive_loss", predictor)
    check_callable("W", "contrastive_loss", W)
    dtype = torch.promote_types(z.dtype, z_target.dtype)
    scores = predictor(z.to(dtype)) @ W(z_target.to(dtype)).T
    return -torch.diagonal(F.log_softmax(scores, dim=1)).mean()


class _Reconstruct(nn.Sequential):
    """Conv decoder from features (C, H/s, W/s) back to the frame (3, H, W)."""

    def __init__(self, channels: int, stride: int) -> None:
        up = (
            [nn.ConvTranspose2d(channels, channels, 4, stride=2, padding=1), nn.ReLU()]
            if stride == 2
            else []
        )
        super().__init__(
            *up,
            nn.Conv2d(channels, channels, 3, padding=1),
            nn.ReLU(),
            nn.Conv2d(channels, 3, 3, padding=1),
        )


class SelfSupervised(nn.Module):
    """The stage-1a learner around a shared :class:`~bcvlr.models.Encoder`: projector, EMA
    target encoder and projector, predictor MLP (P -> hidden -> P), bilinear ``W`` and the
    reconstruction decoder. :meth:`step` makes one Adam step on a batch of frames."""

    def __init__(
        self, encoder: Encoder, frame_hw: tuple[int, int], config: BCVLRConfig | None = None
    ) -> None:
        super().__init__()
        cfg = config or BCVLRConfig.small()
        self.cfg = cfg
        self.encoder = encoder
        feat = math.prod(encoder.out_shape(frame_hw))
        self.projector = nn.Sequential(nn.Flatten(), nn.Linear(feat, cfg.proj_dim))
        self.predictor = nn.Sequential(
            nn.Linear(cfg.proj_dim, cfg.pred_hidden),
            nn.ReLU(),
            nn.Linear(cfg.pred_hidden, cfg.proj_dim),
        )
        self.W = nn.Linear(cfg.proj_dim, cfg.proj_dim, bias=False)
        self.reconstruct = _Reconstruct(encoder.channels, encoder.stride)
        self.encoder_tgt = copy.deepcopy(encoder).requires_grad_(False)
        self.projector_tgt = copy.deepcopy(self.projector).requires_grad_(False)
        online = [encoder, self.projector, self.predictor, self.W, self.reconstruct]
        self.opt = torch.optim.Adam([p for m in online for p in m.parameters()], lr=cfg.ssl_lr)
        self.updates = 0

    def loss(self, o: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """:math:`L_{con} + 0.1\\,L_{rec}` on frames ``o`` (B, 3, H, W)."""
        a, b = random_shift(o, 1, generator), random_shift(o, 1, generator)
        feats = self.encoder.net(a)
        z = self.projector(feats)
        with torch.no_grad():
            z_t = self.projector_tgt(self.encoder_tgt.net(b))
        rec = F.mse_loss(self.reconstruct(feats), a)
        return contrastive_loss(z, z_t, self.predictor, self.W) + self.cfg.recon_weight * rec

    def step(self, o: torch.Tensor, generator: torch.Generator | None = None) -> float:
        """One Adam step; the EMA targets move every ``ssl_target_every`` steps."""
        loss = self.loss(o, generator)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        self.updates += 1
        if self.updates % self.cfg.ssl_target_every == 0:
            tau = self.cfg.ssl_tau
            with torch.no_grad():
                for src, dst in (
                    (self.encoder, self.encoder_tgt),
                    (self.projector, self.projector_tgt),
                ):
                    for p, q in zip(src.parameters(), dst.parameters(), strict=True):
                        q.lerp_(p, tau)
        return float(loss.detach())
