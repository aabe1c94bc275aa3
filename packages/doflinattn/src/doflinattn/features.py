r"""Learned positive feature maps :math:`\phi: \mathbb{R}^d \to \mathbb{R}^m_{\ge 0}` (the paper's
Sec. 4, nonlinear features trained layer by layer).

* :class:`HedgehogFeatureMap`: :math:`\phi(x) = [\operatorname{softmax}(Wx + b),
  \operatorname{softmax}(-(Wx + b))]` with :math:`W \in \mathbb{R}^{(m/2)\times d}` (orthogonal
  init), the Hedgehog map (Zhang et al. 2024) the paper builds on;
* :class:`MLPFeatureMap`: :math:`\phi(x) = \operatorname{softplus}(W_2\,\operatorname{gelu}(W_1 x))`
  with hidden width :math:`2m`.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from paperkit import check_int, check_tensor, param_error

__all__ = ["HedgehogFeatureMap", "MLPFeatureMap", "make_feature_map", "per_head"]

#: The largest feature or head dimension accepted (memory is m x d per map).
MAX_DIM = 1 << 16


def _check_input(owner: str, x: torch.Tensor, head_dim: int, dtype: torch.dtype) -> None:
    check_tensor("x", owner, x, shape=None, finite=False)
    if x.ndim < 1 or x.shape[-1] != head_dim:
        raise param_error("x", owner, f"of shape (..., {head_dim})", tuple(x.shape))
    if x.dtype != dtype and not torch.is_autocast_enabled(x.device.type):
        raise param_error("x", owner, f"of the map's dtype ({dtype})", x.dtype, cls=TypeError)


def _two_softmax(z: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """[softmax(z), softmax(-z)] computed in fp32 (under autocast z comes in bf16/fp16, and the
    backward of a half-precision softmax loses the gradient to cancellation), returned in
    ``dtype`` (that of the inputs and weights: fp32 under autocast, bf16 for a bf16 model)."""
    z = z.float() if z.dtype in (torch.float16, torch.bfloat16) else z
    return torch.cat([z.softmax(-1), (-z).softmax(-1)], -1).to(dtype)


class HedgehogFeatureMap(nn.Module):
    r""":math:`\phi(x) = [\operatorname{softmax}(Wx + b), \operatorname{softmax}(-(Wx+b))]`,
    (..., d) -> (..., m), values in (0, 1), each half summing to 1.

    ``feature_dim`` (m) must be even. NaN in ``x`` propagates to the output (no check over the
    activations in the training loop).

    >>> phi = HedgehogFeatureMap(4, 8)
    >>> y = phi(torch.randn(3, 4))
    >>> y.shape, bool((y > 0).all()), torch.allclose(y.sum(-1), torch.full((3,), 2.0))
    (torch.Size([3, 8]), True, True)
    """

    def __init__(self, head_dim: int, feature_dim: int) -> None:
        super().__init__()
        owner = "HedgehogFeatureMap"
        self.head_dim = check_int("head_dim", owner, head_dim, low=1, high=MAX_DIM)
        self.feature_dim = check_int("feature_dim", owner, feature_dim, low=2, high=MAX_DIM)
        if feature_dim % 2:
            raise param_error("feature_dim", owner, "an even integer", feature_dim)
        self.linear = nn.Linear(head_dim, feature_dim // 2)
        nn.init.orthogonal_(self.linear.weight)
        nn.init.zeros_(self.linear.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input("HedgehogFeatureMap", x, self.head_dim, self.linear.weight.dtype)
        return _two_softmax(self.linear(x), x.dtype)


class MLPFeatureMap(nn.Module):
    r""":math:`\phi(x) = \operatorname{softplus}(W_2\,\operatorname{gelu}(W_1 x + b_1) + b_2)`,
    (..., d) -> (..., m) with hidden width ``2 * feature_dim``; values > 0. NaN in ``x``
    propagates to the output.

    >>> y = MLPFeatureMap(4, 6)(torch.randn(2, 4))
    >>> y.shape, bool((y > 0).all())
    (torch.Size([2, 6]), True)
    """

    def __init__(self, head_dim: int, feature_dim: int) -> None:
        super().__init__()
        owner = "MLPFeatureMap"
        self.head_dim = check_int("head_dim", owner, head_dim, low=1, high=MAX_DIM)
        self.feature_dim = check_int("feature_dim", owner, feature_dim, low=1, high=MAX_DIM)
        self.hidden = nn.Linear(head_dim, 2 * feature_dim)
        self.out = nn.Linear(2 * feature_dim, feature_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        _check_input("MLPFeatureMap", x, self.head_dim, self.hidden.weight.dtype)
        return F.softplus(self.out(F.gelu(self.hidden(x))))


def make_feature_map(kind: str, head_dim: int, feature_dim: int) -> nn.Module:
    """A :class:`HedgehogFeatureMap` (``kind="hedgehog"``) or :class:`MLPFeatureMap` (``"mlp"``)."""
    if kind == "hedgehog":
        return HedgehogFeatureMap(head_dim, feature_dim)
    if kind == "mlp":
        return MLPFeatureMap(head_dim, feature_dim)
    raise param_error("feature_map", "make_feature_map", "'hedgehog' or 'mlp'", kind)


def per_head(maps: nn.ModuleList, x: torch.Tensor) -> torch.Tensor:
    """Head h of ``x`` (B, H, N, d) through ``maps[h]`` -> (B, H, N, m). Maps of one class and
    size run as one batched product over heads (their weights stacked, so gradients reach each
    map); other lists run head by head."""
    first = maps[0]
    same = all(type(f) is type(first) and f.feature_dim == first.feature_dim for f in maps)
    if same and isinstance(first, HedgehogFeatureMap):
        _check_input("HedgehogFeatureMap", x, first.head_dim, first.linear.weight.dtype)
        w = torch.stack([f.linear.weight for f in maps])
        b = torch.stack([f.linear.bias for f in maps])
        z = torch.einsum("bhnd,hmd->bhnm", x, w) + b[None, :, None, :]
        return _two_softmax(z, torch.promote_types(x.dtype, w.dtype))
    if same and isinstance(first, MLPFeatureMap):
        _check_input("MLPFeatureMap", x, first.head_dim, first.hidden.weight.dtype)
        w1, b1 = (
            torch.stack([f.hidden.weight for f in maps]),
            torch.stack([f.hidden.bias for f in maps]),
        )
        w2, b2 = torch.stack([f.out.weight for f in maps]), torch.stack([f.out.bias for f in maps])
        h = F.gelu(torch.einsum("bhnd,hkd->bhnk", x, w1) + b1[None, :, None, :])
        return F.softplus(torch.einsum("bhnk,hmk->bhnm", h, w2) + b2[None, :, None, :])
    return torch.stack([f(x[:, h]) for h, f in enumerate(maps)], 1)
