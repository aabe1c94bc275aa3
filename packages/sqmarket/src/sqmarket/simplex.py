"""Euclidean projection onto the probability simplex, the price map of the quadratic markets.

:func:`project_simplex` is the sort-based O(n log n) algorithm of Duchi, Shalev-Shwartz, Singer
and Chandra (2008): with ``u`` the entries of ``v`` sorted in decreasing order,

.. math::

    \\rho = \\max\\{j : u_j - (\\textstyle\\sum_{i \\le j} u_i - 1)/j > 0\\},\\qquad
    \\tau = (\\textstyle\\sum_{i \\le \\rho} u_i - 1)/\\rho,\\qquad
    \\Pi_\\Delta(v) = \\max(v - \\tau, 0).

It is the price map of the quadratic DCFMM (:math:`p(q) = \\Pi_\\Delta(q/b)`) and the projection
step of SQPM's update (:math:`p_{t+1} = \\Pi_\\Delta(p_t + r_t/b)`). Since
:math:`\\Pi_\\Delta(v + c\\mathbf 1) = \\Pi_\\Delta(v)`, adding the same amount to every entry
changes nothing.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import Described, check_array, describe, param_error

__all__ = ["SIMPLEX_TOL", "check_distribution", "project_simplex"]

#: Tolerance of "is a distribution": entries >= -tol and |sum - 1| <= tol.
SIMPLEX_TOL = 1e-9


def _project_rows(v: np.ndarray) -> np.ndarray:
    """The projection along the last axis, without checks (any leading axes)."""
    n = v.shape[-1]
    u = -np.sort(-v, axis=-1)
    css = np.cumsum(u, axis=-1) - 1.0
    cond = u - css / np.arange(1, n + 1) > 0
    rho = cond.sum(axis=-1, keepdims=True)  # the condition holds on a prefix, never empty
    tau = np.take_along_axis(css, rho - 1, axis=-1) / rho
    return np.maximum(v - tau, 0.0)


def project_simplex(v: Any) -> np.ndarray:
    """Euclidean projection of ``v`` onto the probability simplex, along the last axis.

    :math:`\\Pi_\\Delta(v) = \\arg\\min_{x \\ge 0,\\ \\sum x = 1} \\|x - v\\|_2`, computed by the
    sort-based algorithm (Duchi et al., 2008) in O(n log n) per row.

    Args:
        v: real array ``(..., n)``, ``n >= 1``; every row is projected on its own.

    Returns:
        float64 array of the same shape; each row is non-negative and sums to 1.

    NaN policy: NaN and inf are refused (ValueError naming ``v``).

    >>> project_simplex([1.0, 0.2, 0.6]).round(12).tolist()
    [0.7, 0.0, 0.3]
    >>> project_simplex([[2.0, 0.0], [0.3, 0.7]]).tolist()
    [[1.0, 0.0], [0.3, 0.7]]
    """
    v = check_array("v", "project_simplex", v)
    if v.ndim == 0:
        raise param_error("v", "project_simplex", "an array with at least one axis", describe(v))
    return _project_rows(v.astype(np.float64, copy=False))


def check_distribution(name: str, owner: str, value: Any, n: int | None = None) -> np.ndarray:
    """``value`` as a float64 vector in the simplex (entries >= -tol, sum within tol of 1, tol =
    :data:`SIMPLEX_TOL`), of length ``n`` when given; tiny negative entries are set to 0."""
    shape = (n,) if n is not None else None
    x = check_array(name, owner, value, ndim=1, shape=shape).astype(np.float64)
    if x.min() < -SIMPLEX_TOL or abs(x.sum() - 1.0) > SIMPLEX_TOL:
        raise param_error(
            name,
            owner,
            f"a probability distribution (entries >= 0, summing to 1 within {SIMPLEX_TOL:g})",
            Described(f"entries in [{x.min():.3g}, {x.max():.3g}] summing to {x.sum():.12g}"),
        )
    return np.maximum(x, 0.0)
