"""Binned calibrated scores of the two groups: the input of MIFPO.

The optimal representation factors through the calibrated scores c_a(x) = P(Y = 1 | X = x, A = a)
(the paper's structural result), so each group is summarised by score levels and their masses:
group 1 (A = 1) by levels u_i with masses U_i (sum U_i = 1), group 0 by levels v_j with masses V_j,
and alpha = P(A = 1).

Binning strategies (the official code's defaults, 10 bins):

- ``"uniform"``: equal-width bins over the group's score range (``numpy.histogram``);
- ``"quantile"``: equal-frequency bins (edges at the group's score quantiles);
- ``"exact"``: one level per distinct score.

The level of a bin is the weighted mean of the calibrated scores in it, which is exactly
P(Y = 1 | bin, A = a); empty bins are dropped.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from fairpareto.checks import check_scores_groups, check_weights
from paperkit import check_choice, check_int

__all__ = ["BINNINGS", "GroupBins", "bin_scores"]

#: The binning strategies.
BINNINGS = ("uniform", "quantile", "exact")


@dataclass(frozen=True)
class GroupBins:
    """Score levels and masses of the two groups.

    Attributes:
        u: levels of group 1 (A = 1), ``(n,)`` in [0, 1].
        U: masses of group 1's levels, ``(n,)``, summing to 1.
        v: levels of group 0, ``(m,)``.
        V: masses of group 0's levels, ``(m,)``, summing to 1.
        alpha: P(A = 1).
    """

    u: np.ndarray
    U: np.ndarray
    v: np.ndarray
    V: np.ndarray
    alpha: float

    @property
    def n(self) -> int:
        return int(self.u.shape[0])

    @property
    def m(self) -> int:
        return int(self.v.shape[0])

    def swapped(self) -> GroupBins:
        """The same instance with the group labels exchanged (alpha becomes 1 - alpha)."""
        return GroupBins(self.v, self.V, self.u, self.U, 1.0 - self.alpha)


def _group_levels(
    s: np.ndarray, w: np.ndarray, n_bins: int, binning: str
) -> tuple[np.ndarray, np.ndarray]:
    if binning == "exact":
        levels, index = np.unique(s, return_inverse=True)
    else:
        if binning == "uniform":
            edges = np.histogram_bin_edges(s, bins=n_bins)
        else:
            edges = np.unique(np.quantile(s, np.linspace(0.0, 1.0, n_bins + 1)))
        # a group with a single distinct score has one quantile edge: one bin
        index = np.clip(np.searchsorted(edges, s, side="right") - 1, 0, max(len(edges) - 2, 0))
        levels = None
    mass = np.bincount(index, weights=w)
    keep = mass > 0
    if levels is None:
        levels = np.bincount(index, weights=w * s)[keep] / mass[keep]
    else:
        levels = levels[keep]
    mass = mass[keep]
    return np.clip(levels, 0.0, 1.0), mass / mass.sum()


def bin_scores(
    scores: np.ndarray,
    A: np.ndarray,
    n_bins: int = 10,
    binning: str = "uniform",
    sample_weight: np.ndarray | None = None,
) -> GroupBins:
    """Bin the calibrated scores of each group; alpha is the (weighted) share of A = 1.

    Args:
        scores: ``(N,)`` calibrated scores in [0, 1].
        A: ``(N,)`` groups in {0, 1}, both present.
        n_bins: bins per group (>= 2; ignored by ``"exact"``).
        binning: ``"uniform"``, ``"quantile"`` or ``"exact"``.
        sample_weight: ``(N,)`` nonnegative weights, positive on both groups, or None.

    NaN policy: NaN or inf scores, groups or weights are refused (ValueError).

    >>> b = bin_scores(np.array([0.1, 0.2, 0.8, 0.9]), np.array([0, 0, 1, 1]), n_bins=2)
    >>> b.u.tolist(), b.U.tolist(), b.alpha
    ([0.8, 0.9], [0.5, 0.5], 0.5)
    """
    owner = "bin_scores"
    scores, A = check_scores_groups(owner, scores, A)
    n_bins = check_int("n_bins", owner, n_bins, low=2)
    check_choice("binning", owner, binning, BINNINGS)
    w = check_weights(owner, sample_weight, A)
    one, zero = A == 1, A == 0
    u, U = _group_levels(scores[one], w[one], n_bins, binning)
    v, V = _group_levels(scores[zero], w[zero], n_bins, binning)
    alpha = float(w[one].sum() / w.sum())
    return GroupBins(u, U, v, V, alpha)
