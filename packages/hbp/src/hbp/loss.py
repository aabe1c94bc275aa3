r"""Loss normalisation across packs, ranks and micro-steps (card, step 5).

With per-token losses :math:`\ell_t`, R data-parallel ranks, G accumulation micro-steps and
:math:`N_{glob}` loss tokens in the whole optimizer step (one all-reduce), "Ave-Token" gives each
micro-batch the loss :math:`\sum_{t\in micro}\ell_t/(N_{glob}/R)`. DDP averages gradients over R
and accumulation sums over G, so the step's gradient is :math:`\nabla\sum_{all}\ell_t/N_{glob}`:
every token weighs the same, whatever pack, rank or group it sits in. The baseline
:func:`mean_loss` averages within each micro-batch, so a token's weight depends on how many loss
tokens share its pack.
"""

from __future__ import annotations

import torch

from paperkit import Described, param_error

__all__ = ["ave_token_loss", "mean_loss"]


def _check(token_loss: torch.Tensor, loss_mask: torch.Tensor, owner: str) -> torch.Tensor:
    if not isinstance(token_loss, torch.Tensor) or token_loss.ndim != 2:
        raise param_error("token_loss", owner, "a (B, T) tensor", Described(_shape(token_loss)))
    if not isinstance(loss_mask, torch.Tensor) or loss_mask.shape != token_loss.shape:
        raise param_error(
            "loss_mask",
            owner,
            f"a tensor of shape {tuple(token_loss.shape)}",
            Described(_shape(loss_mask)),
        )
    return loss_mask.to(token_loss.dtype)


def _shape(x: object) -> str:
    return f"shape {tuple(x.shape)}" if isinstance(x, torch.Tensor) else type(x).__name__


def ave_token_loss(
    token_loss: torch.Tensor, loss_mask: torch.Tensor, n_tokens_global: int, dp_size: int
) -> torch.Tensor:
    r"""Ave-Token loss of one micro-batch: :math:`\sum_t m_t\ell_t / (N_{glob}/R)`."""
    mask = _check(token_loss, loss_mask, "ave_token_loss")
    if isinstance(n_tokens_global, bool) or int(n_tokens_global) < 1:
        raise param_error(
            "n_tokens_global", "ave_token_loss", "a positive integer", n_tokens_global
        )
    if isinstance(dp_size, bool) or int(dp_size) < 1:
        raise param_error("dp_size", "ave_token_loss", "a positive integer", dp_size)
    return (token_loss * mask).sum() * (int(dp_size) / int(n_tokens_global))


def mean_loss(token_loss: torch.Tensor, loss_mask: torch.Tensor) -> torch.Tensor:
    r"""Per-micro-batch mean :math:`\sum_t m_t\ell_t/\sum_t m_t` (baseline)."""
    mask = _check(token_loss, loss_mask, "mean_loss")
    return (token_loss * mask).sum() / mask.sum().clamp_min(1)
