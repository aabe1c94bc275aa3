"""Sampling a CSBM graph and its features in O(n nu) time and memory (never an n x n array).

Per block pair (c, c') the number of edges is drawn exactly, ``m ~ Binomial(N_cc', p_cc')`` with
``p_cc' = nu B_cc' / n`` and ``N_cc' = n_c n_c'`` (``n_c (n_c - 1) / 2`` when c = c'), and then
``m`` distinct pairs are drawn uniformly (uniform pairs, de-duplicated, topped up until ``m`` are
distinct; self-loops never drawn). A uniform ``m``-subset with a binomial ``m`` is exactly the
independent-Bernoulli edge model of the paper's CSBM.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from gnnclt._validate import check_params, check_seed
from gnnclt.params import CSBMParams
from paperkit import param_error
from paperkit.checks import check_int, check_memory, check_real

__all__ = ["sample_csbm", "sqrt_psd"]

_OWNER = "sample_csbm"


def sqrt_psd(S: np.ndarray) -> np.ndarray:
    """The symmetric square root of a PSD matrix (negative rounding eigenvalues clipped)."""
    w, V = np.linalg.eigh((S + S.T) / 2)
    return (V * np.sqrt(np.clip(w, 0, None))) @ V.T


def _sorted_unique(keys: np.ndarray) -> np.ndarray:
    """Sorted distinct values (sort + mask: far faster than ``np.unique`` on large int arrays)."""
    keys = np.sort(keys)
    keep = np.ones(keys.size, dtype=bool)
    keep[1:] = keys[1:] != keys[:-1]
    return keys[keep]


def _distinct_pairs(
    rng: np.random.Generator, na: int, nb: int | None, m: int
) -> tuple[np.ndarray, np.ndarray]:
    """``m`` distinct uniform pairs of local indices: ``(i, j)`` in ``[0, na) x [0, nb)``, or,
    when ``nb`` is None, unordered pairs ``i < j`` of ``[0, na)``.

    Pairs are drawn uniformly and repeats (and self-pairs) are dropped until ``m`` are distinct:
    the sequential draw of a uniform ``m``-subset, batched (extras are kept in draw order).
    """
    width = na if nb is None else nb

    def draw(count: int) -> np.ndarray:
        i = rng.integers(0, na, count, dtype=np.int64)
        j = rng.integers(0, width, count, dtype=np.int64)
        if nb is None:
            keep = i != j
            i, j = np.minimum(i[keep], j[keep]), np.maximum(i[keep], j[keep])
        return i * width + j

    base = _sorted_unique(draw(m))[:m]  # the first batch: m draws, so at most m distinct
    added = np.empty(0, dtype=np.int64)  # the top-ups, few: kept apart so base is sorted once
    while base.size + added.size < m:
        need = m - base.size - added.size
        extra = draw(2 * need + 8)
        pos = np.minimum(np.searchsorted(base, extra), max(base.size - 1, 0))
        fresh = (base[pos] != extra) if base.size else np.ones(extra.size, dtype=bool)
        extra = extra[fresh & ~np.isin(extra, added)]
        _, first = np.unique(extra, return_index=True)  # small: repeats among the extras
        added = np.sort(np.concatenate([added, extra[np.sort(first)][:need]]))
    keys = np.concatenate([base, added])
    return keys // width, keys % width


def sample_csbm(
    params: CSBMParams, n: int, nu: float, seed: int | None = None
) -> tuple[sp.csr_matrix, np.ndarray, np.ndarray]:
    """Draw ``(A, X, z)`` from CSBM(pi, B, U, Sigma) with ``n`` nodes and degree scale ``nu``.

    ``z_i ~ Cat(pi)`` i.i.d.; ``A`` symmetric, zero diagonal, ``A_ij ~ Bernoulli(nu B_{z_i z_j}
    / n)`` independent for i < j; ``x_i = mu_{z_i} + Sigma^{1/2} xi_i``. Cost O(n nu + n d^2).

    Args:
        params: the model.
        n: number of nodes (>= 2).
        nu: degree scale, ``0 < nu`` with ``nu * max(B) < n`` (so every probability is < 1).
        seed: None or a non-negative integer; the same seed gives the same draw.

    Returns:
        ``A`` (scipy CSR ``(n, n)``, float64 ones), ``X`` ``(n, d)`` float64, ``z`` ``(n,)`` int64.

    NaN or inf ``nu`` raises ``ValueError``.

    >>> p = CSBMParams([0.5, 0.5], [[2.0, 1.0], [1.0, 2.0]], [[1.0], [-1.0]], [[0.25]])
    >>> A, X, z = sample_csbm(p, 200, 10.0, seed=0)
    >>> A.shape, X.shape, (A != A.T).nnz, bool(A.diagonal().any())
    ((200, 200), (200, 1), 0, False)
    """
    params = check_params(_OWNER, params)
    n = check_int("n", _OWNER, n, low=2)
    nu = check_real("nu", _OWNER, nu, low=0, low_open=True)
    seed = check_seed(_OWNER, seed)
    bmax = float(params.B.max())
    if nu * bmax >= n:
        raise param_error("nu", _OWNER, f"such that nu * max(B) < n = {n}", nu)
    edges = nu * n * float(params.pi @ params.B @ params.pi) / 2
    check_memory("n", _OWNER, n, 8 * (6 * edges + n * (params.d + 2)))
    rng = np.random.default_rng(seed)
    z = rng.choice(params.K, size=n, p=params.pi).astype(np.int64)
    members = [np.flatnonzero(z == c) for c in range(params.K)]
    rows, cols = [], []
    for c in range(params.K):
        for c2 in range(c, params.K):
            p = nu * params.B[c, c2] / n
            a, b = members[c], members[c2]
            pairs = len(a) * (len(a) - 1) // 2 if c == c2 else len(a) * len(b)
            if p == 0 or pairs == 0:
                continue
            m = int(rng.binomial(pairs, p))
            i, j = _distinct_pairs(rng, len(a), None if c == c2 else len(b), m)
            rows.append(a[i])
            cols.append((a if c == c2 else b)[j])
    r = np.concatenate(rows) if rows else np.empty(0, np.int64)
    q = np.concatenate(cols) if cols else np.empty(0, np.int64)
    data = np.ones(2 * r.size)
    coo = sp.coo_matrix((data, (np.concatenate([r, q]), np.concatenate([q, r]))), shape=(n, n))
    A = coo.tocsr()
    X = params.U[z] + rng.standard_normal((n, params.d)) @ sqrt_psd(params.Sigma)
    return A, X, z
