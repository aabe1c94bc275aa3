"""The 1-Wasserstein distance between two point clouds (uniform weights).

``exact``: the optimal-transport value ``min_T sum_ij T_ij |p_i - q_j|`` over couplings of the
two uniform measures (network simplex, POT ``ot.emd2``); O(m^3), capped at 3000 points a side.
``sliced``: the mean over ``n_proj`` random unit directions theta of the 1-D distance
``W1(theta # P, theta # Q) = int |F_P(t) - F_Q(t)| dt``; O(n_proj m log m). Each projection is
1-Lipschitz, so sliced W1 <= exact W1.
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from gnnclt._validate import check_seed
from paperkit import param_error
from paperkit.checks import check_array, check_choice, check_int, describe

__all__ = ["EXACT_MAX_POINTS", "w1_distance"]

#: The most points a side for ``method="exact"`` (the network simplex is cubic).
EXACT_MAX_POINTS = 3000
_OWNER = "w1_distance"


def _w1_1d(p: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Column-wise 1-D W1 of ``p`` ``(n, L)`` and ``q`` ``(m, L)``: ``int |F_P - F_Q| dt``."""
    n, m = p.shape[0], q.shape[0]
    allv = np.concatenate([p, q], axis=0)
    order = np.argsort(allv, axis=0, kind="stable")
    vals = np.take_along_axis(allv, order, axis=0)
    from_p = order < n
    cdf_p = np.cumsum(from_p, axis=0)[:-1] / n
    cdf_q = np.cumsum(~from_p, axis=0)[:-1] / m
    return (np.abs(cdf_p - cdf_q) * np.diff(vals, axis=0)).sum(axis=0)


def w1_distance(
    P: Any, Q: Any, method: str = "exact", n_proj: int = 200, seed: int | None = None
) -> float:
    """W1 between the empirical measures of the rows of ``P`` ``(n, d)`` and ``Q`` ``(m, d)``
    (Euclidean ground cost).

    Args:
        P, Q: point clouds with the same d; at most 3000 rows each for ``"exact"``.
        method: ``"exact"`` (POT network simplex) or ``"sliced"`` (a lower bound).
        n_proj: number of random directions for ``"sliced"``.
        seed: None or a non-negative integer (directions of ``"sliced"``).

    NaN or inf in ``P`` or ``Q`` raises ``ValueError``.

    >>> import numpy as np
    >>> P = np.array([[0.0, 0.0], [1.0, 0.0]])
    >>> round(w1_distance(P, P + [0.0, 2.0]), 12), w1_distance(P, P, method="sliced")
    (2.0, 0.0)
    """
    dims: dict[str, tuple[int, str]] = {}
    P = check_array("P", _OWNER, P, shape=(None, "d"), dims=dims).astype(np.float64)
    Q = check_array("Q", _OWNER, Q, shape=(None, "d"), dims=dims).astype(np.float64)
    method = check_choice("method", _OWNER, method, ("exact", "sliced"))
    n_proj = check_int("n_proj", _OWNER, n_proj, low=1, high=100_000)
    seed = check_seed(_OWNER, seed)
    if method == "exact":
        for name, X in (("P", P), ("Q", Q)):
            if X.shape[0] > EXACT_MAX_POINTS:
                raise param_error(
                    name,
                    _OWNER,
                    f"at most {EXACT_MAX_POINTS} points for method='exact' (use 'sliced')",
                    describe(X),
                )
        for backend in ("PYTORCH", "JAX", "TENSORFLOW", "CUPY"):  # numpy only: skip POT's
            os.environ.setdefault(f"POT_BACKEND_DISABLE_{backend}", "1")  # optional backends
        import ot
        from scipy.spatial.distance import cdist

        a = np.full(P.shape[0], 1.0 / P.shape[0])
        b = np.full(Q.shape[0], 1.0 / Q.shape[0])
        cost = cdist(P, Q)
        return float(max(ot.emd2(a, b, cost, numItermax=10_000_000), 0.0))
    rng = np.random.default_rng(seed)
    theta = rng.standard_normal((P.shape[1], n_proj))
    theta /= np.linalg.norm(theta, axis=0, keepdims=True)
    return float(_w1_1d(P @ theta, Q @ theta).mean())
