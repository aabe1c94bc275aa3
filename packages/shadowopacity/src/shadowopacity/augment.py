"""Shadow Opacity Augmentation (SOA; the paper's Sec. 3, module 1).

Each training image is re-rendered with a new shadow opacity: draw s ~ U(s_range) and
gamma ~ U(gamma_range), set

    alpha' = clip(s * alpha^gamma, 0, 1),    I' = I_f * (1 - alpha' (1 - rho)),

with I_f the shadow-free image when it is known (synthetic data) or its estimate
I_f_hat = I / (1 - alpha (1 - rho_hat)) from :func:`shadowopacity.physics.estimate_rho`.
s = gamma = 1 is the identity. An image whose rho_hat is invalid is left unchanged (I, alpha,
s = 1): relabelling alpha without re-rendering the image would make a wrong pair.
"""

from __future__ import annotations

import torch
from torch import nn

from paperkit import check_int, check_real
from shadowopacity import _inputs
from shadowopacity.physics import _remove, _render, _rho_from_pair, estimate_rho

__all__ = ["ShadowOpacityAugment"]


class ShadowOpacityAugment(nn.Module):
    """Re-render a batch with random shadow opacities; returns ``(I', alpha', s)``.

    Args:
        s_range: range of the opacity scale s (default (0.3, 1.5)).
        gamma_range: range of the opacity exponent gamma (default (0.7, 1.4)).
        p: probability of augmenting each image (the others keep s = gamma = 1).
        min_pixels: passed to :func:`estimate_rho` when the shadow-free image is not given.
    """

    def __init__(
        self,
        s_range: tuple[float, float] = (0.3, 1.5),
        gamma_range: tuple[float, float] = (0.7, 1.4),
        p: float = 0.8,
        min_pixels: int = 10,
    ) -> None:
        super().__init__()
        owner = "ShadowOpacityAugment"
        self.s_range = _inputs.real_range("s_range", owner, s_range, 0.0, 10.0, low_open=True)
        self.gamma_range = _inputs.real_range(
            "gamma_range", owner, gamma_range, 0.0, 10.0, low_open=True
        )
        self.p = check_real("p", owner, p, low=0.0, high=1.0)
        self.min_pixels = check_int("min_pixels", owner, min_pixels, low=1)

    def forward(
        self,
        image: torch.Tensor,
        alpha: torch.Tensor,
        image_free: torch.Tensor | None = None,
        rho: torch.Tensor | None = None,
        generator: torch.Generator | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Augment a batch.

        Args:
            image: shadowed images ``(B, 3, H, W)``.
            alpha: their opacity ``(B, 1, H, W)`` in [0, 1].
            image_free: shadow-free images ``(B, 3, H, W)``, or None (estimated through rho_hat).
            rho: ambient ratio ``(B, 3)`` in (0, 1]; when None, fitted from (I, I_f) if I_f is given
                (least squares of ``1 - I / I_f = alpha (1 - rho)``), else by ``estimate_rho``.
            generator: torch generator of s, gamma and the coin flips (determinism).

        Returns:
            ``I'`` (B, 3, H, W), ``alpha'`` (B, 1, H, W), ``s`` (B,): the scale applied (1 where
            the image was left unchanged).
        """
        owner, dims = "ShadowOpacityAugment", {}
        image = _inputs.image("image", owner, image, dims)
        alpha = _inputs.alpha_map("alpha", owner, alpha, dims)
        if image_free is not None:
            image_free = _inputs.image("image_free", owner, image_free, dims)
        if rho is not None:
            rho = _inputs.rho_vector("rho", owner, rho, dims)
        b = image.shape[0]
        opts = {"generator": generator, "dtype": image.dtype}
        u = torch.rand(b, 3, **opts).to(image.device)
        s = self.s_range[0] + (self.s_range[1] - self.s_range[0]) * u[:, 0]
        gamma = self.gamma_range[0] + (self.gamma_range[1] - self.gamma_range[0]) * u[:, 1]
        keep = u[:, 2] >= self.p
        if rho is None:
            if image_free is None:
                rho, valid = estimate_rho(image, alpha, self.min_pixels)
            else:
                rho, valid = _rho_from_pair(image, image_free, alpha, self.min_pixels)
            keep = keep | ~valid
        if image_free is None:
            image_free = _remove(image, alpha, rho)
        s = torch.where(keep, torch.ones_like(s), s)
        gamma = torch.where(keep, torch.ones_like(gamma), gamma)
        new_alpha = (s[:, None, None, None] * alpha.pow(gamma[:, None, None, None])).clamp(0, 1)
        new_image = _render(image_free, new_alpha, rho)
        same = ((s == 1) & (gamma == 1))[:, None, None, None]
        return torch.where(same, image, new_image), torch.where(same, alpha, new_alpha), s
