"""The applications of an opacity map (the paper's Sec. 5): shadow removal and shadow editing."""

from __future__ import annotations

import torch

from paperkit import check_int, check_real
from shadowopacity import _inputs
from shadowopacity.physics import _remove, _render, _rho_from_pair, estimate_rho

__all__ = ["edit_shadow", "remove_predicted_shadow"]


def remove_predicted_shadow(
    image: torch.Tensor, alpha_hat: torch.Tensor, min_pixels: int = 10
) -> tuple[torch.Tensor, torch.Tensor]:
    """Shadow removal from a predicted opacity: ``rho_hat`` by :func:`estimate_rho` on
    (I, alpha_hat), then ``I_f_hat = I / (1 - alpha_hat (1 - rho_hat))`` (images with an invalid
    rho_hat come back unchanged). Returns ``(I_f_hat, rho_hat)``."""
    owner, dims = "remove_predicted_shadow", {}
    image = _inputs.image("image", owner, image, dims)
    alpha_hat = _inputs.alpha_map("alpha_hat", owner, alpha_hat, dims)
    min_pixels = check_int("min_pixels", owner, min_pixels, low=1)
    rho, _ = estimate_rho(image, alpha_hat, min_pixels)
    return _remove(image, alpha_hat, rho), rho


def edit_shadow(
    image: torch.Tensor,
    alpha: torch.Tensor,
    s: float,
    gamma: float = 1.0,
    image_free: torch.Tensor | None = None,
    rho: torch.Tensor | None = None,
    min_pixels: int = 10,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Shadow editing with the SOA renderer: ``alpha' = clip(s alpha^gamma, 0, 1)`` and
    ``I' = I_f (1 - alpha' (1 - rho))`` with I_f given or estimated through rho_hat, and rho given,
    fitted from (I, I_f) or estimated by :func:`estimate_rho` (s < 1 lightens, s > 1 darkens,
    s = 0 removes; s = gamma = 1 returns the input). Images whose rho cannot be fitted come back
    unchanged. Returns ``(I', alpha')``."""
    owner, dims = "edit_shadow", {}
    image = _inputs.image("image", owner, image, dims)
    alpha = _inputs.alpha_map("alpha", owner, alpha, dims)
    s = check_real("s", owner, s, low=0.0, high=10.0)
    gamma = check_real("gamma", owner, gamma, low=0.0, high=10.0, low_open=True)
    if image_free is not None:
        image_free = _inputs.image("image_free", owner, image_free, dims)
    min_pixels = check_int("min_pixels", owner, min_pixels, low=1)
    if s == 1.0 and gamma == 1.0:
        return image, alpha
    if rho is not None:
        rho = _inputs.rho_vector("rho", owner, rho, dims)
        valid = torch.ones(image.shape[0], dtype=torch.bool, device=image.device)
    elif image_free is not None:
        rho, valid = _rho_from_pair(image, image_free, alpha, min_pixels)
    else:
        rho, valid = estimate_rho(image, alpha, min_pixels)
    if image_free is None:
        image_free = _remove(image, alpha, rho)
    new_alpha = (s * alpha.pow(gamma)).clamp(0.0, 1.0)
    out = _render(image_free, new_alpha, rho)
    keep = (~valid)[:, None, None, None]
    return torch.where(keep, image, out), torch.where(keep, alpha, new_alpha)
