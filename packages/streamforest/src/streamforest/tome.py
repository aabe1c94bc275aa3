"""Token merging (ToMe, Bolya et al. 2023) as StreamForest uses it (paper, Sec. 3.2 and 3.3).

Bipartite soft matching: split the ``N`` tokens into ``A`` (even positions) and ``B`` (odd
positions), score every pair by cosine similarity :math:`s_{ab} = \\hat a^\\top \\hat b`, give every
``a`` its best partner :math:`b^*(a) = \\arg\\max_b s_{ab}`, and merge the ``r`` best-matched ``a``
into their partners (``r <= |B| = floor(N/2)``, so a round at most halves the tokens). Merging is a
size-weighted average: with sizes :math:`m_i` (how many original tokens a token stands for)

.. math::  x_b \\leftarrow \\frac{m_b x_b + \\sum_{a \\to b} m_a x_a}{m_b + \\sum_{a \\to b} m_a},
           \\qquad m_b \\leftarrow m_b + \\sum_{a \\to b} m_a,

so the mass :math:`\\sum_i m_i x_i` and the total size are preserved exactly.
:func:`merge_to` repeats rounds (each removing at most half) until exactly ``target`` tokens
remain. The output keeps the unmerged ``A`` tokens first (best-matched order), then ``B``, as ToMe
does.

NaN policy: every public function refuses NaN or inf tokens with a ``ValueError``.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import torch

from paperkit import Described, check_callable, check_int, check_tensor, param_error

__all__ = [
    "bipartite_soft_matching",
    "cross_event_similarity",
    "event_similarity",
    "merge_to",
    "merge_wavg",
]

MergeFn = Callable[..., torch.Tensor]
_REDUCE = {"sum": "sum", "amin": "amin", "amax": "amax"}


def _normalise(metric: torch.Tensor) -> torch.Tensor:
    """Rows scaled to unit norm (a zero row stays zero, its cosine with anything is 0)."""
    return metric / metric.norm(dim=-1, keepdim=True).clamp_min(1e-12)


def _match(metric: torch.Tensor, r: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Indices of the unmerged A tokens, the merged A tokens and their B partners, each
    ``(B, k, 1)``; the A tokens sorted by their best score, descending (ties: lower index first)."""
    with torch.no_grad():
        unit = _normalise(metric)
        scores = unit[..., ::2, :] @ unit[..., 1::2, :].transpose(-1, -2)
        node_max, node_idx = scores.max(dim=-1)
        edge_idx = node_max.argsort(dim=-1, descending=True, stable=True)[..., None]
        unm_idx, src_idx = edge_idx[..., r:, :], edge_idx[..., :r, :]
        dst_idx = node_idx[..., None].gather(dim=-2, index=src_idx)
    return unm_idx, src_idx, dst_idx


def bipartite_soft_matching(metric: torch.Tensor, r: int) -> MergeFn:
    """One round of ToMe bipartite soft matching on ``metric`` ``(B, N, C)``; returns ``merge``.

    ``r`` is capped at ``floor(N / 2)`` (a round never merges more than half the tokens); ``r = 0``
    gives the identity. ``merge(x, mode="sum")`` maps ``x`` ``(B, N, D)`` to ``(B, N - r, D)``: each
    of the ``r`` best-matched even-position tokens is reduced into its most similar odd-position
    token with ``mode`` (``"sum"``, ``"amin"`` or ``"amax"``); the other tokens are kept. Use
    :func:`merge_wavg` for the size-weighted average.

    >>> x = torch.tensor([[[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]]])
    >>> merge = bipartite_soft_matching(x, 1)
    >>> merge(torch.ones(1, 4, 1)).squeeze(-1)
    tensor([[1., 2., 1.]])

    NaN policy: NaN or inf in ``metric`` raises ``ValueError``.
    """
    owner = "bipartite_soft_matching"
    check_tensor("metric", owner, metric, ndim=3)
    return _bipartite(metric, check_int("r", owner, r, low=0))


