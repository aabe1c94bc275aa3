r"""Loss normalisation across packs, ranks and micro-steps (the paper's stable loss, "Ave-Token").

With per-token losses :math:`\ell_t`, R data-parallel ranks, G accumulation micro-steps and
:math:`N_{glob}` loss tokens in the whole optimizer step (one all-reduce), "Ave-Token" gives each
micro-batch the loss :math:`\sum_{t\in micro}\ell_t/(N_{glob}/R)`. DDP averages gradients over R
and accumulation sums over G, so the step's gradient is :math:`\nabla\sum_{all}\ell_t/N_{glob}`:
every token weighs the same, whatever pack, rank or group it sits in. The baseline
:func:`mean_loss` averages within each micro-batch, so a token's weight depends on how many loss
tokens share its pack.

Both losses propagate NaN and inf in ``token_loss`` by design (a diverged step must show in the
loss, not be hidden by a refusal); the mask is checked.
"""

from __future__ import annotations

from typing import Any

import torch

from paperkit import Described, check_int, check_tensor, param_error

__all__ = ["ave_token_loss", "mean_loss"]


def _mask(owner: str, token_loss: Any, loss_mask: Any) -> torch.Tensor:
    """``loss_mask`` (0/1, the shape of ``token_loss``, (B, T)) in ``token_loss``'s dtype."""
    dims: dict = {}
    check_tensor("token_loss", owner, token_loss, shape=("B", "T"), dims=dims, finite=False)
    check_tensor(
        "loss_mask",
        owner,
        loss_mask,
        shape=("B", "T"),
        dims=dims,
        dtype=None,
        device=token_loss.device,
    )
    if loss_mask.is_floating_point() and not bool(torch.isfinite(loss_mask).all()):
        raise param_error("loss_mask", owner, "0 or 1 everywhere", Described("NaN or inf"))
    if bool(((loss_mask != 0) & (loss_mask != 1)).any()):
        raise param_error("loss_mask", owner, "0 or 1 everywhere", Described("other values"))
    return loss_mask.to(token_loss.dtype)


def ave_token_loss(
    token_loss: torch.Tensor, loss_mask: torch.Tensor, n_tokens_global: int, dp_size: int
) -> torch.Tensor:
    r"""Ave-Token loss of one micro-batch: :math:`\sum_t m_t\ell_t / (N_{glob}/R)`.

    ``token_loss`` (B, T) floating; ``loss_mask`` (B, T) of 0/1; ``n_tokens_global`` and
    ``dp_size`` positive integers. NaN/inf in ``token_loss`` propagate (module docstring).

    >>> ave_token_loss(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[1, 1, 0]]), 12, 2)
    tensor(0.5000)
    """
    owner = "ave_token_loss"
    mask = _mask(owner, token_loss, loss_mask)
    n_glob = check_int("n_tokens_global", owner, n_tokens_global, low=1)
    dp = check_int("dp_size", owner, dp_size, low=1)
    return (token_loss * mask).sum() * (dp / n_glob)


def mean_loss(token_loss: torch.Tensor, loss_mask: torch.Tensor) -> torch.Tensor:
    r"""Per-micro-batch mean :math:`\sum_t m_t\ell_t/\sum_t m_t` (baseline; 0 with no token).

    Same inputs as :func:`ave_token_loss`; NaN/inf in ``token_loss`` propagate.

    >>> mean_loss(torch.tensor([[1.0, 2.0, 3.0]]), torch.tensor([[1, 1, 0]]))
    tensor(1.5000)
    """
    mask = _mask("mean_loss", token_loss, loss_mask)
    return (token_loss * mask).sum() / mask.sum().clamp_min(1)
