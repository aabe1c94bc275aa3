r"""The reciprocal moment approximation (RMA) of the expected Dice and IoU, and its two solvers.

For one image and class, pixels :math:`j = 1..d` have probabilities :math:`p_j`,
labels :math:`Y_j \sim \mathrm{Bern}(p_j)` independent, :math:`P = \sum_j p_j`. For a mask
:math:`I` with :math:`\tau = |I|` and :math:`S = \sum_{j \in I} p_j`, RMA replaces
:math:`E[1/(\tau + 1 + \Gamma_{-j})]` by :math:`1/(\tau + 1 + P)` (a lower bound by Jensen):

.. math::

    D(I) = \frac{2 S}{P + \tau + 1 + s} + \frac{s}{P + \tau + s}, \qquad
    J(I) = \frac{S + s}{P - S + \tau + s},

with :math:`D(\emptyset) = J(\emptyset) = s / (P + s)` (0 when :math:`s = 0`, 0/0 := 0). Both
depend on :math:`I` through :math:`(\tau, S)` only, so the best mask of each size is the top-tau
set and :math:`\tau^* = \arg\max_\tau` of a vector of cumulative sums (``solver="sort"``,
O(d log d)). With :math:`s = 0` the optimum is also a threshold set found by Dinkelbach's
method in O(d) per iteration (``solver="linear"``).
"""

from __future__ import annotations

from typing import Any

import numba
import numpy as np
import torch

from paperkit import check_choice, check_real, check_tensor, describe, param_error
from rmaseg.probabilities import METRICS, as_probs

__all__ = [
    "MAX_DINKELBACH_ITERATIONS",
    "SOLVERS",
    "dinkelbach_masks",
    "optimal_tau",
    "rma_curve",
    "rma_objective",
    "rma_value",
    "sort_masks",
]

#: The two exact solvers of the RMA problem.
SOLVERS = ("sort", "linear")
#: Dinkelbach iterations before falling back to sorting (never reached in the tests).
MAX_DINKELBACH_ITERATIONS = 100
#: Rows of at least twice this many pixels start Dinkelbach from the optimum of a strided
#: subsample of about this many pixels (see :func:`dinkelbach_masks`).
WARM_START_SAMPLE = 1024


def rma_value(
    S: torch.Tensor, tau: torch.Tensor, P: torch.Tensor, metric: str, smooth: float = 0.0
) -> torch.Tensor:
    r"""RMA objective of masks of size ``tau`` and probability mass ``S`` (broadcast).

    Dice :math:`2S/(P+\tau+1+s) + s/(P+\tau+s)`, IoU :math:`(S+s)/(P-S+\tau+s)`; the empty mask
    (``tau == 0``) scores :math:`s/(P+s)`, with 0/0 := 0.
    """
    if metric == "dice":
        value = 2 * S / (P + tau + 1 + smooth)
        if smooth > 0:
            value = value + smooth / (P + tau + smooth)
    else:
        den = P - S + tau + smooth
        value = (S + smooth) / torch.where(den > 0, den, torch.ones_like(den))
        value = torch.where(den > 0, value, torch.zeros_like(value))
    empty = smooth / (P + smooth) if smooth > 0 else torch.zeros_like(P)
    return torch.where(tau == 0, empty, value)


def rma_curve(sorted_probs: torch.Tensor, metric: str, smooth: float = 0.0) -> torch.Tensor:
    r"""The RMA objective of every top-tau set, ``tau = 0..d``: (..., d) sorted -> (..., d + 1).

    ``sorted_probs`` holds each row in descending order; sums are taken in float64.
    """
    S = torch.cumsum(sorted_probs, dim=-1, dtype=torch.float64)
    S = torch.nn.functional.pad(S, (1, 0))
    P = S[..., -1:]
    tau = torch.arange(S.shape[-1], device=S.device, dtype=torch.float64)
    return rma_value(S, tau, P, metric, smooth)


def sort_masks(
    probs: torch.Tensor, metric: str, smooth: float = 0.0
) -> tuple[torch.Tensor, torch.Tensor]:
    r"""Top-:math:`\tau^*` masks by sorting: (B, C, D) -> (bool masks (B, C, D), tau (B, C)).

    One stable descending sort, one argmax over the RMA curve (ties: the smallest tau) and one
    ``scatter_`` of the rank mask back to pixel order.
    """
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    tau = rma_curve(sorted_probs, metric, smooth).argmax(dim=-1)
    ranks = torch.arange(probs.shape[-1], device=probs.device)
    selected = ranks < tau.unsqueeze(-1)
    masks = torch.empty_like(selected).scatter_(-1, order, selected)
    return masks, tau


