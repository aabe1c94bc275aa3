r"""Exact expected Dice and IoU under independent Bernoulli labels, and the exact RankDice /
RankIoU rules (the references RMA approximates).

With :math:`Y_j \sim \mathrm{Bern}(p_j)` independent and a mask :math:`I`, :math:`\tau = |I|`,
:math:`X = \sum_{j \in I} Y_j` and :math:`Z = \sum_{j \notin I} Y_j` are independent
Poisson-binomial counts, and

.. math::

    E\,\mathrm{Dice}_s(I) = E\frac{2X + s}{\tau + X + Z + s}, \qquad
    E\,\mathrm{IoU}_s(I) = (E X + s)\, E\frac{1}{\tau + Z + s}, \qquad 0/0 := 0.

For every top-tau set at once, :math:`1/a = \int_0^1 t^{a-1} dt` turns both into integrals of
polynomials built from :math:`G(t) = \prod_j (1 - p_j + p_j t)` (prefix sums of
:math:`p_j / (1 - p_j + p_j t)` give the top-tau terms), integrated exactly by Gauss-Jacobi
quadrature with :math:`d + 1` nodes: O(d^2) for all :math:`\tau` (:func:`expected_dice_curve`).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import torch
from scipy.special import roots_jacobi

from paperkit import (
    check_choice,
    check_int,
    check_memory,
    check_real,
    check_tensor,
    describe,
    param_error,
)
from rmaseg.probabilities import as_probs

__all__ = [
    "ENUMERATION_MAX_D",
    "expected_dice",
    "expected_dice_curve",
    "expected_iou",
    "expected_iou_curve",
    "poisson_binomial_pmf",
    "rankdice_exact",
    "rankiou_exact",
]

#: Largest d for which ``method="auto"`` enumerates all 2^d label maps.
ENUMERATION_MAX_D = 16
_METHODS = ("auto", "enumerate", "pmf", "mc")
_NODE_BLOCK = 512


def _vector(p: Any, owner: str, *, quadratic: bool = False) -> tuple[np.ndarray, bool]:
    """p as a float64 numpy vector; ``quadratic``: refuse a d whose O(d^2) work would not fit
    (the PMF recursion's d x d table or the quadrature's blocks of 512 nodes)."""
    x, was_numpy = as_probs(p, owner, ndim=1, name="p")
    if quadratic:
        check_memory("p", owner, describe(x), 8.0 * x.numel() * max(x.numel(), 4 * _NODE_BLOCK))
    return x.cpu().to(torch.float64).numpy(), was_numpy


def _mask(mask: Any, d: int, owner: str) -> np.ndarray:
    if not isinstance(mask, (np.ndarray, torch.Tensor)):
        raise param_error("mask", owner, "a boolean array", describe(mask), cls=TypeError)
    m = torch.as_tensor(mask)
    check_tensor("mask", owner, m, shape=(d,), dtype="bool", finite=False)
    return m.cpu().numpy()


def _pmf(p: np.ndarray) -> np.ndarray:
    pmf = np.zeros(p.size + 1)
    pmf[0] = 1.0
    for k, pk in enumerate(p, start=1):
        pmf[1 : k + 1] = pmf[1 : k + 1] * (1 - pk) + pmf[:k] * pk
        pmf[0] *= 1 - pk
    return pmf


def poisson_binomial_pmf(p: Any) -> np.ndarray:
    r"""PMF of :math:`\sum_j Y_j`, :math:`Y_j \sim \mathrm{Bern}(p_j)`: (d,) -> float64 (d + 1,).

    The O(d^2) recursion :math:`f_k(n) = (1 - p_k) f_{k-1}(n) + p_k f_{k-1}(n - 1)` (products
    and sums of probabilities only: no cancellation). NaN, inf and values outside [0, 1] are
    refused (ValueError).

    >>> poisson_binomial_pmf(np.array([0.5, 0.5]))
    array([0.25, 0.5 , 0.25])
    """
    return _pmf(_vector(p, "poisson_binomial_pmf")[0])


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den with 0/0 := 0 (den is 0 only where num is)."""
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den > 0)


