"""The empirical frontier of a sweep of trained models: the ground truth of the reproduction
(the paper's expensive baseline: the frontier of big models, traced by a lambda sweep)."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, param_error

__all__ = ["empirical_frontier"]


def _lower_hull(points: np.ndarray) -> np.ndarray:
    """The lower convex hull of 2-D points sorted by x (Andrew's monotone chain)."""
    hull: list[np.ndarray] = []
    for p in points:
        while len(hull) >= 2:
            (x1, y1), (x2, y2) = hull[-2], hull[-1]
            if (x2 - x1) * (p[1] - y1) - (y2 - y1) * (p[0] - x1) <= 0:
                hull.pop()
            else:
                break
        hull.append(p)
    return np.array(hull)


def empirical_frontier(dps: Any, losses: Any, deltas: Any) -> np.ndarray:
    r"""The frontier of a set of models with DP gaps ``dps`` and losses ``losses`` (``(m,)``):
    at each delta, the least loss over convex combinations (randomised choice between two
    models) with gap at most delta, :math:`\min\{L : (\Delta, L) \in \mathrm{conv}\}`, made
    nonincreasing in delta. NaN where delta is below every model's gap. NaN and inf refused.

    >>> empirical_frontier([0.2, 0.1, 0.0], [0.50, 0.51, 0.55], [0.0, 0.05, 0.15, 0.3])
    array([0.55 , 0.53 , 0.505, 0.5  ])
    """
    owner = "empirical_frontier"
    dims: dict = {}
    d = check_array("dps", owner, dps, shape=("m",), dims=dims).astype(float)
    L = check_array("losses", owner, losses, shape=("m",), dims=dims).astype(float)
    grid = check_array("deltas", owner, deltas, ndim=1).astype(float)
    if d.min() < 0:
        raise param_error("dps", owner, "nonnegative", float(d.min()))
    order = np.lexsort((L, d))
    pts = np.column_stack([d[order], L[order]])
    # keep, per gap, the best loss reachable at that gap or below (a running minimum)
    pts[:, 1] = np.minimum.accumulate(pts[:, 1])
    hull = _lower_hull(pts)
    out = np.interp(grid, hull[:, 0], hull[:, 1], left=np.nan, right=hull[-1, 1])
    return out
