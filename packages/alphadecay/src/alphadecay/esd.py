r"""Empirical spectral density (ESD) of a weight matrix and its power-law exponent.

For a weight matrix :math:`W \in \mathbb{R}^{m \times n}` the ESD is the set of eigenvalues of
:math:`W^\top W`, i.e. the squared singular values :math:`\lambda_i = \sigma_i(W)^2`,
:math:`i = 1..N`, :math:`N = \min(m, n)`, sorted ascending. Heavy-Tailed Self-Regularization
(HT-SR) fits a power law :math:`p(\lambda) \propto \lambda^{-\alpha}` to the tail of the ESD;
small :math:`\alpha` means a heavy tail (a module that has learned more structure).

``PL_Alpha_Hill`` (the ``"median"`` fit): with ``i0 = floor(N / xmin_pos)`` (0-based) the tail is
:math:`T = \{\lambda_{i_0}, \dots, \lambda_N\}`, :math:`k = |T| = N - i_0`, and

.. math:: \hat\alpha = 1 + \frac{k}{\sum_{j \in T} \ln \lambda_j - k \ln \lambda_{i_0}}

(the continuous maximum-likelihood / Hill estimator with :math:`x_{\min} = \lambda_{i_0}`).
The ``"ks"`` fit scans every candidate :math:`x_{\min}` of the sorted ESD, computes the Hill
exponent of the tail above it and the Kolmogorov-Smirnov distance
:math:`D = \max_j |1 - (x_j / x_{\min})^{1-\alpha} - j/k|` between the fitted and the empirical
CDF, and keeps the exponent with the smallest :math:`D` (Clauset, Shalizi & Newman 2009; the
default fit of ``weightwatcher``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import torch
from torch import Tensor, nn

from paperkit import (
    Described,
    check_array,
    check_bool,
    check_choice,
    check_real,
    check_tensor,
    param_error,
)

__all__ = ["PowerLawFit", "esd_eigenvalues", "pl_alpha_hill", "pl_fit"]

#: Eigenvalues below this are dropped by ``filter_zeros=True`` (as in the official code).
EVALS_THRESH = 1e-5
#: Eigenvalues at or below zero are clamped to this before taking logarithms.
EIG_FLOOR = 1e-12
#: What a ``W_or_eigs`` argument must be.
W_OR_EIGS = "a 2-D weight matrix or a 1-D list of non-negative eigenvalues"


def esd_eigenvalues(W: Tensor) -> Tensor:
    r"""Eigenvalues of :math:`W^\top W` (squared singular values of ``W``), ascending.

    Computed with ``torch.linalg.svdvals``; float64 input stays float64, every other floating
    dtype is computed and returned in float32. No normalisation by ``N`` (the power-law exponent
    is scale invariant). ``W`` must be a non-empty 2-D floating tensor; NaN and inf are refused
    (``ValueError``).

    >>> esd_eigenvalues(torch.diag(torch.tensor([3.0, 1.0])))
    tensor([1., 9.])
    """
    check_tensor("W", "esd_eigenvalues", W, ndim=2)
    return _esd(W)


def _esd(W: Tensor) -> Tensor:
    W = W.detach()
    if W.dtype != torch.float64:
        W = W.float()
    return torch.linalg.svdvals(W).square().flip(0)


@dataclass(frozen=True)
class PowerLawFit:
    """A power-law fit of the ESD tail: exponent ``alpha``, tail start ``xmin`` (an eigenvalue
    of the list), tail size ``k`` and the Kolmogorov-Smirnov distance ``D`` of the fit."""

    alpha: float
    xmin: float
    k: int
    D: float


def _as_eigenvalues(W_or_eigs: Any, owner: str) -> np.ndarray:
    """Sorted float64 ESD from a 2-D weight matrix or from a 1-D list of eigenvalues."""
    name = "W_or_eigs"
    if isinstance(W_or_eigs, Tensor):
        check_tensor(name, owner, W_or_eigs, ndim=(1, 2), dtype=None, finite=False)
        if W_or_eigs.dim() == 2:
            check_tensor(name, owner, W_or_eigs)
            eigs = _esd(W_or_eigs).double().cpu().numpy()
        elif isinstance(W_or_eigs, nn.Parameter):
            raise param_error(
                name,
                owner,
                W_OR_EIGS + " (a 1-D parameter is a bias or norm weight, not an ESD)",
                Described(f"a parameter of shape {tuple(W_or_eigs.shape)}"),
            )
        else:
            eigs = W_or_eigs.detach().double().cpu().numpy()
    else:
        array = check_array(name, owner, W_or_eigs, ndim=(1, 2))
        if array.ndim == 2:
            eigs = _esd(torch.from_numpy(np.asarray(array, dtype=np.float64))).numpy()
        else:
            eigs = array.astype(np.float64)
    if eigs.size < 2:
        raise param_error(
            name, owner, W_OR_EIGS + " with at least 2 eigenvalues", Described(f"{eigs.size}")
        )
    if not np.isfinite(eigs).all():
        raise param_error(name, owner, "finite", Described("non-finite eigenvalues"))
    if (eigs < 0).any():
        raise param_error(
            name,
            owner,
            W_OR_EIGS + " (a 1-D input is read as an ESD; pass the 2-D weight matrix, not a bias "
            "or norm vector)",
            Described(f"{int((eigs < 0).sum())} negative entries"),
        )
    return np.sort(eigs)


def _hill(log_eigs: np.ndarray, i: int) -> float:
    k = log_eigs.size - i
    spread = float(log_eigs[i:].sum() - k * log_eigs[i])
    return 1.0 + k / spread if spread > 0 else float("inf")


def _ks_distance(eigs: np.ndarray, i: int, alpha: float) -> float:
    tail = eigs[i:]
    k = tail.size
    return float(np.max(np.abs(1 - (tail / tail[0]) ** (1 - alpha) - np.arange(k) / k)))


def pl_fit(
    W_or_eigs: Any,
    xmin_pos: float = 2,
    method: Literal["median", "ks"] = "median",
    filter_zeros: bool = False,
) -> PowerLawFit:
    """Fit the power-law tail of an ESD; see :func:`pl_alpha_hill` (this also returns ``xmin``,
    the tail size ``k`` and the KS distance ``D``).

    >>> pl_fit([1.0, 2.0, 4.0, 8.0])  # doctest: +ELLIPSIS
    PowerLawFit(alpha=3.885..., xmin=4.0, k=2, D=0.364...)
    """
    return fit_tail(W_or_eigs, xmin_pos, method, filter_zeros, "pl_fit")


def fit_tail(
    W_or_eigs: Any, xmin_pos: Any, method: Any, filter_zeros: Any, owner: str
) -> PowerLawFit:
    """:func:`pl_fit` with its errors naming ``owner``, the function the user called."""
    check_choice("method", owner, method, ("median", "ks"))
    xmin_pos = check_real("xmin_pos", owner, xmin_pos, low=1, low_open=True)
    filter_zeros = check_bool("filter_zeros", owner, filter_zeros)
    eigs = _as_eigenvalues(W_or_eigs, owner)
    if filter_zeros:
        kept = eigs[eigs > EVALS_THRESH]
        eigs = kept if kept.size >= 2 else eigs
    eigs = np.maximum(eigs, EIG_FLOOR)
    log_eigs = np.log(eigs)
    n = eigs.size
    if method == "median":
        i = int(n / xmin_pos)
        alpha = _hill(log_eigs, i)
        if not np.isfinite(alpha):
            raise param_error(
                "W_or_eigs",
                owner,
                "an ESD whose tail is not constant",
                Described(f"{n - i} equal tail eigenvalues {eigs[i]:.6g}"),
            )
        return PowerLawFit(alpha, float(eigs[i]), n - i, _ks_distance(eigs, i, alpha))
    best = (np.inf, np.nan, 0)
    for i in range(n - 1):
        alpha = _hill(log_eigs, i)
        if np.isfinite(alpha) and alpha > 1:
            D = _ks_distance(eigs, i, alpha)
            if best[0] > D:
                best = (D, alpha, i)
    D, alpha, i = best
    if not np.isfinite(D):
        raise param_error(
            "W_or_eigs", owner, "an ESD that is not constant", Described("equal eigenvalues")
        )
    return PowerLawFit(float(alpha), float(eigs[i]), n - i, float(D))


def pl_alpha_hill(
    W_or_eigs: Any,
    xmin_pos: float = 2,
    method: Literal["median", "ks"] = "median",
    filter_zeros: bool = False,
) -> float:
    r"""Power-law exponent ``PL_Alpha_Hill`` of an ESD.

    Args:
        W_or_eigs: a 2-D floating weight matrix (tensor or array; its ESD is computed as in
            :func:`esd_eigenvalues`), or a 1-D list / array / tensor of at least 2 non-negative
            eigenvalues. A 1-D ``nn.Parameter`` (a bias or norm weight) or a 1-D input with
            negative entries is rejected: it is not an ESD. NaN and inf are refused.
        xmin_pos: the tail starts at 0-based index ``floor(N / xmin_pos)`` of the ascending ESD
            (``2``: the median), must be ``> 1``.
        method: ``"median"`` (Hill estimator with that fixed ``xmin``, the paper's default) or
            ``"ks"`` (``xmin`` chosen by the smallest Kolmogorov-Smirnov distance).
        filter_zeros: drop eigenvalues below ``1e-5`` before fitting (kept if fewer than 2
            remain). Eigenvalues ``<= 0`` are otherwise clamped to ``1e-12``.

    Returns:
        :math:`\hat\alpha = 1 + k / (\sum_{j \in T} \ln\lambda_j - k \ln\lambda_{\min})`.

    >>> round(pl_alpha_hill([1.0, 2.0, 4.0, 8.0]), 6)  # 1 + 2 / ln 2
    3.88539
    """
    return fit_tail(W_or_eigs, xmin_pos, method, filter_zeros, "pl_alpha_hill").alpha
