"""G-optimal (Kiefer–Wolfowitz) exploration design on the rows of the surrogate table Φ_k.

For a design ν on the rows φ_θ of Φ (M, d), Σ_ν = Σ_θ ν(θ) φ_θ φ_θᵀ and the leverage of a row is
φ_θᵀ Σ_ν⁻¹ φ_θ. By the Kiefer–Wolfowitz theorem the smallest possible maximum leverage is exactly
r = rank Φ. The Fedorov–Wynn (Frank–Wolfe) iteration moves mass onto the row of largest leverage
g_max with the exact line-search step α = (g_max/r − 1)/(g_max − 1); it is the exploration
distribution of the EXP2 base learner (the paper's Sec. 3 uses a misspecification-robust linear
bandit with such exploration).

When Φ does not span ℝ^d (e.g. few stored contexts), the design is computed in the row space of Φ
and the leverage uses the pseudo-inverse, so the target is r instead of d.
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array, check_int, param_error

__all__ = ["g_optimal_design", "max_leverage"]


def _row_space(Phi: np.ndarray) -> np.ndarray:
    """Coordinates of the rows of Φ in an orthonormal basis of its row space: (M, r)."""
    U, s, _ = np.linalg.svd(Phi, full_matrices=False)
    r = int(np.sum(s > 1e-10 * max(s[0], 1e-300))) if s.size else 0
    return U[:, :r] * s[:r]


def _leverages(X: np.ndarray, nu: np.ndarray) -> np.ndarray:
    S = X.T @ (nu[:, None] * X)
    return np.einsum("ij,ij->i", X @ np.linalg.inv(S), X)


def g_optimal_design(Phi: np.ndarray, n_iter: int = 200) -> np.ndarray:
    """An approximately G-optimal design ν (M,) on the rows of ``Phi`` (M, d).

    Starts from the uniform design and runs ``n_iter`` Fedorov–Wynn steps
    ν ← (1 − α) ν + α e_j, j = argmax_θ φ_θᵀ Σ_ν⁺ φ_θ, α = (g_max/r − 1)/(g_max − 1); stops early
    once g_max ≤ r (optimal). NaN/inf in ``Phi`` are refused.

    >>> nu = g_optimal_design(np.vstack([np.eye(3), np.ones((1, 3)) / 3]))
    >>> round(max_leverage(np.vstack([np.eye(3), np.ones((1, 3)) / 3]), nu), 3) <= 3.15
    True
    """
    Phi = check_array("Phi", "g_optimal_design", Phi, ndim=2)
    n_iter = check_int("n_iter", "g_optimal_design", n_iter, low=0, high=10**6)
    X = _row_space(np.asarray(Phi, dtype=float))
    M, r = X.shape
    nu = np.full(M, 1.0 / M)
    if r == 0:
        return nu
    for _ in range(n_iter):
        lev = _leverages(X, nu)
        j = int(np.argmax(lev))
        g = lev[j]
        if g <= r * (1 + 1e-9):
            break
        alpha = (g / r - 1.0) / (g - 1.0)
        nu *= 1.0 - alpha
        nu[j] += alpha
    return nu


def max_leverage(Phi: np.ndarray, nu: np.ndarray) -> float:
    """max_θ φ_θᵀ Σ_ν⁺ φ_θ: the quantity a G-optimal design makes equal to rank Φ.

    >>> max_leverage(np.eye(2), np.array([0.5, 0.5]))
    2.0
    """
    Phi = check_array("Phi", "max_leverage", Phi, ndim=2)
    nu = check_array("nu", "max_leverage", nu, shape=(Phi.shape[0],))
    if np.any(nu < 0) or abs(float(nu.sum()) - 1.0) > 1e-9:
        raise param_error("nu", "max_leverage", "a probability vector", "another vector")
    return float(np.max(_leverages(_row_space(np.asarray(Phi, dtype=float)), nu)))
