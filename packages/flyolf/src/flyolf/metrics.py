r"""Sparseness and separation metrics of KC (or PN) response matrices.

A response matrix holds one row per odor presentation and one column per neuron (spike counts).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, param_error

__all__ = ["coding_level", "lifetime_sparseness", "noise_robustness", "pattern_separation"]


def _responses(name: str, owner: str, x: Any, dims: dict | None = None) -> np.ndarray:
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    x = check_array(name, owner, x, shape=("B", "N"), dims=dims)
    if (x < 0).any():
        raise param_error(name, owner, "non-negative (spike counts)", "negative entries")
    return x.astype(np.float64)


def coding_level(counts: Any) -> float:
    r"""The mean fraction of neurons that spike at least once per odor,
    :math:`\frac{1}{BN}\sum_{b,k} 1[c_{bk} > 0]`, for counts (B, N).

    NaN policy: NaN, inf and negative counts are refused (ValueError).

    >>> coding_level([[0, 2, 0, 1], [0, 0, 0, 3]])
    0.375
    """
    c = _responses("counts", "coding_level", counts)
    return float((c > 0).mean())


def lifetime_sparseness(counts: Any) -> float:
    r"""Treves-Rolls lifetime sparseness, averaged over neurons that respond to some odor:

    .. math:: S_k = \frac{1 - (\frac1B\sum_b r_{bk})^2 / (\frac1B\sum_b r_{bk}^2)}{1 - 1/B},

    0 for a neuron that responds equally to every odor, 1 for one that responds to a single
    odor. Counts (B, N), B >= 2; 0.0 when no neuron responds.

    NaN policy: NaN, inf and negative counts are refused (ValueError).

    >>> lifetime_sparseness([[1, 3], [1, 0], [1, 0]])  # (0 + 1) / 2
    0.5
    """
    owner = "lifetime_sparseness"
    c = _responses("counts", owner, counts)
    if c.shape[0] < 2:
        raise param_error("counts", owner, "at least 2 odors (rows)", f"{c.shape[0]} row")
    active = c.sum(axis=0) > 0
    if not active.any():
        return 0.0
    r = c[:, active]
    B = r.shape[0]
    s = (1 - r.mean(axis=0) ** 2 / (r**2).mean(axis=0)) / (1 - 1 / B)
    return float(s.mean())


def _row_correlations(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of every row of a with every row of b; rows without variance -> 0."""
    za = a - a.mean(axis=1, keepdims=True)
    zb = b - b.mean(axis=1, keepdims=True)
    na, nb = np.linalg.norm(za, axis=1), np.linalg.norm(zb, axis=1)
    denom = np.outer(na, nb)
    with np.errstate(invalid="ignore", divide="ignore"):
        corr = np.where(denom > 0, (za @ zb.T) / np.where(denom > 0, denom, 1.0), 0.0)
    return corr


def pattern_separation(responses: Any) -> float:
    r"""Mean pairwise Pearson correlation between the responses to different odors (rows of
    (B, N), B >= 2): :math:`\frac{2}{B(B-1)}\sum_{i<j}\rho(x_i, x_j)`. Lower means better
    separated. A row without variance counts as uncorrelated (0).

    NaN policy: NaN, inf and negative entries are refused (ValueError).

    >>> pattern_separation([[1, 0, 1, 0], [1, 0, 1, 0]])  # identical codes
    1.0
    """
    owner = "pattern_separation"
    x = _responses("responses", owner, responses)
    if x.shape[0] < 2:
        raise param_error("responses", owner, "at least 2 odors (rows)", f"{x.shape[0]} row")
    corr = _row_correlations(x, x)
    return float(corr[np.triu_indices(x.shape[0], 1)].mean())


def noise_robustness(clean: Any, noisy: Any) -> float:
    r"""Mean Pearson correlation between the clean and the noisy response to the same odor,
    :math:`\frac1B\sum_b \rho(x_b, x'_b)`, for two (B, N) matrices (row b: the same odor).

    NaN policy: NaN, inf and negative entries are refused (ValueError).

    >>> round(noise_robustness([[1, 0, 2]], [[2, 0, 4]]), 12)
    1.0
    """
    owner = "noise_robustness"
    dims: dict = {}
    a = _responses("clean", owner, clean, dims)
    b = _responses("noisy", owner, noisy, dims)
    return float(np.diag(_row_correlations(a, b)).mean())
