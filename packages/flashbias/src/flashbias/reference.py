r"""The ``reference`` backend: attention with a bias written out as the textbook formula.

Every fast path is tested against this module. With q (B, N, H, d), k, v (B, M, H, d), the bias
factors :math:`\phi_q` (B|1, N, H, R), :math:`\phi_k` (B|1, M, H, R), an additive mask ``A``
and the softmax scale ``s``, it materialises the (B, H, N, M) scores

.. math::
    S = s\,QK^\top + \phi_q\phi_k^\top + A \;(+\,{-\infty} \text{ above the diagonal if causal})

and returns :math:`\mathrm{softmax}(S)\,V`. A row whose every score is :math:`-\infty` (every key
masked) has no softmax; it gets output 0 and gradient 0, as the fused kernels give.
Inputs are validated by :mod:`flashbias.attention`; nothing here checks them again.
"""

from __future__ import annotations

import math

import torch

__all__ = ["causal_mask", "dense_reference", "flash_bias_reference", "masked_softmax"]


def causal_mask(N: int, M: int, like: torch.Tensor) -> torch.Tensor:
    """The additive (N, M) causal mask in ``like``'s dtype and device: 0 where key j <= query i,
    :math:`-\\infty` above the diagonal."""
    keep = torch.ones(N, M, dtype=torch.bool, device=like.device).tril()
    zero = torch.zeros((), dtype=like.dtype, device=like.device)
    return torch.where(keep, zero, torch.tensor(-math.inf, dtype=like.dtype, device=like.device))


def masked_softmax(scores: torch.Tensor) -> torch.Tensor:
    r"""Softmax over the last axis; a row of only :math:`-\infty` gives zeros (not NaN) and
    passes no gradient back."""
    dead = scores.amax(dim=-1, keepdim=True) == -math.inf
    return scores.masked_fill(dead, 0.0).softmax(dim=-1).masked_fill(dead, 0.0)


def _attend(scores: torch.Tensor, v: torch.Tensor, causal: bool) -> torch.Tensor:
    """softmax over the last axis of scores (B, H, N, M), then times v (B, M, H, e)."""
    if causal:
        scores = scores + causal_mask(scores.shape[-2], scores.shape[-1], scores)
    return torch.einsum("bhnm,bmhd->bnhd", masked_softmax(scores), v)


def flash_bias_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    q_bias: torch.Tensor | None,
    k_bias: torch.Tensor | None,
    attn_mask: torch.Tensor | None,
    causal: bool,
    scale: float,
) -> torch.Tensor:
    r""":math:`\mathrm{softmax}(s\,QK^\top + \phi_q\phi_k^\top + A)V` with the scores built in
    full; factors and mask already in q's dtype. Returns (B, N, H, d)."""
    scores = scale * torch.einsum("bnhd,bmhd->bhnm", q, k)
    if q_bias is not None:
        scores = scores + torch.einsum("bnhr,bmhr->bhnm", q_bias, k_bias)
    if attn_mask is not None:
        scores = scores + attn_mask
    return _attend(scores, v, causal)


def dense_reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    bias: torch.Tensor,
    causal: bool,
    scale: float,
) -> torch.Tensor:
    r""":math:`\mathrm{softmax}(s\,QK^\top + B)V` with a dense bias (B|1, H, N, M)."""
    return _attend(scale * torch.einsum("bnhd,bmhd->bhnm", q, k) + bias, v, causal)