def _bipartite(metric: torch.Tensor, r: int) -> MergeFn:
    r = min(r, metric.shape[1] // 2)
    if r == 0:
        return lambda x, mode="sum": x
    unm_idx, src_idx, dst_idx = _match(metric, r)

    def merge(x: torch.Tensor, mode: str = "sum") -> torch.Tensor:
        src, dst = x[..., ::2, :], x[..., 1::2, :]
        n, t1, c = src.shape
        unm = src.gather(dim=-2, index=unm_idx.expand(n, t1 - r, c))
        src = src.gather(dim=-2, index=src_idx.expand(n, r, c))
        dst = dst.scatter_reduce(-2, dst_idx.expand(n, r, c), src, reduce=_REDUCE[mode])
        return torch.cat([unm, dst], dim=1)

    return merge


def merge_wavg(
    merge: MergeFn, x: torch.Tensor, size: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Apply ``merge`` as a size-weighted average: returns ``(x', size')`` with
    :math:`x' = \\mathrm{merge}(m \\odot x) / \\mathrm{merge}(m)` and
    :math:`m' = \\mathrm{merge}(m)`.

    ``x`` ``(B, N, D)``; ``size`` ``(B, N, 1)`` (default all ones).

    >>> x = torch.tensor([[[2.0], [4.0]]])
    >>> y, s = merge_wavg(bipartite_soft_matching(x, 1), x, torch.tensor([[[3.0], [1.0]]]))
    >>> y.item(), s.item()
    (2.5, 4.0)

    NaN policy: NaN or inf in ``x`` or ``size`` raises ``ValueError``.
    """
    owner = "merge_wavg"
    check_callable("merge", owner, merge)
    dims: dict = {}
    check_tensor("x", owner, x, shape=("B", "N", None), dims=dims)
    if size is None:
        size = torch.ones_like(x[..., :1])
    check_tensor("size", owner, size, shape=("B", "N", 1), dims=dims, dtype=x.dtype)
    if bool((size <= 0).any()):
        raise param_error("size", owner, "positive token sizes", Described("a non-positive size"))
    return _merge_wavg(merge, x, size)


def _merge_wavg(
    merge: MergeFn, x: torch.Tensor, size: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    if size is None:
        size = torch.ones_like(x[..., :1])
    weighted = merge(x * size, mode="sum")
    size = merge(size, mode="sum")
    return weighted / size, size


def _rounds(n: int, target: int) -> list[int]:
    """Tokens removed per round to go from ``n`` to ``target``, each at most ``floor(n / 2)``."""
    out = []
    while n > target:
        r = min(n - target, n // 2)
        out.append(r)
        n -= r
    return out


def merge_to(
    x: torch.Tensor, target: int, size: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Merge ``x`` ``(B, N, C)`` down to exactly ``target`` tokens by repeated ToMe rounds
    (:func:`bipartite_soft_matching` on the tokens themselves, :func:`merge_wavg`); returns
    ``(x', size')`` with ``x'`` ``(B, target, C)`` and ``size'`` ``(B, target, 1)``.

    Each round removes :math:`r = \\min(N - \\text{target}, \\lfloor N/2 \\rfloor)` tokens, so the
    number of rounds is at most :math:`\\lceil \\log_2(N/\\text{target}) \\rceil + 1`;
    ``target = N`` returns ``x`` unchanged. The size-weighted mass :math:`\\sum_i m_i x_i` and
    :math:`\\sum_i m_i` are preserved.

    >>> y, s = merge_to(torch.randn(2, 49, 8), 16)
    >>> tuple(y.shape), s.sum(1).flatten().tolist()
    ((2, 16, 8), [49.0, 49.0])

    NaN policy: NaN or inf in ``x`` or ``size`` raises ``ValueError``.
    """
    owner = "merge_to"
    check_tensor("x", owner, x, ndim=3)
    target = check_int("target", owner, target, low=1, high=x.shape[1])
    if size is None:
        size = torch.ones_like(x[..., :1])
    check_tensor("size", owner, size, shape=(x.shape[0], x.shape[1], 1), dtype=x.dtype)
    return _merge_to(x, target, size)


def _merge_to(
    x: torch.Tensor, target: int, size: torch.Tensor | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`merge_to` without the argument checks (for callers that checked their input)."""
    if size is None:
        size = torch.ones_like(x[..., :1])
    for r in _rounds(x.shape[1], target):
        x, size = _merge_wavg(_bipartite(x, r), x, size)
    return x, size


def event_similarity(a: torch.Tensor, b: torch.Tensor, n_long: int) -> float:
    """Content similarity of two adjacent events (paper, Sec. 3.3, the similarity penalty).

    The tokens of ``a`` ``(T_a, n, C)`` and ``b`` ``(T_b, n, C)`` are concatenated (``a`` first)
    into ``N = (T_a + T_b) n`` tokens; with ``r = N - ceil((T_a + T_b) / 2) n_long`` (the tokens a
    merge of the pair would remove), the similarity is the mean of the ``r`` largest ToMe
    best-match scores :math:`\\max_b \\cos(a, b)` over the even-position tokens (``r`` capped at
    ``floor(N / 2)``, one ToMe round): in ``[-1, 1]``, 1 when the pair merges losslessly.

    >>> e = torch.ones(2, 4, 3)
    >>> round(event_similarity(e, e, 4), 6)
    1.0

    NaN policy: NaN or inf in ``a`` or ``b`` raises ``ValueError``.
    """
    owner = "event_similarity"
    dims: dict = {}
    check_tensor("a", owner, a, shape=(None, "n", "C"), dims=dims)
    check_tensor("b", owner, b, shape=(None, "n", "C"), dims=dims, dtype=a.dtype)
    n_long = check_int("n_long", owner, n_long, low=1, high=a.shape[1])
    return _event_similarity(a, b, n_long)


def _event_similarity(a: torch.Tensor, b: torch.Tensor, n_long: int) -> float:
    tokens = torch.cat([a, b], dim=0).reshape(-1, a.shape[-1])
    r = tokens.shape[0] - math.ceil((a.shape[0] + b.shape[0]) / 2) * n_long
    r = min(r, tokens.shape[0] // 2)  # a merge round removes at most half
    with torch.no_grad():
        unit = _normalise(tokens)
        scores = unit[::2] @ unit[1::2].T
        top = scores.max(dim=-1).values.topk(r).values
    return float(top.mean())


def cross_event_similarity(a: torch.Tensor, b: torch.Tensor, n_long: int) -> float:
    """A diagnostic variant of :func:`event_similarity` (not the paper's): every token of ``a``
    is matched only against the tokens of ``b``, :math:`\\frac{1}{|a|} \\sum_{x \\in a}
    \\max_{y \\in b} \\cos(x, y)`. In :func:`event_similarity` the bipartite split puts tokens of
    both events on each side, so a token usually finds its best match inside its own event and
    the score hardly depends on the neighbour; here it does. ``n_long`` is accepted for the
    same signature and checked, not used.

    >>> e = torch.ones(2, 4, 3)
    >>> round(cross_event_similarity(e, -e, 4), 6)
    -1.0

    NaN policy: NaN or inf in ``a`` or ``b`` raises ``ValueError``.
    """
    owner = "cross_event_similarity"
    dims: dict = {}
    check_tensor("a", owner, a, shape=(None, "n", "C"), dims=dims)
    check_tensor("b", owner, b, shape=(None, "n", "C"), dims=dims, dtype=a.dtype)
    check_int("n_long", owner, n_long, low=1, high=a.shape[1])
    return _cross_event_similarity(a, b, n_long)


def _cross_event_similarity(a: torch.Tensor, b: torch.Tensor, n_long: int) -> float:
    with torch.no_grad():
        ua = _normalise(a.reshape(-1, a.shape[-1]))
        ub = _normalise(b.reshape(-1, b.shape[-1]))
        return float((ua @ ub.T).max(dim=1).values.mean())
