r"""Token importance: Integrated Gradients (the teacher signal of AD-TP) and accumulated attention
(the proxy of PoWER-BERT and LTP that the paper argues against).

Integrated Gradients (Sundararajan et al., 2017) of the target logit :math:`F_y` at the input
embeddings :math:`E` against a baseline :math:`E'`, summed over the hidden axis per token:

.. math::  \mathrm{IG}_i = \sum_d (E_{id}-E'_{id}) \int_0^1
           \frac{\partial F_y(E' + \alpha(E-E'))}{\partial E_{id}}\,d\alpha .

The integral is a right Riemann sum (:math:`\alpha_k = k/m`, weights :math:`1/m`, the paper's
:math:`m` steps) or an :math:`m`-point Gauss-Legendre rule on :math:`[0, 1]`. By the
completeness axiom :math:`\sum_i \mathrm{IG}_i = F_y(E) - F_y(E')` up to the quadrature error.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch

from paperkit import check_bool, check_callable, check_choice, check_int, check_tensor, param_error

__all__ = ["attention_importance", "integrated_gradients", "normalise_importance", "quadrature"]


def quadrature(steps: int, method: str = "riemann_right") -> tuple[torch.Tensor, torch.Tensor]:
    r"""Nodes :math:`\alpha_k\in(0,1]` and weights of the IG path integral (float64).

    ``"riemann_right"``: :math:`\alpha_k = k/m`, :math:`w_k = 1/m`; ``"gausslegendre"``: the
    Legendre nodes mapped from :math:`[-1,1]` to :math:`[0,1]`, weights halved.

    >>> a, w = quadrature(4)
    >>> a.tolist(), float(w.sum())
    ([0.25, 0.5, 0.75, 1.0], 1.0)
    """
    steps = check_int("steps", "quadrature", steps, low=1, high=10**5)
    check_choice("method", "quadrature", method, ("riemann_right", "gausslegendre"))
    if method == "riemann_right":
        alphas = np.arange(1, steps + 1, dtype=np.float64) / steps
        weights = np.full(steps, 1.0 / steps)
    else:
        x, w = np.polynomial.legendre.leggauss(steps)
        alphas, weights = (x + 1) / 2, w / 2
    return torch.from_numpy(alphas), torch.from_numpy(weights)


def _baseline(
    baseline: str | torch.Tensor,
    embeds: torch.Tensor,
    pad_embedding: torch.Tensor | None,
    keep_mask: torch.Tensor | None,
    attention_mask: torch.Tensor | None,
) -> torch.Tensor:
    owner = "integrated_gradients"
    if isinstance(baseline, torch.Tensor):
        check_tensor("baseline", owner, baseline, dtype=embeds.dtype)
        if baseline.shape != embeds.shape:
            raise param_error(
                "baseline",
                owner,
                f"a tensor of the embeds' shape {tuple(embeds.shape)}",
                f"shape {tuple(baseline.shape)}",
            )
        return baseline
    check_choice("baseline", owner, baseline, ("pad", "zeros"))
    if baseline == "pad":
        if pad_embedding is None:
            raise param_error("pad_embedding", owner, "a (D,) tensor when baseline='pad'", None)
        check_tensor("pad_embedding", owner, pad_embedding, shape=(embeds.shape[-1],))
        base = pad_embedding.to(embeds.dtype).expand_as(embeds).clone()
    else:
        base = torch.zeros_like(embeds)
    keep = torch.zeros(embeds.shape[:2], dtype=torch.bool, device=embeds.device)
    if keep_mask is not None:
        keep |= keep_mask
    if attention_mask is not None:
        keep |= ~attention_mask
    return torch.where(keep[..., None], embeds, base)


def integrated_gradients(
    forward_fn: Callable[..., torch.Tensor],
    embeds: torch.Tensor,
    target: torch.Tensor,
    *,
    baseline: str | torch.Tensor = "pad",
    attention_mask: torch.Tensor | None = None,
    steps: int = 32,
    method: str = "riemann_right",
    internal_batch: int = 8,
    pad_embedding: torch.Tensor | None = None,
    keep_mask: torch.Tensor | None = None,
) -> torch.Tensor:
    r"""Per-token Integrated Gradients :math:`\mathrm{IG}_i` (B, N) of the logit ``target``.

    Shapes: ``embeds`` (B, N, D); ``target`` (B,) class indices; ``attention_mask`` (B, N) bool;
    ``forward_fn(embeds)`` (or ``forward_fn(embeds, attention_mask)`` when a mask is given)
    returns logits (B, C). ``internal_batch`` path points are evaluated per call (rows
    ``internal_batch * B``), so memory grows with it, not with ``steps``.

    ``baseline``: ``"pad"`` (``pad_embedding`` at every content position), ``"zeros"``, or a
    tensor of the embeds' shape. With a named baseline the positions in ``keep_mask`` (e.g.
    [CLS] and [SEP]) and the padding keep their embedding, so they get zero attribution.

    NaN policy: NaN or inf in ``embeds``, the baseline or ``pad_embedding`` is refused; NaN
    produced by ``forward_fn`` propagates.

    >>> w = torch.randn(5, 3, dtype=torch.float64)
    >>> f = lambda e: torch.stack([(e * w).sum((1, 2)), -(e * w).sum((1, 2))], -1)
    >>> e = torch.randn(2, 5, 3, dtype=torch.float64)
    >>> ig = integrated_gradients(f, e, torch.tensor([0, 0]), baseline="zeros", steps=3)
    >>> torch.allclose(ig, (e * w).sum(-1))
    True
    """
    owner = "integrated_gradients"
    check_callable("forward_fn", owner, forward_fn)
    dims: dict = {}
    check_tensor("embeds", owner, embeds, shape=("B", "N", "D"), dims=dims)
    check_tensor("target", owner, target, shape=("B",), dims=dims, dtype="int")
    if attention_mask is not None:
        check_tensor(
            "attention_mask", owner, attention_mask, shape=("B", "N"), dims=dims, dtype="bool"
        )
    if keep_mask is not None:
        check_tensor("keep_mask", owner, keep_mask, shape=("B", "N"), dims=dims, dtype="bool")
    steps = check_int("steps", owner, steps, low=1, high=10**5)
    check_choice("method", owner, method, ("riemann_right", "gausslegendre"))
    internal_batch = check_int("internal_batch", owner, internal_batch, low=1, high=4096)
    if bool((target < 0).any()):
        raise param_error("target", owner, "class indices >= 0", "a negative index")
    base = _baseline(baseline, embeds, pad_embedding, keep_mask, attention_mask)
    alphas, weights = quadrature(steps, method)
    alphas, weights = alphas.to(embeds), weights.to(embeds)
    B = embeds.shape[0]
    delta = (embeds - base).detach()
    grads = torch.zeros_like(embeds)
    for start in range(0, steps, internal_batch):
        a = alphas[start : start + internal_batch]
        w = weights[start : start + internal_batch]
        m = a.shape[0]
        path = (base.detach()[None] + a[:, None, None, None] * delta[None]).reshape(
            m * B, *embeds.shape[1:]
        )
        path.requires_grad_(True)
        with torch.enable_grad():
            if attention_mask is None:
                logits = forward_fn(path)
            else:
                logits = forward_fn(path, attention_mask.repeat(m, 1))
            picked = logits.gather(1, target.repeat(m)[:, None]).sum()
            (g,) = torch.autograd.grad(picked, path)
        grads += (w[:, None, None, None] * g.reshape(m, *embeds.shape)).sum(0)
    return (delta * grads).sum(-1)


def normalise_importance(
    ig: torch.Tensor, mask: torch.Tensor, *, absolute: bool = False
) -> torch.Tensor:
    r"""The token-importance target :math:`g_i = \max(\mathrm{IG}_i, 0) / \sum_{j\in\text{mask}}
    \max(\mathrm{IG}_j, 0)` over the tokens in ``mask``
    (``absolute=True``: :math:`|\mathrm{IG}_i|`).

    Rows whose clipped attributions are all zero stay zero (no target). NaN policy: refused.

    >>> normalise_importance(torch.tensor([[1.0, -2.0, 3.0]]), torch.tensor([[True] * 3]))
    tensor([[0.2500, 0.0000, 0.7500]])
    """
    owner = "normalise_importance"
    dims: dict = {}
    check_tensor("ig", owner, ig, shape=("B", "N"), dims=dims)
    check_tensor("mask", owner, mask, shape=("B", "N"), dims=dims, dtype="bool")
    absolute = check_bool("absolute", owner, absolute)
    g = (ig.abs() if absolute else ig.clamp_min(0)) * mask
    total = g.sum(-1, keepdim=True)
    return torch.where(
        total > 0, g / total.clamp_min(torch.finfo(g.dtype).tiny), torch.zeros_like(g)
    )


def attention_importance(
    attn_maps: Sequence[torch.Tensor], attention_mask: torch.Tensor | None = None
) -> torch.Tensor:
    r"""Accumulated attention received, :math:`s_j = \sum_{\ell}\sum_h\sum_{i\,\text{valid}}
    A^{(\ell,h)}_{ij}` (PoWER-BERT's significance score, LTP's importance), zero at padding.

    Shapes: each map (B, H, N, N) with queries on axis 2 and keys on axis 3; ``attention_mask``
    (B, N) bool (None: every token valid). NaN policy: refused.

    >>> a = torch.full((1, 2, 4, 4), 0.25)
    >>> attention_importance([a, a])
    tensor([[4., 4., 4., 4.]])
    """
    owner = "attention_importance"
    if isinstance(attn_maps, torch.Tensor) or not isinstance(attn_maps, Sequence):
        raise param_error(
            "attn_maps", owner, "a list of (B, H, N, N) tensors", type(attn_maps).__name__
        )
    if len(attn_maps) == 0:
        raise param_error("attn_maps", owner, "a non-empty list", "[]")
    dims: dict = {}
    for a in attn_maps:
        check_tensor("attn_maps", owner, a, shape=("B", "H", "N", "N"), dims=dims)
    if attention_mask is not None:
        check_tensor(
            "attention_mask", owner, attention_mask, shape=("B", "N"), dims=dims, dtype="bool"
        )
    total = torch.zeros(attn_maps[0].shape[0], attn_maps[0].shape[-1], dtype=attn_maps[0].dtype)
    total = total.to(attn_maps[0].device)
    for a in attn_maps:
        if attention_mask is not None:
            a = a * attention_mask[:, None, :, None]
        total = total + a.sum((1, 2))
    if attention_mask is not None:
        total = total * attention_mask
    return total