def _enumerate(p: np.ndarray, m: np.ndarray, smooth: float, metric: str) -> float:
    d = p.size
    ys = ((np.arange(2**d)[:, None] >> np.arange(d)) & 1).astype(bool)
    weight = np.prod(np.where(ys, p, 1 - p), axis=1)
    inter = (ys & m).sum(1)
    if metric == "dice":
        value = _ratio(2 * inter + smooth, m.sum() + ys.sum(1) + smooth)
    else:
        value = _ratio(inter + smooth, (ys | m).sum(1) + smooth)
    return float(weight @ value)


def _by_pmf(p: np.ndarray, m: np.ndarray, smooth: float, metric: str) -> float:
    tau = int(m.sum())
    fx, fz = _pmf(p[m]), _pmf(p[~m])
    x, z = np.arange(fx.size), np.arange(fz.size)
    if metric == "dice":
        value = _ratio(2 * x[:, None] + smooth, tau + x[:, None] + z[None, :] + smooth)
        return float(fx @ value @ fz)
    return float((fx @ (x + smooth)) * (fz @ _ratio(np.ones(z.size), tau + z + smooth)))


def _monte_carlo(p: np.ndarray, m: np.ndarray, smooth: float, metric: str, n: int, seed: int):
    ys = np.random.default_rng(seed).random((n, p.size)) < p
    inter = (ys & m).sum(1)
    if metric == "dice":
        return float(_ratio(2 * inter + smooth, m.sum() + ys.sum(1) + smooth).mean())
    return float(_ratio(inter + smooth, (ys | m).sum(1) + smooth).mean())


def _expected(metric: str, owner: str, p, mask, smooth, method, n_draws, seed) -> float:
    x, _ = _vector(p, owner)
    m = _mask(mask, x.size, owner)
    smooth = check_real("smooth", owner, smooth, low=0)
    method = check_choice("method", owner, method, _METHODS)
    n_draws = check_int("n_draws", owner, n_draws, low=1)
    seed = check_int("seed", owner, seed, low=0)
    if method == "auto":
        method = "enumerate" if x.size <= ENUMERATION_MAX_D else "pmf"
    if method == "enumerate" and x.size > 24:
        raise param_error("method", owner, "'enumerate' only for d <= 24", method)
    if method == "pmf":
        check_memory("p", owner, describe(x), 8.0 * x.size**2)
    if method == "mc":
        check_memory("n_draws", owner, n_draws, 3.0 * n_draws * x.size)
        return _monte_carlo(x, m, smooth, metric, n_draws, seed)
    return (_enumerate if method == "enumerate" else _by_pmf)(x, m, smooth, metric)


def expected_dice(
    p: Any,
    mask: Any,
    *,
    smooth: float = 0.0,
    method: str = "auto",
    n_draws: int = 2000,
    seed: int = 0,
) -> float:
    r""":math:`E[(2|I \cap Y| + s)/(|I| + |Y| + s)]` for one map, 0/0 := 0.

    ``method``: ``"enumerate"`` (all :math:`2^d` label maps), ``"pmf"`` (exact double sum over
    the Poisson-binomial PMFs of :math:`X` and :math:`Z`, O(d^2)), ``"mc"`` (``n_draws`` label
    maps drawn with ``seed``), ``"auto"`` (enumerate for d <= 16, else pmf).

    Shapes: p and mask (d,). NaN, inf and values outside [0, 1] in ``p`` are refused
    (ValueError); sizes whose work would not fit in memory too.

    >>> expected_dice(np.array([1.0, 0.0]), np.array([True, False]))
    1.0
    """
    return _expected("dice", "expected_dice", p, mask, smooth, method, n_draws, seed)


def expected_iou(
    p: Any,
    mask: Any,
    *,
    smooth: float = 0.0,
    method: str = "auto",
    n_draws: int = 2000,
    seed: int = 0,
) -> float:
    r""":math:`E[(|I \cap Y| + s)/(|I \cup Y| + s)]` for one map, 0/0 := 0; methods, shapes and
    checks as in :func:`expected_dice`.

    >>> expected_iou(np.array([0.5, 0.0]), np.array([True, False]))
    0.5
    """
    return _expected("iou", "expected_iou", p, mask, smooth, method, n_draws, seed)


@lru_cache(maxsize=32)
def _nodes(n: int, beta: float) -> tuple[np.ndarray, np.ndarray]:
    r"""Nodes and weights of :math:`\int_0^1 t^\beta f(t)\,dt`, exact for deg f < 2n."""
    x, w = roots_jacobi(n, 0.0, beta)
    return (1 + x) / 2, w * 2.0 ** (-beta - 1)


