"""Domain alignment of Stage 2: CORAL-style matching of latent statistics.

The adapter's pooled latents ``a`` (``n_a x d``) are pulled towards a stored bank ``b`` of
pre-training latents by matching the first two moments (Sun & Saenko, CORAL, 2016):
``||mu_a - mu_b||^2 / d + ||C_a - C_b||_F^2 / (4 d^2)``, so the frozen forecasting head keeps
seeing in-distribution features.
"""

from __future__ import annotations

from torch import Tensor

from paperkit import check_tensor

__all__ = ["coral_loss"]


def _cov(x: Tensor) -> Tensor:
    centred = x - x.mean(0, keepdim=True)
    return centred.T @ centred / max(x.shape[0] - 1, 1)


def coral_loss(a: Tensor, b: Tensor) -> Tensor:
    r"""Mean and covariance matching loss between two batches of latents.

    .. math:: \frac{\lVert \mu_a-\mu_b \rVert^2}{d} + \frac{\lVert C_a - C_b \rVert_F^2}{4 d^2}

    Args:
        a: ``(n_a, d)`` latents (n_a >= 2), NaN refused.
        b: ``(n_b, d)`` latents (n_b >= 2), NaN refused.

    Returns a scalar, 0 for identical batches.

    >>> import torch
    >>> x = torch.randn(16, 4)
    >>> float(coral_loss(x, x)), float(coral_loss(x, x + 1)) > 0
    (0.0, True)
    """
    dims: dict = {}
    check_tensor("a", "coral_loss", a, shape=("n_a", "d"), dims=dims)
    check_tensor("b", "coral_loss", b, shape=("n_b", "d"), dims=dims)
    d = a.shape[1]
    mean = (a.mean(0) - b.mean(0).to(a.dtype)).pow(2).sum() / d
    cov = (_cov(a) - _cov(b).to(a.dtype)).pow(2).sum() / (4 * d * d)
    return mean + cov