def _floor_to(x: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Largest ``dtype`` value <= ``x``: ``p > result`` iff ``p > x`` for ``p`` of ``dtype``."""
    y = x.to(dtype)
    return torch.where(y.to(x.dtype) > x, torch.nextafter(y, torch.full_like(y, -1.0)), y)


@numba.njit(cache=True, nogil=True)
def _floor_threshold(t: float, row: np.ndarray) -> Any:
    """Largest value of ``row``'s dtype <= ``t``: ``p > result`` iff ``p > t`` for ``p`` of that
    dtype, so every read compares in the map's own dtype and gets the float64 comparison's set."""
    f = np.empty(1, row.dtype)
    f[0] = t
    if f[0] > t:
        f[0] = np.nextafter(f[0], -f[0])
    return f[0]


@numba.njit(cache=True, fastmath=True, nogil=True)
def _count_sum(row: np.ndarray, thr: Any, total: bool) -> tuple[int, float, float]:
    """``#{j : row[j] > thr}``, their sum and (if ``total``) the row's sum, summed in float64:
    one read of ``row``. fastmath lets the compiler vectorise the branch and reorder the sums
    (the inputs are finite probabilities, so only the summation order changes)."""
    c = 0
    s = 0.0
    whole = 0.0
    for j in range(row.size):
        v = row[j]
        above = v > thr
        c += above
        s += np.float64(v) if above else 0.0
        if total:
            whole += np.float64(v)
    return c, s, whole


@numba.njit(cache=True, fastmath=True, nogil=True)
def _count_sum_mask(row: np.ndarray, thr: Any, out: np.ndarray) -> tuple[int, float]:
    """:func:`_count_sum` that also writes the set ``row > thr`` to ``out`` in the same read."""
    c = 0
    s = 0.0
    for j in range(row.size):
        v = row[j]
        above = v > thr
        out[j] = above
        c += above
        s += np.float64(v) if above else 0.0
    return c, s


@numba.njit(cache=True, fastmath=True, nogil=True)
def _count_sum_rough(row: np.ndarray, thr: Any) -> tuple[int, float, float]:
    """The count (exact, int32: rows below 2^31 pixels), the set's sum and the row's sum, the
    sums accumulated in the map's dtype: about half a float64 read's cost in float32, with the
    float32 sum's rounding error. Only used to choose where the exact iterations start."""
    zero = row[:0].sum()
    c = np.int32(0)
    s = zero
    whole = zero
    for j in range(row.size):
        v = row[j]
        above = v > thr
        c += np.int32(above)
        s += v if above else zero
        whole += v
    return c, np.float64(s), np.float64(whole)


@numba.njit(cache=True, nogil=True)
def _threshold(lam: float, iou: bool) -> float:
    """The inclusion threshold of Dinkelbach's set at ``lam``: λ/(1+λ) for IoU, λ/2 for Dice."""
    return lam / (1.0 + lam) if iou else lam / 2.0


@numba.njit(cache=True, nogil=True)
def _set_value(c: int, S: float, P: float, iou: bool, one: float) -> float:
    """RMA value of a set of ``c`` pixels of mass ``S`` in a map of mass ``P``: IoU
    S / (P - S + c), Dice 2S / (P + c + one) (``one`` is the smoothing 1, scaled on subsamples)."""
    if c == 0:
        return 0.0
    if iou:
        den = P - S + c
        return S / den if den > 0 else 0.0
    return 2.0 * S / (P + c + one)


@numba.njit(cache=True, nogil=True)
def _warm_start(row: np.ndarray, iou: bool, max_iterations: int) -> float:
    """λ0 for rows of at least 2 :data:`WARM_START_SAMPLE` pixels (0 for shorter rows): the
    optimal value of every ``stride``-th pixel (Dice's smoothing scaled by the sampling rate),
    sharpened by one rough read of the whole row (:func:`_count_sum_rough`). Any λ0 >= 0 leads
    Dinkelbach to the same optimum (λ1 is a set's value, so λ1 <= λ*, and from there it rises to
    λ*); a close λ0 saves exact reads."""
    stride = row.size // WARM_START_SAMPLE
    if stride < 2:
        return 0.0
    sub = row[::stride]
    P = 0.0
    for v in sub:
        P += np.float64(v)
    one = sub.size / row.size
    lam = 0.0
    count = -1
    for _ in range(max_iterations):
        c, S, _ = _count_sum(sub, _floor_threshold(_threshold(lam, iou), sub), False)
        if c == count:
            break
        lam = _set_value(c, S, P, iou, one)
        count = c
    if row.size < 2**31:
        c, S, P = _count_sum_rough(row, _floor_threshold(_threshold(lam, iou), row))
        lam = max(_set_value(c, S, P, iou, 1.0), 0.0)
    return lam


@numba.njit(cache=True, nogil=True)
def _dinkelbach_rows(x: np.ndarray, iou: bool, max_iterations: int, out: np.ndarray) -> tuple:
    """Dinkelbach's iterations row by row (see :func:`dinkelbach_masks`), all compiled.

    Every read after a row's first writes its set to ``out``: the read whose count repeats the
    previous one ends the row, and its set is the answer (the sets are nested, so an equal
    count is an equal set). Returns (counts, the largest number of reads of a row, the warm
    start's rough read included), or -1 reads when a row has not converged.
    """
    counts = np.empty(x.shape[0], np.int64)
    worst = 0
    rough = 1 if 2 * WARM_START_SAMPLE <= x.shape[1] < 2**31 else 0
    for r in range(x.shape[0]):
        row = x[r]
        lam = _warm_start(row, iou, max_iterations)
        count = -1
        P = 0.0
        done = False
        for it in range(1, max_iterations + 1):
            t = _floor_threshold(_threshold(lam, iou), row)
            if it == 1:  # the mass P of the map comes with the first set
                c, S, P = _count_sum(row, t, True)
            else:
                c, S = _count_sum_mask(row, t, out[r])
            if c == count:
                counts[r] = c
                worst = max(worst, it + rough)
                done = True
                break
            lam = _set_value(c, S, P, iou, 1.0)
            count = c
        if not done:
            return counts, -1
    return counts, worst


def _dinkelbach_compiled(flat: torch.Tensor, metric: str) -> tuple | None:
    """CPU float32/float64 rows: the compiled loop, which also writes the masks."""
    x = flat.contiguous().numpy()
    out = np.empty(x.shape, np.bool_)
    counts, iterations = _dinkelbach_rows(x, metric == "iou", MAX_DINKELBACH_ITERATIONS, out)
    if iterations < 0:
        return None
    return torch.from_numpy(out), torch.from_numpy(counts), iterations


def _warm_start_torch(flat: torch.Tensor, metric: str) -> torch.Tensor:
    """:func:`_warm_start` for every row at once (float64 λ0 per row)."""
    rows = flat.shape[0]
    stride = flat.shape[-1] // WARM_START_SAMPLE
    if stride < 2:
        return torch.zeros(rows, dtype=torch.float64, device=flat.device)
    sub = flat[:, ::stride].to(torch.float64)
    P = sub.sum(dim=-1)
    one = sub.shape[-1] / flat.shape[-1]
    lam = torch.zeros_like(P)
    count = torch.full(P.shape, -1, dtype=torch.int64, device=flat.device)
    for _ in range(MAX_DINKELBACH_ITERATIONS):
        masks = sub > (lam / 2 if metric == "dice" else lam / (1 + lam)).unsqueeze(-1)
        new_count = masks.sum(dim=-1)
        if torch.equal(new_count, count):
            break
        S = torch.where(masks, sub, 0).sum(dim=-1)
        c = new_count.to(torch.float64)
        value = 2 * S / (P + c + one) if metric == "dice" else S / (P - S + c)
        lam = torch.where(new_count > 0, value, 0.0)
        count = new_count
    return lam


def _dinkelbach_torch(flat: torch.Tensor, metric: str) -> tuple | None:
    """Any device and floating dtype: every row at once, one set of torch operations per
    iteration (the threshold floored to the input dtype, so that the comparison is exact)."""
    P = flat.sum(dim=-1, dtype=torch.float64)
    lam = _warm_start_torch(flat, metric)
    count = torch.full(P.shape, -1, dtype=torch.int64, device=flat.device)
    for iterations in range(1, MAX_DINKELBACH_ITERATIONS + 1):
        thr = _floor_to(lam / 2 if metric == "dice" else lam / (1 + lam), flat.dtype)
        masks = flat > thr.unsqueeze(-1)
        new_count = masks.sum(dim=-1)
        if torch.equal(new_count, count):
            return masks, new_count, iterations
        S = torch.where(masks, flat, 0).sum(dim=-1, dtype=torch.float64)
        lam = rma_value(S, new_count.to(torch.float64), P, metric)
        count = new_count
    return None


def dinkelbach_masks(probs: torch.Tensor, metric: str) -> tuple[torch.Tensor, torch.Tensor, int]:
    r"""Threshold masks by Dinkelbach's method (``smooth = 0``), O(d) per iteration.

    Dice maximises :math:`2 \sum_I p / (|I| + P + 1)`: from :math:`\lambda_0 = 0`, take
    :math:`I_k = \{j : 2 p_j > \lambda_k\}` and :math:`\lambda_{k+1} = D(I_k)`. IoU includes
    :math:`j` iff :math:`p_j > \lambda / (1 + \lambda)` and sets
    :math:`\lambda_{k+1} = \sum_I p / (P + \sum_I (1 - p))`. The sets shrink until one repeats;
    the strict inequality gives the smallest optimal set, which is the sort solver's answer.
    Returns (masks (B, C, D), tau (B, C), iterations); if a row still moves after
    :data:`MAX_DINKELBACH_ITERATIONS` iterations, the batch is solved by :func:`sort_masks`.

    Rows of at least 2 :data:`WARM_START_SAMPLE` pixels start from :math:`\lambda_0`, the
    optimum of every stride-th pixel: any :math:`\lambda_0 \ge 0` reaches the same optimum
    (:math:`\lambda_1` is the value of a set, so :math:`\lambda_1 \le \lambda^*`), and a close one
    takes 3-4 reads of the row instead of 6-7. On the CPU (float32, float64) that start is
    sharpened by one rough read of the whole row (sums in the map's dtype), after which two exact
    reads usually suffice; each exact read is one compiled pass giving :math:`|I_k|` and
    :math:`\sum_{I_k} p` in float64 (:math:`P` with the first), comparing in the map's dtype
    against the threshold floored to it, and every exact read after the first writes its set, so
    the read that ends the row has written the mask. Elsewhere the same iterations run as torch
    operations. ``iterations`` counts the reads of the longest-running row (the rough one included).
    """
    shape = probs.shape
    flat = probs.reshape(-1, shape[-1])
    compiled = flat.device.type == "cpu" and flat.dtype in (torch.float32, torch.float64)
    result = _dinkelbach_compiled(flat, metric) if compiled else _dinkelbach_torch(flat, metric)
    if result is None:
        masks_sorted, tau = sort_masks(probs, metric)
        return masks_sorted, tau, MAX_DINKELBACH_ITERATIONS
    masks, counts, iterations = result
    return masks.reshape(shape), counts.reshape(shape[:-1]), iterations


def optimal_tau(
    probs: torch.Tensor | np.ndarray,
    metric: str = "dice",
    smooth: float = 0.0,
    solver: str = "sort",
) -> torch.Tensor:
    r""":math:`\tau^* = \arg\max_{\tau \in \{0..d\}}` of the RMA objective of the top-tau set.

    Args:
        probs: (B, C, D) probabilities in [0, 1] (torch or numpy).
        metric: ``"dice"`` or ``"iou"``.
        smooth: :math:`s \ge 0`.
        solver: ``"sort"`` or ``"linear"`` (Dinkelbach; needs ``smooth == 0``).

    Returns:
        LongTensor (B, C) on the input's device (no pruning applied).

    Shapes:
        probs: (B, C, D), B may be 0. Returns (B, C).

    NaN, inf and values outside [0, 1] in ``probs`` are refused (ValueError).

    >>> optimal_tau(torch.tensor([[[0.9, 0.6, 0.1]]]))
    tensor([[2]])
    """
    owner = "optimal_tau"
    x, _ = as_probs(probs, owner, ndim=3)
    metric = check_choice("metric", owner, metric, METRICS)
    smooth = check_real("smooth", owner, smooth, low=0)
    solver = check_choice("solver", owner, solver, SOLVERS)
    if solver == "linear" and smooth > 0:
        raise param_error("smooth", owner, "0 with solver='linear'", smooth)
    if solver == "linear":
        return dinkelbach_masks(x, metric)[1]
    return sort_masks(x, metric, smooth)[1]


def rma_objective(p: Any, mask: Any, metric: str = "dice", smooth: float = 0.0) -> float:
    r"""The RMA surrogate :math:`D(I)` or :math:`J(I)` of any mask ``I`` of one map.

    Args:
        p: probabilities (torch or numpy).
        mask: boolean mask of the same length (torch or numpy).

    Shapes:
        p, mask: (D,), D >= 1.

    NaN, inf and values outside [0, 1] in ``p`` are refused (ValueError).

    >>> rma_objective(np.array([0.9, 0.6, 0.1]), np.array([True, True, False]))  # 3 / 4.6
    0.6521739130434783
    """
    owner = "rma_objective"
    x, _ = as_probs(p, owner, ndim=1, name="p")
    if not isinstance(mask, (np.ndarray, torch.Tensor)):
        raise param_error("mask", owner, "a boolean array", describe(mask), cls=TypeError)
    m = torch.as_tensor(mask, device=x.device)
    check_tensor("mask", owner, m, shape=(x.shape[0],), dtype="bool", finite=False)
    metric = check_choice("metric", owner, metric, METRICS)
    smooth = check_real("smooth", owner, smooth, low=0)
    x = x.to(torch.float64)
    S, tau, P = x[m].sum(), m.sum().to(torch.float64), x.sum()
    return float(rma_value(S, tau, P, metric, smooth))