def _curve(p: np.ndarray, smooth: float, metric: str) -> np.ndarray:
    """Exact expected metric of the top-tau sets of the sorted vector p, tau = 0..d."""
    d = p.size
    t_all, w_all = _nodes(d + 1, smooth - 1 if smooth > 0 else 0.0)
    tau = np.arange(d + 1)[:, None]
    S = np.concatenate([[0.0], np.cumsum(p)])
    out = np.zeros(d + 1)
    for start in range(0, d + 1, _NODE_BLOCK):
        t, w = t_all[start : start + _NODE_BLOCK], w_all[start : start + _NODE_BLOCK]
        F = 1 - p[:, None] + p[:, None] * t  # (d, q), > 0 for t > 0
        log_t = np.log(t)
        if metric == "dice":
            R = np.concatenate([np.zeros((1, t.size)), np.cumsum(p[:, None] / F, axis=0)])
            scale = np.exp(tau * log_t + np.log(F).sum(0))
            poly = scale * (2 * R if smooth == 0 else 2 * t * R + smooth)
        else:
            log_suffix = np.concatenate(
                [np.cumsum(np.log(F)[::-1], axis=0)[::-1], np.zeros((1, t.size))]
            )
            power = tau - 1 if smooth == 0 else tau
            poly = np.exp(np.maximum(power, 0) * log_t + log_suffix)
        out += poly @ w
    if metric == "iou":
        out *= S + smooth
        if smooth == 0:
            out[0] = 0.0
    return out


def _curve_api(p: Any, smooth: float, metric: str, owner: str) -> np.ndarray:
    x, _ = _vector(p, owner, quadratic=True)
    smooth = check_real("smooth", owner, smooth, low=0)
    return _curve(np.sort(x)[::-1].copy(), smooth, metric)


def expected_dice_curve(p: Any, smooth: float = 0.0) -> np.ndarray:
    r"""Exact :math:`E\,\mathrm{Dice}_s` of the top-tau set for every tau = 0..d, in O(d^2).

    :math:`\int_0^1 t^{s-1}\, t^{\tau} (2 t R_\tau(t) + s) G(t)\,dt` with
    :math:`R_\tau = \sum_{j \le \tau} p_{(j)}/(1 - p_{(j)} + p_{(j)} t)` (for :math:`s = 0`:
    :math:`\int 2 t^\tau R_\tau G`).
    """
    return _curve_api(p, smooth, "dice", "expected_dice_curve")


def expected_iou_curve(p: Any, smooth: float = 0.0) -> np.ndarray:
    r"""Exact :math:`E\,\mathrm{IoU}_s` of the top-tau set for every tau = 0..d, in O(d^2):
    :math:`(S_\tau + s) \int_0^1 t^{\tau + s - 1} \prod_{j > \tau} (1 - p_{(j)} + p_{(j)} t)\,dt`.
    """
    return _curve_api(p, smooth, "iou", "expected_iou_curve")


def _rank_exact(p: Any, metric: str, owner: str):
    x, was_numpy = _vector(p, owner, quadratic=True)
    order = np.argsort(-x, kind="stable")
    tau = int(np.argmax(_curve(x[order], 0.0, metric)))
    mask = np.zeros(x.size, dtype=bool)
    mask[order[:tau]] = True
    return mask if was_numpy else torch.from_numpy(mask).to(p.device)


def rankdice_exact(p: Any):
    r"""Exact RankDice: the top-:math:`\tau^*` mask, :math:`\tau^*` maximising the exact
    expected Dice over tau = 0..d (ties: smallest), from :func:`expected_dice_curve` (O(d^2)).
    (d,) -> bool (d,), numpy or torch as given. NaN, inf and values outside [0, 1] are refused
    (ValueError), as is a d whose O(d^2) work would not fit in memory.

    >>> rankdice_exact(np.array([0.9, 0.05, 0.8]))
    array([ True, False,  True])
    """
    return _rank_exact(p, "dice", "rankdice_exact")


def rankiou_exact(p: Any):
    r"""Exact RankIoU: the top-tau mask maximising the exact expected IoU (O(d^2)); shapes and
    checks as :func:`rankdice_exact`.

    >>> rankiou_exact(np.array([0.9, 0.05, 0.8]))
    array([ True, False,  True])
    """
    return _rank_exact(p, "iou", "rankiou_exact")
