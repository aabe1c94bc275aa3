r"""Entropies and KL divergences of the predictive distributions VUD compares (paper §3).

Categorical: :math:`H[p] = -\sum_c p_c \log p_c`, :math:`KL(p\|q) = \sum_c p_c \log(p_c/q_c)`
(``0 log 0 = 0``). Gaussian: :math:`H = \tfrac12 \log(2\pi e\sigma^2)` and
:math:`KL(\mathcal N_1\|\mathcal N_2) = \log(\sigma_2/\sigma_1) + (\sigma_1^2 + (\mu_1-\mu_2)^2)
/(2\sigma_2^2) - \tfrac12`. Every function takes ``base`` (``math.e``: nats, 2: bits).
"""

from __future__ import annotations

import math

import torch

from paperkit import check_real, check_tensor, describe, param_error

__all__ = ["categorical_entropy", "categorical_kl", "gaussian_entropy", "gaussian_kl"]


def entropy_(p: torch.Tensor) -> torch.Tensor:
    """Unchecked categorical entropy in nats over the last axis (for internal hot loops)."""
    return -torch.xlogy(p, p).sum(-1)


def kl_(p: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Unchecked categorical KL(p||q) in nats over the last axis."""
    return (torch.xlogy(p, p) - torch.xlogy(p, q)).sum(-1)


def gaussian_entropy_(var: torch.Tensor) -> torch.Tensor:
    """Unchecked Gaussian entropy in nats."""
    return 0.5 * torch.log(2 * math.pi * math.e * var)


def gaussian_kl_(m1: torch.Tensor, v1: torch.Tensor, m2: torch.Tensor, v2: torch.Tensor):
    """Unchecked Gaussian KL(N(m1, v1) || N(m2, v2)) in nats."""
    return 0.5 * (torch.log(v2 / v1) + (v1 + (m1 - m2) ** 2) / v2 - 1)


def _base(base: float, owner: str) -> float:
    return math.log(check_real("base", owner, base, low=1, low_open=True))


def _probs(name: str, owner: str, p: torch.Tensor) -> torch.Tensor:
    check_tensor(name, owner, p, ndim=None)
    if p.ndim < 1 or p.shape[-1] < 1:
        raise param_error(name, owner, "a tensor of shape (..., C) with C >= 1", tuple(p.shape))
    if bool((p < 0).any()) or not bool(torch.allclose(p.sum(-1), torch.ones((), dtype=p.dtype))):
        raise param_error(name, owner, "probabilities (>= 0, summing to 1)", describe(p))
    return p


def categorical_entropy(p: torch.Tensor, base: float = math.e) -> torch.Tensor:
    r"""Entropy :math:`-\sum_c p_c \log_{base} p_c` over the last axis.

    NaN policy: NaN/inf in ``p`` and non-simplex rows are refused (ValueError).

    >>> round(float(categorical_entropy(torch.tensor([0.5, 0.5]), base=2)), 6)
    1.0
    """
    p = _probs("p", "categorical_entropy", p)
    return entropy_(p) / _base(base, "categorical_entropy")


def categorical_kl(p: torch.Tensor, q: torch.Tensor, base: float = math.e) -> torch.Tensor:
    r""":math:`KL(p\|q) = \sum_c p_c \log_{base}(p_c/q_c)` over the last axis (``inf`` where
    ``q_c = 0 < p_c``); leading axes broadcast.

    NaN policy: NaN/inf in ``p`` or ``q`` and non-simplex rows are refused (ValueError).

    >>> float(categorical_kl(torch.tensor([0.3, 0.7]), torch.tensor([0.3, 0.7])))
    0.0
    """
    p = _probs("p", "categorical_kl", p)
    q = _probs("q", "categorical_kl", q)
    try:
        torch.broadcast_shapes(p.shape, q.shape)
    except RuntimeError:
        raise param_error(
            "q", "categorical_kl", f"broadcastable with p's shape {tuple(p.shape)}", tuple(q.shape)
        ) from None
    return kl_(p, q) / _base(base, "categorical_kl")


def gaussian_entropy(var: torch.Tensor, base: float = math.e) -> torch.Tensor:
    r"""Entropy :math:`\tfrac12\log_{base}(2\pi e\sigma^2)` of a Gaussian of variance ``var``.

    NaN policy: NaN/inf or non-positive variances are refused (ValueError).

    >>> round(float(gaussian_entropy(torch.tensor(1.0))), 6)
    1.418939
    """
    check_tensor("var", "gaussian_entropy", var, nonempty=False)
    if bool((var <= 0).any()):
        raise param_error("var", "gaussian_entropy", "positive", describe(var))
    return gaussian_entropy_(var) / _base(base, "gaussian_entropy")


def gaussian_kl(
    mean1: torch.Tensor,
    var1: torch.Tensor,
    mean2: torch.Tensor,
    var2: torch.Tensor,
    base: float = math.e,
) -> torch.Tensor:
    r""":math:`KL(\mathcal N(\mu_1,\sigma_1^2)\|\mathcal N(\mu_2,\sigma_2^2))`, element-wise.

    NaN policy: NaN/inf anywhere, or a non-positive variance, is refused (ValueError).

    >>> zero, one = torch.tensor(0.0), torch.tensor(1.0)
    >>> float(gaussian_kl(zero, one, zero, one))
    0.0
    """
    args = {"mean1": mean1, "var1": var1, "mean2": mean2, "var2": var2}
    for name, t in args.items():
        check_tensor(name, "gaussian_kl", t, nonempty=False)
    shapes = [tuple(t.shape) for t in args.values()]
    common = max(set(shapes), key=shapes.count)
    for name, t in args.items():
        if tuple(t.shape) != common:
            raise param_error(
                name, "gaussian_kl", f"of shape {common} as the others", tuple(t.shape)
            )
        if name.startswith("var") and bool((t <= 0).any()):
            raise param_error(name, "gaussian_kl", "positive", describe(t))
    return gaussian_kl_(mean1, var1, mean2, var2) / _base(base, "gaussian_kl")
