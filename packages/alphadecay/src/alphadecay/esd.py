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

from paperkit import Described, check_choice, param_error

__all__ = ["PowerLawFit", "esd_eigenvalues", "pl_alpha_hill", "pl_fit"]

#: Eigenvalues below this are dropped by ``filter_zeros=True`` (as in the official code).
EVALS_THRESH = 1e-5
#: Eigenvalues at or below zero are clamped to this before taking logarithms.
EIG_FLOOR = 1e-12


def _describe(x: Any) -> Described:
    if isinstance(x, Tensor):
        kind = "parameter" if isinstance(x, nn.Parameter) else "tensor"
        return Described(f"a {x.dim()}-D {kind} of shape {tuple(x.shape)}")
    return Described(f"an array of shape {np.shape(x)}")


def esd_eigenvalues(W: Tensor) -> Tensor:
    r"""Eigenvalues of :math:`W^\top W` (squared singular values of ``W``), ascending.

    Computed with ``torch.linalg.svdvals``; float64 input stays float64, every other floating
    dtype is computed and returned in float32. No normalisation by ``N`` (the power-law exponent
    is scale invariant). Raises ``ValueError`` for anything but a finite, non-empty 2-D matrix.
    """
    if not isinstance(W, Tensor):
        raise param_error("W", "esd_eigenvalues", "a torch.Tensor", type(W).__name__, cls=TypeError)
    if W.dim() != 2:
        raise param_error("W", "esd_eigenvalues", "a 2-D weight matrix", _describe(W))
    if W.numel() == 0:
        raise param_error("W", "esd_eigenvalues", "a non-empty matrix", _describe(W))
    if not W.is_floating_point():
        raise param_error("W", "esd_eigenvalues", "a floating-point matrix", W.dtype, cls=TypeError)
    W = W.detach()
    if W.dtype != torch.float64:
        W = W.float()
    if not bool(torch.isfinite(W).all()):
        bad = int((~torch.isfinite(W)).sum())
        raise param_error("W", "esd_eigenvalues", "finite", Described(f"{bad} non-finite entries"))
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
    if isinstance(W_or_eigs, Tensor):
        if W_or_eigs.dim() == 2:
            return esd_eigenvalues(W_or_eigs).double().cpu().numpy()
        if W_or_eigs.dim() != 1 or isinstance(W_or_eigs, nn.Parameter):
            raise param_error(
                "W_or_eigs",
                owner,
                "a 2-D weight matrix or a 1-D list of non-negative eigenvalues",
                _describe(W_or_eigs),
            )
        eigs = W_or_eigs.detach().double().cpu().numpy()
    else:
        arr = np.asarray(W_or_eigs, dtype=np.float64)
        if arr.ndim == 2:
            return _as_eigenvalues(torch.from_numpy(arr), owner)
        if arr.ndim != 1:
            raise param_error(
                "W_or_eigs",
                owner,
                "a 2-D weight matrix or a 1-D list of non-negative eigenvalues",
                _describe(arr),
            )
        eigs = arr
    if eigs.size < 2:
        raise param_error("W_or_eigs", owner, "at least 2 eigenvalues", _describe(eigs))
    if not np.isfinite(eigs).all():
        raise param_error("W_or_eigs", owner, "finite", Described("non-finite eigenvalues"))
    if (eigs < 0).any():
        raise param_error(
            "W_or_eigs",
            owner,
            "non-negative eigenvalues (a 1-D input is read as an ESD; pass the 2-D weight "
            "matrix, not a bias or norm vector)",
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
    the tail size ``k`` and the KS distance ``D``)."""
    check_choice("method", "pl_fit", method, ("median", "ks"))
    if not (isinstance(xmin_pos, (int, float)) and xmin_pos > 1):
        raise param_error("xmin_pos", "pl_fit", "a number greater than 1", xmin_pos)
    eigs = _as_eigenvalues(W_or_eigs, "pl_fit")
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
                "pl_fit",
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
            "W_or_eigs", "pl_fit", "an ESD that is not constant", Described("equal eigenvalues")
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
        W_or_eigs: a 2-D weight matrix (tensor or array; its ESD is computed with
            :func:`esd_eigenvalues`), or a 1-D list / array / tensor of non-negative eigenvalues.
            A 1-D ``nn.Parameter`` (a bias or norm weight) or a 1-D input with negative entries
            is rejected: it is not an ESD.
        xmin_pos: the tail starts at 0-based index ``floor(N / xmin_pos)`` of the ascending ESD
            (``2``: the median), must be ``> 1``.
        method: ``"median"`` (Hill estimator with that fixed ``xmin``, the paper's default) or
            ``"ks"`` (``xmin`` chosen by the smallest Kolmogorov-Smirnov distance).
        filter_zeros: drop eigenvalues below ``1e-5`` before fitting (kept if fewer than 2
            remain). Eigenvalues ``<= 0`` are otherwise clamped to ``1e-12``.

    Returns:
        :math:`\hat\alpha = 1 + k / (\sum_{j \in T} \ln\lambda_j - k \ln\lambda_{\min})`.
    """
    return pl_fit(W_or_eigs, xmin_pos, method, filter_zeros).alpha
