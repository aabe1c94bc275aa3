r"""Statistical degrees of freedom of an attention layer's kernel, and the feature-dimension
allocation they give (the paper's Sec. 3-4).

With queries and keys scaled by :math:`d^{-1/4}` each, the softmax kernel factors as

.. math::
    \kappa(q, k) = e^{q\cdot k} = e^{\|q\|^2/2}\, e^{\|k\|^2/2}\, g(q, k),
    \qquad g(x, y) = e^{-\|x - y\|^2/2},

the :math:`q` factor cancels in the row normalisation and the :math:`k` factor is a per-key
weight, so the difficulty of approximating the kernel with features lives in the Gaussian
:math:`g`. For :math:`n` points with Gram :math:`K_{ij} = g(x_i, x_j)` and eigenvalues
:math:`\mu_1 \ge \dots \ge \mu_n` of :math:`K/n`, the degrees of freedom are

.. math::
    d(\lambda) = \sum_i \frac{\mu_i}{\mu_i + \lambda}, \qquad \lambda > 0,

decreasing in :math:`\lambda`, tending to :math:`\operatorname{rank} K` as :math:`\lambda \to 0`
and to 0 as :math:`\lambda \to \infty`. Random-feature theory (ridge-leverage sampling; Bach
2017, Rudi & Rosasco 2017) says :math:`m \gtrsim d(\lambda) \log(d(\lambda)/\delta)` features
approximate the kernel to error :math:`\lesssim \lambda` with probability :math:`1 - \delta`;
a common :math:`\lambda` across layers equalises the per-layer bounds, so under a total budget
:math:`M = \sum_l m_l` the paper sets :math:`m_l \propto d_l(\lambda^*)` with
:math:`\sum_l c\, d_l(\lambda^*) = M`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import torch

from paperkit import check_choice, check_int, check_real, check_tensor, param_error

__all__ = [
    "allocate_dims",
    "degrees_of_freedom",
    "kernel_gram",
    "layer_dof",
    "layer_spectra",
    "uniform_dims",
]

#: The most points one Gram may hold (n x n float64 and its eigendecomposition).
MAX_POINTS = 8192


def kernel_gram(x: torch.Tensor, y: torch.Tensor | None = None, kind: str = "gaussian"):
    r"""The kernel Gram matrix between the rows of ``x`` and of ``y`` (default ``x``).

    ``kind="gaussian"``: :math:`K_{ij} = e^{-\|x_i - y_j\|^2/2}
    = e^{x_i\cdot y_j} e^{-\|x_i\|^2/2} e^{-\|y_j\|^2/2}`;
    ``kind="softmax"``: :math:`K_{ij} = e^{x_i \cdot y_j}`.

    Shapes: ``x`` (n, d), ``y`` (m, d) -> (n, m). NaN and inf are refused.

    >>> x = torch.tensor([[0.0, 0.0], [1.0, 0.0]])
    >>> kernel_gram(x).diagonal().tolist()
    [1.0, 1.0]
    >>> round(float(kernel_gram(x)[0, 1]), 4)  # exp(-1/2)
    0.6065
    """
    owner = "kernel_gram"
    dims: dict = {}
    check_tensor("x", owner, x, shape=("n", "d"), dims=dims)
    if y is None:
        y = x
    else:
        check_tensor("y", owner, y, shape=("m", "d"), dims=dims)
        if y.dtype != x.dtype:
            raise param_error("y", owner, f"of the dtype of x ({x.dtype})", y.dtype)
    check_choice("kind", owner, kind, ("gaussian", "softmax"))
    dot = x @ y.T
    if kind == "softmax":
        return dot.exp()
    sq = (x * x).sum(-1)[:, None] + (y * y).sum(-1)[None, :] - 2.0 * dot
    return (-0.5 * sq.clamp_min(0.0)).exp()


def _spectrum(gram: torch.Tensor) -> torch.Tensor:
    """Eigenvalues of K/n (float64, descending), round-off below n·eps·max clipped to 0."""
    n = gram.shape[0]
    k = gram.detach().to(torch.float64)
    mu = torch.linalg.eigvalsh((k + k.T) / (2.0 * n)).flip(0)
    tol = n * torch.finfo(torch.float64).eps * max(float(mu[0]), 0.0)
    return torch.where(mu > tol, mu, torch.zeros_like(mu))


def degrees_of_freedom(spectrum_or_gram: torch.Tensor, lam: float | torch.Tensor) -> torch.Tensor:
    r""":math:`d(\lambda) = \sum_i \mu_i / (\mu_i + \lambda)`.

    A 1-D input is the spectrum :math:`\mu` of :math:`K/n` (entries >= 0; round-off negatives
    down to :math:`-10^{-10}\max\mu` are clipped to 0); a 2-D input is a symmetric PSD Gram
    :math:`K` (n x n), whose :math:`K/n` is eigendecomposed in float64. ``lam`` is a positive
    float or a tensor of positive values (the result has its shape). NaN and inf are refused.

    >>> round(float(degrees_of_freedom(torch.tensor([1.0, 0.5, 0.0]), 0.5)), 12)  # 1/1.5 + 0.5/1
    1.166666666667
    >>> float(degrees_of_freedom(torch.eye(4), 0.25))  # K = I: n / (1 + n lam)
    2.0
    """
    owner = "degrees_of_freedom"
    check_tensor("spectrum_or_gram", owner, spectrum_or_gram, ndim=(1, 2))
    if spectrum_or_gram.ndim == 2:
        n, m = spectrum_or_gram.shape
        if n != m:
            raise param_error(
                "spectrum_or_gram", owner, "a square Gram matrix (n, n)", spectrum_or_gram.shape
            )
        if n > MAX_POINTS:
            raise param_error("spectrum_or_gram", owner, f"at most {MAX_POINTS} points", n)
        mu = _spectrum(spectrum_or_gram)
    else:
        mu = spectrum_or_gram.detach().to(torch.float64)
        floor = -1e-10 * max(float(mu.abs().max()), 1e-300)
        if bool((mu < floor).any()):
            raise param_error(
                "spectrum_or_gram", owner, "a spectrum of non-negative eigenvalues", float(mu.min())
            )
        mu = mu.clamp_min(0.0)
    if isinstance(lam, torch.Tensor):
        check_tensor("lam", owner, lam)
        if bool((lam <= 0).any()):
            raise param_error("lam", owner, "positive (lam > 0)", float(lam.min()))
        lam_t = lam.detach().to(torch.float64)
        return (mu / (mu + lam_t[..., None])).sum(-1)
    lam = check_real("lam", owner, lam, low=0.0, low_open=True)
    return (mu / (mu + lam)).sum()


def layer_spectra(
    q: torch.Tensor,
    k: torch.Tensor,
    *,
    max_points: int = 1024,
    seed: int = 0,
    scale: float | None = None,
) -> torch.Tensor:
    r"""Per-head spectra of :math:`K/n` for one layer, ``(H, n)`` float64, descending.

    For each head the points are up to ``max_points`` rows sampled without replacement (one
    seeded draw shared by the heads) from the union of that head's queries and keys, each scaled
    by ``scale`` (default :math:`d^{-1/4}`); the Gram is the Gaussian :func:`kernel_gram`.
    Pass only real tokens (padding excluded) as ``q``/``k`` rows. NaN and inf are refused.

    Shapes: ``q``, ``k`` (n, H, d).

    >>> g = torch.Generator().manual_seed(0)
    >>> q, k = torch.randn(50, 2, 4, generator=g), torch.randn(50, 2, 4, generator=g)
    >>> layer_spectra(q, k, max_points=64).shape
    torch.Size([2, 64])
    """
    owner = "layer_spectra"
    dims: dict = {}
    check_tensor("q", owner, q, shape=(None, "H", "d"), dims=dims)
    check_tensor("k", owner, k, shape=(None, "H", "d"), dims=dims)
    max_points = check_int("max_points", owner, max_points, low=2, high=MAX_POINTS)
    seed = check_int("seed", owner, seed, low=0)
    d = q.shape[-1]
    scale = d**-0.25 if scale is None else check_real("scale", owner, scale, low=0, low_open=True)
    points = torch.cat([q, k], 0).detach().to(torch.float64) * scale
    n = points.shape[0]
    if n > max_points:
        g = torch.Generator().manual_seed(seed)
        points = points[torch.randperm(n, generator=g)[:max_points]]
    return torch.stack([_spectrum(kernel_gram(points[:, h])) for h in range(points.shape[1])])


def layer_dof(
    q: torch.Tensor,
    k: torch.Tensor,
    lam: float,
    max_points: int = 1024,
    seed: int = 0,
) -> float:
    r"""A layer's DoF: :math:`d_l(\lambda)`, the mean over heads of :func:`degrees_of_freedom` on
    the per-head spectra of :func:`layer_spectra` (queries/keys scaled by :math:`d^{-1/4}`).

    Shapes: ``q``, ``k`` (n, H, d), real tokens only. NaN and inf are refused.

    >>> q = torch.zeros(10, 3, 4)  # every point equal: K = all ones, rank 1
    >>> round(layer_dof(q, q, 1e-9), 6)
    1.0
    """
    lam = check_real("lam", "layer_dof", lam, low=0.0, low_open=True)
    spectra = layer_spectra(q, k, max_points=max_points, seed=seed)
    return float(torch.stack([degrees_of_freedom(s, lam) for s in spectra]).mean())


def _layer_curves(spectra: Sequence[torch.Tensor], owner: str) -> list[torch.Tensor]:
    if isinstance(spectra, torch.Tensor) or not isinstance(spectra, (list, tuple)):
        raise param_error(
            "spectra", owner, "a list of per-layer spectra (1-D or (H, n) tensors)", type(spectra)
        )
    if not spectra:
        raise param_error("spectra", owner, "a non-empty list", spectra)
    out = []
    for i, s in enumerate(spectra):
        check_tensor("spectra", owner, s, ndim=(1, 2))
        s = s.detach().to(torch.float64)
        s = s[None] if s.ndim == 1 else s
        if bool((s < -1e-10 * max(float(s.abs().max()), 1e-300)).any()):
            raise param_error(
                "spectra", owner, f"non-negative eigenvalues (layer {i})", float(s.min())
            )
        out.append(s.clamp_min(0.0))
    return out


def _dof_all(curves: list[torch.Tensor], lam: float) -> np.ndarray:
    return np.array([float((s / (s + lam)).sum(-1).mean()) for s in curves])


def uniform_dims(budget: int, num_layers: int, *, multiple_of: int = 2) -> list[int]:
    """The baseline: the same :math:`m_l = M/L` in every layer (``budget`` divisible by
    ``num_layers * multiple_of``).

    >>> uniform_dims(96, 6)
    [16, 16, 16, 16, 16, 16]
    """
    owner = "uniform_dims"
    num_layers = check_int("num_layers", owner, num_layers, low=1, high=10**4)
    multiple_of = check_int("multiple_of", owner, multiple_of, low=1, high=1024)
    budget = check_int("budget", owner, budget, low=num_layers * multiple_of, high=10**9)
    if budget % (num_layers * multiple_of):
        raise param_error(
            "budget",
            owner,
            f"a multiple of num_layers * multiple_of = {num_layers * multiple_of}",
            budget,
        )
    return [budget // num_layers] * num_layers


def allocate_dims(
    spectra: list[torch.Tensor],
    budget: int,
    *,
    min_dim: int = 2,
    multiple_of: int = 2,
    oversample: float = 1.0,
) -> tuple[list[int], float]:
    r"""Per-layer feature dimensions under a total budget, and the common :math:`\lambda^*`.

    :math:`\lambda^*` solves :math:`\sum_l c\, d_l(\lambda^*) = M` (``oversample`` = c,
    ``budget`` = M) by bisection on :math:`\log\lambda`, with :math:`d_l` the mean over heads of
    :func:`degrees_of_freedom`; then :math:`m_l = c\, d_l(\lambda^*)` is rounded to multiples of
    ``multiple_of`` (at least ``min_dim``) by largest remainder, so that :math:`\sum_l m_l = M`
    exactly. A layer with larger DoF never gets fewer dims; equal spectra give equal dims.
    Since :math:`d_l < \operatorname{rank}_l` for every :math:`\lambda > 0`, a budget
    :math:`M \ge c \sum_l \operatorname{rank}_l` cannot be met: ``ValueError`` naming the
    largest feasible budget.

    ``spectra``: one tensor per layer, 1-D (one spectrum of :math:`K/n`) or (H, n) (per head, as
    :func:`layer_spectra` returns). NaN and inf are refused.

    >>> flat, steep = torch.full((8,), 0.125), torch.tensor([0.9, 0.1] + [0.0] * 6)
    >>> allocate_dims([flat, steep], 8)[0]
    [6, 2]
    """
    owner = "allocate_dims"
    curves = _layer_curves(spectra, owner)
    L = len(curves)
    multiple_of = check_int("multiple_of", owner, multiple_of, low=1, high=1024)
    min_dim = check_int("min_dim", owner, min_dim, low=1, high=10**6)
    if min_dim % multiple_of:
        raise param_error("min_dim", owner, f"a multiple of multiple_of ({multiple_of})", min_dim)
    oversample = check_real("oversample", owner, oversample, low=0.0, low_open=True, high=1e6)
    budget = check_int("budget", owner, budget, low=0, high=10**9)
    if budget < L * min_dim:
        raise param_error("budget", owner, f"at least num_layers * min_dim = {L * min_dim}", budget)
    if budget % multiple_of:
        raise param_error("budget", owner, f"a multiple of multiple_of ({multiple_of})", budget)
    ranks = np.array([float((s > 0).sum(-1).double().mean()) for s in curves])
    ceiling = oversample * ranks.sum()
    if budget >= ceiling:
        largest = math.ceil(ceiling / multiple_of) * multiple_of - multiple_of
        raise param_error(
            "budget",
            owner,
            f"below oversample * sum of ranks = {ceiling:g} (the largest feasible budget is "
            f"{largest})",
            budget,
        )
    top = max(float(s.max()) for s in curves)
    lo, hi = math.log(top * 1e-18), math.log(top * 1e18)  # total(lo) ~ ceiling, total(hi) ~ 0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if oversample * _dof_all(curves, math.exp(mid)).sum() > budget:
            lo = mid
        else:
            hi = mid
    lam = math.exp(0.5 * (lo + hi))
    target = oversample * _dof_all(curves, lam)
    target *= budget / target.sum()  # remove the bisection's last rounding
    return _round_to_budget(target, budget, min_dim, multiple_of), lam


def _round_to_budget(target: np.ndarray, budget: int, min_dim: int, unit: int) -> list[int]:
    """Largest-remainder rounding of ``target`` to multiples of ``unit`` (at least ``min_dim``)
    summing to ``budget``; ties go to the larger target, so the order of targets is kept."""
    units = target / unit
    base = np.maximum(np.floor(units + 1e-9), min_dim // unit).astype(int)
    rem = units - base
    left = budget // unit - int(base.sum())
    order = sorted(range(len(target)), key=lambda i: (-rem[i], -target[i]))
    i = 0
    while left > 0:  # hand out the missing units by largest remainder
        base[order[i % len(order)]] += 1
        left -= 1
        i += 1
    while left < 0:  # take back surplus units (min_dim bumps), smallest remainder first
        j = next(j for j in reversed(order) if base[j] > min_dim // unit)
        base[j] -= 1
        left += 1
    return [int(b) * unit for b in base]
