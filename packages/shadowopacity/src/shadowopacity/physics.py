"""The image-formation model of shadows and its inverse (the paper's Sec. 3, "image formation").

A shadow of opacity alpha in [0, 1] (0 lit, 1 umbra) attenuates the shadow-free image I_f by

    I = I_f * (1 - alpha * (1 - rho)),                                          (1)

per pixel, with rho in (0, 1] the per-channel ratio of ambient to total light (the colour of the
umbra). :func:`remove_shadow` inverts (1); :func:`estimate_rho` fits rho from an image and its
opacity map alone, which shadow removal and the augmentation of real images need.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from paperkit import check_int, check_real
from shadowopacity import _inputs

__all__ = ["RING_PX", "T_MASK", "estimate_rho", "remove_shadow", "render_shadow"]

#: Opacity above which a pixel belongs to the binary position mask m = 1[alpha > t_m].
T_MASK = 0.05
#: Width (pixels) of the lit ring around the shadow that serves as the lit colour reference.
RING_PX = 5
#: Opacity above which a pixel enters the least-squares fit of rho.
T_FIT = 0.3


def render_shadow(image_free: torch.Tensor, alpha: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
    """Eq. (1): ``I = I_f * (1 - alpha (1 - rho))``.

    Args:
        image_free: shadow-free images ``(B, 3, H, W)``.
        alpha: opacity ``(B, 1, H, W)`` in [0, 1].
        rho: ambient ratio ``(B, 3)`` in (0, 1].

    Returns:
        The shadowed images ``(B, 3, H, W)``; alpha = 0 gives ``I_f``, alpha = 1 gives rho I_f.
    """
    owner, dims = "render_shadow", {}
    image_free = _inputs.image("image_free", owner, image_free, dims)
    alpha = _inputs.alpha_map("alpha", owner, alpha, dims)
    rho = _inputs.rho_vector("rho", owner, rho, dims)
    return _render(image_free, alpha, rho)


def _render(image_free: torch.Tensor, alpha: torch.Tensor, rho: torch.Tensor) -> torch.Tensor:
    return image_free * (1.0 - alpha * (1.0 - rho[:, :, None, None]))


def remove_shadow(
    image: torch.Tensor, alpha: torch.Tensor, rho: torch.Tensor, eps: float = 1e-3
) -> torch.Tensor:
    """Invert eq. (1): ``I_f = I / max(1 - alpha (1 - rho), eps)``.

    Args:
        image: shadowed images ``(B, 3, H, W)``.
        alpha: opacity ``(B, 1, H, W)`` in [0, 1] (true or predicted).
        rho: ambient ratio ``(B, 3)`` in (0, 1].
        eps: floor of the attenuation, so a near-black umbra does not blow up.
    """
    owner, dims = "remove_shadow", {}
    image = _inputs.image("image", owner, image, dims)
    alpha = _inputs.alpha_map("alpha", owner, alpha, dims)
    rho = _inputs.rho_vector("rho", owner, rho, dims)
    eps = check_real("eps", owner, eps, low=0.0, high=1.0, low_open=True)
    return _remove(image, alpha, rho, eps)


def _remove(image: torch.Tensor, alpha: torch.Tensor, rho: torch.Tensor, eps: float = 1e-3):
    return image / (1.0 - alpha * (1.0 - rho[:, :, None, None])).clamp_min(eps)


def _rho_from_pair(
    image: torch.Tensor, image_free: torch.Tensor, alpha: torch.Tensor, min_pixels: int = 10
) -> tuple[torch.Tensor, torch.Tensor]:
    """rho when the shadow-free image is known: per channel, the least-squares fit through the
    origin of ``1 - I / I_f = alpha (1 - rho)`` over the pixels with alpha > 0.3."""
    a = alpha * (alpha > T_FIT)
    ratio = image / image_free.clamp_min(1e-6)
    denom = (a * a).sum(dim=(1, 2, 3)).clamp_min(1e-12)
    rho = (1.0 - (a * (1.0 - ratio)).sum(dim=(2, 3)) / denom[:, None]).clamp(0.1, 1.0)
    valid = (alpha > T_FIT).sum(dim=(1, 2, 3)) >= min_pixels
    return torch.where(valid[:, None], rho, torch.ones_like(rho)), valid


def _disk(radius: int, dtype: torch.dtype) -> torch.Tensor:
    r = torch.arange(-radius, radius + 1, dtype=dtype)
    return ((r[:, None] ** 2 + r[None, :] ** 2) <= radius**2).to(dtype)[None, None]


def estimate_rho(
    image: torch.Tensor, alpha: torch.Tensor, min_pixels: int = 10
) -> tuple[torch.Tensor, torch.Tensor]:
    """Fit rho of eq. (1) from an image and its opacity map.

    The lit reference c (per channel) is the mean colour of the ring of pixels within
    ``RING_PX`` = 5 px of the shadow {alpha > 0.05} and outside it. By (1), for a shadow pixel
    ``1 - I_i / c = alpha_i (1 - rho)``, so per channel the least-squares fit through the origin
    over the pixels with alpha > 0.3 is

        1 - rho_hat = sum_i alpha_i (1 - I_i / c) / sum_i alpha_i^2,   clipped to [0.1, 1].

    Ring pixels may carry a faint penumbra (0 < alpha <= 0.05); c is refined by dividing them by
    their own attenuation under the current rho_hat (three fixed-point passes; a no-op when the
    ring is fully lit). An image with fewer than ``min_pixels`` fit pixels or an empty ring gets
    ``rho_hat = 1`` and ``valid = False`` (never NaN).

    Returns:
        ``(rho_hat (B, 3), valid (B,) bool)``.
    """
    owner, dims = "estimate_rho", {}
    image = _inputs.image("image", owner, image, dims)
    alpha = _inputs.alpha_map("alpha", owner, alpha, dims)
    min_pixels = check_int("min_pixels", owner, min_pixels, low=1)
    with torch.no_grad():
        mask = (alpha > T_MASK).to(image.dtype)
        near = F.conv2d(mask, _disk(RING_PX, image.dtype), padding=RING_PX) > 0.5
        ring = (near & (mask < 0.5)).to(image.dtype)
        n_ring = ring.sum(dim=(1, 2, 3))
        fit = (alpha > T_FIT).to(image.dtype)
        a = alpha * fit
        denom = (a * a).sum(dim=(1, 2, 3)).clamp_min(1e-12)
        valid = (fit.sum(dim=(1, 2, 3)) >= min_pixels) & (n_ring > 0)
        rho = torch.ones(image.shape[0], 3, dtype=image.dtype, device=image.device)
        for _ in range(3):
            lit = _remove(image, alpha, rho) * ring
            c = lit.sum(dim=(2, 3)) / n_ring.clamp_min(1)[:, None]
            ratio = image / c[:, :, None, None].clamp_min(1e-6)
            one_minus = (a * (1.0 - ratio)).sum(dim=(2, 3)) / denom[:, None]
            rho = (1.0 - one_minus).clamp(0.1, 1.0)
        rho = torch.where(valid[:, None], rho, torch.ones_like(rho))
    return rho, valid
