"""Realizable-statistic generators (paper, Sec. 6): the statistic lies in the linear-link class
by construction. ``seed`` draws the sample, ``w_seed`` the true parameters, so two calls with the
same ``w_seed`` share the model (train and fresh test points).
"""

from __future__ import annotations

import numpy as np
from scipy.special import expit, softmax

from paperkit import check_int, check_real

__all__ = [
    "make_misspecified_ranking",
    "make_multilabel_logistic",
    "make_sigmoid_linear",
    "make_softmax_linear",
    "make_subset_ranking",
    "true_weights",
]

MAX_SIZE = 10**8


def _sizes(owner: str, n: int, d: int, k: int = 1, n_name: str = "n") -> tuple[int, int]:
    n = check_int(n_name, owner, n, low=1, high=MAX_SIZE)
    d = check_int("d", owner, d, low=1, high=10**5)
    if n * d * k > MAX_SIZE:
        raise ValueError(
            f"The '{n_name}' parameter of {owner} must give at most {MAX_SIZE} entries "
            f"({n_name} * d * outputs); got {n * d * k}."
        )
    return n, d


def true_weights(d: int, k: int = 1, w_norm: float = 3.0, w_seed: int = 0) -> np.ndarray:
    """A Gaussian ``(d, k)`` matrix rescaled to Frobenius norm ``w_norm`` (seeded).

    >>> round(float(np.linalg.norm(true_weights(5, 1, 2.0))), 6)
    2.0
    """
    d = check_int("d", "true_weights", d, low=1, high=10**5)
    k = check_int("k", "true_weights", k, low=1, high=10**4)
    w_norm = check_real("w_norm", "true_weights", w_norm, low=0)
    w_seed = check_int("w_seed", "true_weights", w_seed, low=0)
    W = np.random.default_rng([w_seed, 7]).standard_normal((d, k))
    return W * (w_norm / np.linalg.norm(W))


def make_sigmoid_linear(n: int, d: int, w_norm: float = 3.0, seed: int = 0, w_seed: int = 0):
    """x ~ N(0, I_d), :math:`\\eta=\\sigma(w^{*\\top}x)`, y ~ Bernoulli(η).

    Returns ``(X, y, eta)``."""
    n, d = _sizes("make_sigmoid_linear", n, d)
    w = true_weights(d, 1, w_norm, check_int("w_seed", "make_sigmoid_linear", w_seed, low=0))[:, 0]
    rng = np.random.default_rng(check_int("seed", "make_sigmoid_linear", seed, low=0))
    X = rng.standard_normal((n, d))
    eta = expit(X @ w)
    return X, (rng.random(n) < eta).astype(np.int64), eta


def make_softmax_linear(
    n: int, d: int, K: int = 4, w_norm: float = 3.0, seed: int = 0, w_seed: int = 0
):
    """x ~ N(0, I_d), :math:`p=\\mathrm{softmax}(W^{*\\top}x)` with ‖W*‖_F = ``w_norm``,
    y ~ Categorical(p); returns ``(X, y, P)``."""
    K = check_int("K", "make_softmax_linear", K, low=2, high=10**4)
    n, d = _sizes("make_softmax_linear", n, d, K)
    W = true_weights(d, K, w_norm, check_int("w_seed", "make_softmax_linear", w_seed, low=0))
    rng = np.random.default_rng(check_int("seed", "make_softmax_linear", seed, low=0))
    X = rng.standard_normal((n, d))
    P = softmax(X @ W, axis=1)
    y = (rng.random((n, 1)) > np.cumsum(P, axis=1)).sum(axis=1)
    return X, np.minimum(y, K - 1), P


def make_multilabel_logistic(
    n: int, d: int, L: int = 6, w_norm: float = 3.0, seed: int = 0, w_seed: int = 0
):
    """L independent labels :math:`Y_j\\sim\\mathrm{Bernoulli}(\\sigma(w_j^{*\\top}x))`, each
    ‖w_j*‖ = ``w_norm``; returns ``(X, Y, M)`` with the marginals M."""
    L = check_int("L", "make_multilabel_logistic", L, low=1, high=10**4)
    n, d = _sizes("make_multilabel_logistic", n, d, L)
    w_seed = check_int("w_seed", "make_multilabel_logistic", w_seed, low=0)
    W = np.column_stack([true_weights(d, 1, w_norm, w_seed * 1000 + j)[:, 0] for j in range(L)])
    rng = np.random.default_rng(check_int("seed", "make_multilabel_logistic", seed, low=0))
    X = rng.standard_normal((n, d))
    M = expit(X @ W)
    return X, (rng.random(M.shape) < M).astype(np.int64), M


def make_subset_ranking(n_queries: int, L: int = 8, d: int = 10, seed: int = 0, w_seed: int = 0):
    """Realizable subset ranking: :math:`x_{q,j}\\sim U[0,1]^d`, :math:`w^*\\ge0` with
    ‖w*‖₁ = 1/L, :math:`T_j=w^{*\\top}x_{q,j}`; at most one relevant document per query (doc j
    gets r_j = 2 with probability T_j, none with 1 − ΣT_j), so :math:`G(r_j)/z(r)=1\\{j\\text{
    relevant}\\}` and T is exactly linear. Returns ``(Xq, R, T)``."""
    L = check_int("L", "make_subset_ranking", L, low=1, high=10**4)
    n, d = _sizes("make_subset_ranking", n_queries, d, L, "n_queries")
    w = np.abs(true_weights(d, 1, 1.0, check_int("w_seed", "make_subset_ranking", w_seed, low=0)))
    w = w[:, 0] / (L * w.sum())
    rng = np.random.default_rng(check_int("seed", "make_subset_ranking", seed, low=0))
    Xq = rng.random((n, L, d))
    T = Xq @ w
    cum = np.cumsum(T, axis=1)
    pick = (rng.random((n, 1)) > cum).sum(axis=1)  # L means "no relevant document"
    R = np.zeros((n, L), dtype=np.int64)
    hit = pick < L
    R[np.nonzero(hit)[0], pick[hit]] = 2
    return Xq, R, T


def make_misspecified_ranking(
    n_queries: int, L: int = 8, d: int = 10, seed: int = 0, w_seed: int = 0
):
    """A misspecified stress stream: independent graded :math:`r_j\\sim\\mathrm{Binomial}(2,
    \\sigma(a^\\top x_{q,j}-1))` with x ~ N(0, I_d), ‖a‖ = 2; the normalised gains are not linear in
    x. Returns ``(Xq, R)``."""
    L = check_int("L", "make_misspecified_ranking", L, low=1, high=10**4)
    n, d = _sizes("make_misspecified_ranking", n_queries, d, L, "n_queries")
    a = true_weights(d, 1, 2.0, check_int("w_seed", "make_misspecified_ranking", w_seed, low=0))
    rng = np.random.default_rng(check_int("seed", "make_misspecified_ranking", seed, low=0))
    Xq = rng.standard_normal((n, L, d))
    s = expit(Xq @ a[:, 0] - 1.0)
    return Xq, rng.binomial(2, s).astype(np.int64)
