"""Reversible instance normalisation and the multi-frequency band split of Stage 1.

RevIN (Kim et al., ICLR 2022, used by FactoST's temporal backbone) normalises each series by its
own statistics, ``x~ = (x - mean(x)) / (std(x) + eps)``, and de-normalises the forecast with the
same statistics. The band split is the target of FactoST's multi-frequency reconstruction task:
with ``X = rfft(x)`` over ``L`` steps and band edges ``e_1 < ... < e_{B-1}`` (fractions of ``L``),
band ``b`` keeps the bins ``k`` with ``e_{b-1} L <= k < e_b L`` (``e_0 = 0``, the last band runs
to ``L/2`` inclusive) and returns ``irfft`` of them. The bands partition the bins, so by
linearity they sum to ``x`` exactly.
"""

from __future__ import annotations

from itertools import pairwise
from typing import Any

import torch
from torch import Tensor, nn

from paperkit import check_real, check_tensor, param_error

__all__ = ["RevIN", "band_split"]


def _band_masks(L: int, edges: tuple[float, ...]) -> Tensor:
    """``(n_bands, L//2 + 1)`` boolean masks over rFFT bins ``k``: ``lo*L <= k < hi*L``."""
    k = torch.arange(L // 2 + 1, dtype=torch.float64)
    bounds = [0.0, *[e * L for e in edges], float("inf")]
    return torch.stack([(k >= lo) & (k < hi) for lo, hi in pairwise(bounds)])


def check_edges(name: str, owner: str, edges: Any) -> tuple[float, ...]:
    """Band edges: a non-empty, strictly increasing tuple of fractions in ``(0, 1/2]``."""
    if not isinstance(edges, (tuple, list)) or not edges:
        raise param_error(name, owner, "a non-empty tuple of fractions", edges, cls=TypeError)
    edges = tuple(check_real(name, owner, e, low=0, high=0.5, low_open=True) for e in edges)
    if any(b <= a for a, b in pairwise(edges)):
        raise param_error(name, owner, "strictly increasing", edges)
    return edges


def band_split(x: Tensor, edges: tuple[float, ...] = (1 / 8, 1 / 4)) -> Tensor:
    r"""Split series into frequency bands that sum to them exactly.

    .. math:: x = \sum_b \mathrm{irfft}(\mathbb 1[k \in K_b] \cdot \mathrm{rfft}(x)),\quad
              K_b = \{k : e_{b-1} L \le k < e_b L\}

    Args:
        x: ``(..., L)`` real floating tensor (NaN/inf refused).
        edges: increasing band edges in ``(0, 1/2)`` as fractions of ``L`` (default: the bands
            ``[0, L/8)``, ``[L/8, L/4)``, ``[L/4, L/2]`` bins).

    Returns:
        ``(..., len(edges) + 1, L)``; ``out.sum(-2) == x`` up to rounding.

    >>> x = torch.randn(2, 16, dtype=torch.float64)
    >>> bands = band_split(x)
    >>> bands.shape, bool(torch.allclose(bands.sum(-2), x))
    (torch.Size([2, 3, 16]), True)
    """
    owner = "band_split"
    check_tensor("x", owner, x)
    if x.ndim < 1 or x.shape[-1] < 2:
        raise param_error("x", owner, "a tensor (..., L) with L >= 2", tuple(x.shape))
    edges = check_edges("edges", owner, edges)
    L = x.shape[-1]
    spec = torch.fft.rfft(x, dim=-1)
    masks = _band_masks(L, edges).to(x.device)
    banded = spec.unsqueeze(-2) * masks.to(spec.dtype)
    return torch.fft.irfft(banded, n=L, dim=-1)


class RevIN(nn.Module):
    r"""Reversible instance normalisation over the last axis (no affine parameters).

    ``norm``: :math:`\tilde x = (x - \mu)/(\sigma + \epsilon)` with the series' own mean and
    (biased) standard deviation; ``denorm``: :math:`y\,(\sigma+\epsilon) + \mu`.

    Args:
        eps: added to the standard deviation (> 0).

    >>> rev = RevIN()
    >>> x = torch.randn(3, 12) * 5 + 2
    >>> xn, stats = rev.norm(x)
    >>> bool(torch.allclose(rev.denorm(xn, stats), x, atol=1e-5))
    True
    """

    def __init__(self, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = check_real("eps", "RevIN", eps, low=0, low_open=True)

    def norm(self, x: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        """``(x~, (mean, std))`` over the last axis; stats keep a trailing axis of size 1.
        NaN is refused (``check_tensor``)."""
        check_tensor("x", "RevIN.norm", x)
        mean = x.mean(-1, keepdim=True)
        std = x.var(-1, keepdim=True, unbiased=False).add(1e-12).sqrt()
        return (x - mean) / (std + self.eps), (mean, std)

    def denorm(self, y: Tensor, stats: tuple[Tensor, Tensor]) -> Tensor:
        """``y (sigma + eps) + mu`` with the statistics of :meth:`norm`."""
        mean, std = stats
        return y * (std + self.eps) + mean

    def forward(self, x: Tensor) -> tuple[Tensor, tuple[Tensor, Tensor]]:
        return self.norm(x)
