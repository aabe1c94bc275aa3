"""Post-processing of a front over gamma: both steps only make it tighter.

1. Cumulative minimum over increasing gamma: the feasible sets of MIFPO are nested
   (TV <= gamma implies TV <= gamma' for gamma' > gamma), so E(gamma) is nonincreasing.
2. Lower convex envelope over gamma: time-sharing between two representations (a coin picks
   which one encodes X, and the coin is part of Z) is a representation whose TV and E are both
   the mixtures, so E(gamma) is convex.
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array, param_error

__all__ = ["cumulative_min", "lower_convex_envelope"]


def cumulative_min(values: np.ndarray) -> np.ndarray:
    """Running minimum along increasing gamma, skipping NaN (a NaN stays NaN until a value).

    >>> cumulative_min(np.array([0.3, 0.35, np.nan, 0.2])).tolist()
    [0.3, 0.3, 0.3, 0.2]
    """
    out = np.array(values, dtype=float)
    best = np.inf
    for i, x in enumerate(out):
        if np.isfinite(x):
            best = min(best, x)
        out[i] = best if np.isfinite(best) else np.nan
    return out


def lower_convex_envelope(gammas: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The greatest convex function below the points (gamma_g, E_g), evaluated at every gamma_g.

    ``gammas`` ``(G,)`` strictly increasing; ``values`` ``(G,)``. NaN policy: NaN values are
    skipped by design (a failed solve), and gammas outside the range of the finite points get
    NaN; NaN or inf gammas and inf values are refused (ValueError).

    >>> lower_convex_envelope(np.array([0.0, 0.5, 1.0]), np.array([1.0, 0.9, 0.0])).tolist()
    [1.0, 0.5, 0.0]
    """
    owner = "lower_convex_envelope"
    g = check_array("gammas", owner, gammas, ndim=1).astype(float)
    if np.any(np.diff(g) <= 0):
        raise param_error("gammas", owner, "strictly increasing", "an unsorted array")
    e = check_array("values", owner, values, ndim=1, finite=False).astype(float)
    if e.shape != g.shape:
        raise param_error("values", owner, f"of shape {g.shape} (as gammas)", f"shape {e.shape}")
    if np.isinf(e).any():
        raise param_error("values", owner, "free of inf (NaN marks a missing value)", "inf")
    keep = np.isfinite(e)
    if not keep.any():
        return np.full_like(e, np.nan)
    hull: list[tuple[float, float]] = []
    for x, y in zip(g[keep], e[keep], strict=True):
        while len(hull) >= 2:
            (x0, y0), (x1, y1) = hull[-2], hull[-1]
            # drop the middle point when it lies on or above the chord from hull[-2] to (x, y)
            if (y1 - y0) * (x - x0) >= (y - y0) * (x1 - x0):
                hull.pop()
            else:
                break
        hull.append((float(x), float(y)))
    hx, hy = np.array(hull).T
    out = np.interp(g, hx, hy)
    out[(g < hx[0]) | (g > hx[-1])] = np.nan
    return out
