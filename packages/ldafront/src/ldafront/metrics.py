"""Loss, demographic-parity gap and the Fisher term of the frontier law (arXiv 2509.05627).

Notation (binary label Y, binary group A with p_a = P(A = a), predictor f(x, a) in (0, 1)):

- BCE: L(f) = E[-Y log f - (1 - Y) log(1 - f)];
- signed soft DP gap: D(f) = E[f | A = 1] - E[f | A = 0] = E[w_A f], w_1 = 1/p_1, w_0 = -1/p_0;
  the DP gap is Delta(f) = |D(f)|;
- Fisher term: V = E[w_A^2 eta (1 - eta)] = sum_a (1/p_a) E[eta (1 - eta) | A = a].
"""

from __future__ import annotations

import numpy as np

from ldafront._checks import check_groups, check_labels, check_scores, dp_weights
from paperkit import check_array, check_bool, check_real

__all__ = ["bce", "binary_entropy", "dp_gap", "fisher_term"]


def bce(scores: np.ndarray, y: np.ndarray, *, clip: bool = False) -> float:
    r"""Mean binary cross-entropy :math:`\frac1n\sum_i -y_i\log f_i - (1-y_i)\log(1-f_i)`.

    ``y`` may hold soft labels in [0, 1]: with the Bayes posterior eta it is the expected loss
    E[L | x, a] averaged over the sample. Equals ``sklearn.metrics.log_loss`` for 0/1 labels.
    NaN and inf are refused; scores must lie in (0, 1) unless ``clip=True``.

    >>> round(bce(np.array([0.8, 0.3]), np.array([1, 0])), 6)
    0.289909
    """
    dims: dict = {}
    f = check_scores("scores", "bce", scores, clip=check_bool("clip", "bce", clip), dims=dims)
    labels = check_labels("y", "bce", y, dims=dims)
    return float(np.mean(-labels * np.log(f) - (1.0 - labels) * np.log1p(-f)))


def dp_gap(scores: np.ndarray, A: np.ndarray, *, signed: bool = False) -> float:
    r"""Soft demographic-parity gap :math:`D(f) = \bar f_{A=1} - \bar f_{A=0}` (``signed=True``)
    or :math:`\Delta(f) = |D(f)|` (default).

    Scores may be any finite reals (the gap of a score is defined for any score); NaN and inf
    refused. ``A`` must be binary with both groups present.

    >>> dp_gap(np.array([0.9, 0.7, 0.2, 0.4]), np.array([1, 1, 0, 0]))
    0.5
    """
    dims: dict = {}
    f = check_array("scores", "dp_gap", scores, shape=("n",), dims=dims).astype(float)
    groups = check_groups("A", "dp_gap", A, dims=dims)
    gap = float(f[groups == 1].mean() - f[groups == 0].mean())
    return gap if check_bool("signed", "dp_gap", signed) else abs(gap)


def fisher_term(scores: np.ndarray, A: np.ndarray, *, clip: bool = False) -> float:
    r"""The Fisher term :math:`V = E[w_A^2\,\hat\eta(1-\hat\eta)]
    = \sum_a p_a^{-1} E[\hat\eta(1-\hat\eta)\mid A=a]` of calibrated scores eta-hat.

    V is the curvature of the loss along the DP direction at the unconstrained optimum: moving
    D by -t costs t^2 / (2V) to second order. NaN and inf refused; scores in (0, 1) unless
    ``clip=True``.

    >>> round(fisher_term(np.array([0.5, 0.5, 0.5, 0.5]), np.array([1, 0, 0, 0])), 6)
    1.333333
    """
    dims: dict = {}
    clip = check_bool("clip", "fisher_term", clip)
    f = check_scores("scores", "fisher_term", scores, clip=clip, dims=dims)
    groups = check_groups("A", "fisher_term", A, dims=dims)
    return float(np.mean(dp_weights(groups) ** 2 * f * (1.0 - f)))


def binary_entropy(p: float) -> float:
    """H(p) = -p log p - (1 - p) log(1 - p) in nats, the loss of the constant predictor p
    (0 at p in {0, 1}).

    >>> round(binary_entropy(0.5), 6)
    0.693147
    """
    p = check_real("p", "binary_entropy", p, low=0.0, high=1.0)
    if p in (0.0, 1.0):
        return 0.0
    return float(-p * np.log(p) - (1.0 - p) * np.log1p(-p))
