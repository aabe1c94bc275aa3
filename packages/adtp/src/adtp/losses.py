r"""The terms of AD-TP's training objective

.. math::  L = \mathrm{CE}(y, S) + \alpha\tau^2\,\mathrm{KL}(\sigma(T/\tau)\,\|\,\sigma(S/\tau))
           + \beta L_{\mathrm{attr}} + \gamma L_{\mathrm{ssl}}
           + \eta\,(\hat F/F_{\mathrm{full}} - \phi)^2 .

These are internal building blocks of :func:`adtp.train.train_adtp` (no argument checks; the
trainer checks its inputs). Every loss is a batch mean.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["attribution_loss", "consistency_loss", "distillation_loss", "flops_loss", "standardise"]


def standardise(g: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    r""":math:`(g - \bar g)/s_g` over the tokens in ``mask`` (per row), 0 elsewhere."""
    m = mask.to(g.dtype)
    n = m.sum(-1, keepdim=True).clamp_min(1)
    mean = (g * m).sum(-1, keepdim=True) / n
    var = ((g - mean) ** 2 * m).sum(-1, keepdim=True) / n
    return (g - mean) / (var.sqrt() + 1e-6) * m


def attribution_loss(
    scores: list[torch.Tensor], target: torch.Tensor, mask: torch.Tensor, tau: float = 0.1
) -> torch.Tensor:
    r""":math:`L_{\mathrm{attr}} = \sum_p \mathrm{KL}(\mathrm{softmax}(z/\tau_a)\,\|\,
    \mathrm{softmax}(a^{(p)}/\tau_a))` over the tokens in ``mask``, :math:`z` the standardised
    target. ``target`` (B, N) is shared by every layer, (B, K, N) is one per layer. Rows whose
    target is all zero (no attribution) are left out."""
    has = target.flatten(1).abs().sum(-1) > 0
    if not bool(has.any()):
        return scores[0].sum() * 0
    total = scores[0].new_zeros(())
    for k, a in enumerate(scores):
        g = target[:, k] if target.ndim == 3 else target
        z = standardise(g, mask)
        p_log = torch.log_softmax((z / tau).masked_fill(~mask, float("-inf")), -1)
        q_log = torch.log_softmax((a / tau).masked_fill(~mask, float("-inf")), -1)
        kl = (p_log.exp() * (p_log - q_log)).masked_fill(~mask, 0).sum(-1)
        total = total + kl[has].mean()
    return total


def distillation_loss(
    student: torch.Tensor, teacher: torch.Tensor, tau: float = 2.0
) -> torch.Tensor:
    r""":math:`\tau^2\,\mathrm{KL}(\mathrm{softmax}(T/\tau)\,\|\,\mathrm{softmax}(S/\tau))`."""
    return tau**2 * F.kl_div(
        F.log_softmax(student / tau, -1),
        F.log_softmax(teacher / tau, -1),
        log_target=True,
        reduction="batchmean",
    )


def consistency_loss(pruned: torch.Tensor, full: torch.Tensor) -> torch.Tensor:
    r""":math:`L_{\mathrm{ssl}} = 1 - \cos(h^{\mathrm{pruned}}_{\mathrm{CLS}},
    \mathrm{sg}(h^{\mathrm{full}}_{\mathrm{CLS}}))`."""
    return (1 - F.cosine_similarity(pruned, full.detach(), dim=-1)).mean()


def flops_loss(expected: torch.Tensor, full: torch.Tensor, phi: float) -> torch.Tensor:
    r""":math:`(\sum_b \hat F_b / \sum_b F_{\mathrm{full},b} - \phi)^2`: the batch's FLOPs ratio
    against the target, so that sequences can share the budget unevenly."""
    return (expected.sum() / full.to(expected.dtype).sum() - phi) ** 2
