"""The exact fair-classification front for the error (a linear program), the cross-check of MIFPO.

A randomised group-aware classifier on the binned scores is s_i = P(Yhat = 1 | bin i, A = 1) and
t_j = P(Yhat = 1 | bin j, A = 0), all in [0, 1]. Its accuracy and demographic-parity gap are

.. math::

    \\mathrm{acc} = \\alpha \\sum_i U_i [s_i u_i + (1 - s_i)(1 - u_i)]
        + (1 - \\alpha) \\sum_j V_j [t_j v_j + (1 - t_j)(1 - v_j)], \\qquad
    |\\sum_i U_i s_i - \\sum_j V_j t_j| \\le \\gamma,

linear in (s, t). For the error, the optimal representation front equals this front: the Bayes
classifier on Z has a parity gap <= TV(Z), and a classifier with gap <= gamma is itself a
representation with TV <= gamma (the paper's reduction of fair classification). Solved with
HiGHS (``scipy.optimize.linprog``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linprog

from fairpareto.binning import BINNINGS, GroupBins, bin_scores
from fairpareto.checks import check_gammas, check_scores_groups
from paperkit import check_choice, check_int

__all__ = ["fair_classification_front_lp", "lp_error", "lp_thresholds"]


def lp_thresholds(bins: GroupBins, gamma: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(error, s, t): the least error of a classifier with parity gap <= gamma and its
    acceptance probabilities per bin of group 1 (s) and group 0 (t). Arguments assumed checked."""
    a = bins.alpha
    # error = const + c . (s, t): predicting 1 on bin i costs (1 - u_i) instead of u_i
    c = np.concatenate([a * bins.U * (1 - 2 * bins.u), (1 - a) * bins.V * (1 - 2 * bins.v)])
    const = a * np.dot(bins.U, bins.u) + (1 - a) * np.dot(bins.V, bins.v)
    row = np.concatenate([bins.U, -bins.V])
    res = linprog(
        c,
        A_ub=np.vstack([row, -row]),
        b_ub=np.array([gamma, gamma]),
        bounds=[(0.0, 1.0)] * row.size,
        method="highs",
    )
    if res.status != 0:  # pragma: no cover - the LP is always feasible and bounded
        raise RuntimeError(f"linprog failed at gamma={gamma}: {res.message}")
    return float(const + res.fun), res.x[: bins.n], res.x[bins.n :]


def lp_error(bins: GroupBins, gammas: np.ndarray) -> np.ndarray:
    """The LP's least error at every gamma, ``(G,)``. Arguments assumed checked."""
    return np.array([lp_thresholds(bins, float(g))[0] for g in gammas])


def fair_classification_front_lp(
    scores: np.ndarray,
    A: np.ndarray,
    gammas: np.ndarray,
    n_bins: int = 10,
    binning: str = "uniform",
) -> np.ndarray:
    """The exact error front of fair classification, ``(G,)``: at each gamma, the least error of
    a randomised group-aware classifier on the binned calibrated scores whose demographic-parity
    gap is at most gamma (accuracy = 1 - error).

    Args:
        scores: ``(N,)`` calibrated scores P(Y = 1 | x, a) in [0, 1].
        A: ``(N,)`` group labels in {0, 1}, both present.
        gammas: ``(G,)`` parity levels in [0, 1].
        n_bins: bins per group (>= 2; ignored by ``"exact"``).
        binning: ``"uniform"``, ``"quantile"`` or ``"exact"``.

    NaN policy: NaN or inf scores and gammas are refused (ValueError).

    >>> s = np.array([0.1, 0.3, 0.7, 0.9]); A = np.array([0, 0, 1, 1])
    >>> fair_classification_front_lp(s, A, [0.0, 1.0], n_bins=2).round(3).tolist()
    [0.4, 0.2]
    """
    owner = "fair_classification_front_lp"
    scores, A = check_scores_groups(owner, scores, A)
    g = check_gammas(owner, gammas)
    n_bins = check_int("n_bins", owner, n_bins, low=2)
    check_choice("binning", owner, binning, BINNINGS)
    return lp_error(bin_scores(scores, A, n_bins, binning), g)
