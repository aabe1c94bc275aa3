"""The CLT experiment: simulate CSBM graphs, embed, and compare with the limits.

For every seed and ``nu`` one graph is drawn (:func:`gnnclt.sample_csbm`); ``A^k X`` is built by
repeated sparse mat-vecs for k = 1..max(ks), ``h = A^k X / nu^k``. Per ``(k, nu)`` (means over
seeds):

* ``w1_centered``: exact (or sliced) W1 between ``sqrt(nu) (h_i - hbar_{z_i})`` on ``n_points``
  random nodes and a draw of the centred limit ``sum_c pi_c N(0, Gamma^{(k)}_c)`` with the same
  labels (stratified: the label noise of the subsample is not counted);
* ``w1_floor``: W1 between two such independent draws of the limit (the finite-sample floor);
* ``w1_uncentered``: W1 between ``h_i`` and the uncentred limit ``N(m^{(k)}_c, Gamma_c / nu)``
  at the realised proportions ``n_c / n`` (at pi the O(n^{-1/2}) proportion noise, amplified by
  M^k, would dominate once the Gaussians are narrow), label-matched likewise;
* ``mean_err``: ``max_c |hbar_c - mhat_c| / max_c |mhat_c|`` with ``mhat = M^k U`` at the realised
  proportions ``n_c / n``; ``cov_err``: ``max_c |Chat_c - Gamma_c|_F / |Gamma_c|_F`` for the
  empirical covariance ``Chat_c`` of ``sqrt(nu) (h_i - hbar_c)`` (Gamma at ``n_c / n`` too);
* ``collapse``: :func:`gnnclt.collapse_ratio` of the empirical class means; ``collapse_limit``:
  of ``M^k U``;
* ``acc_emb``: logistic regression (cross-entropy) trained on ``(h_i, z_i)`` of a random half of
  the nodes (at most ``n_train``), tested on the other half; ``acc_mixture``: the same trained on
  as many draws of the uncentred limit and tested on fresh draws; ``acc_transfer``: the
  mixture-trained model tested on the embeddings; ``weight_gap``: Frobenius distance of the two
  models' coefficient matrices, each scaled to unit norm; ``acc_bayes``: Monte Carlo accuracy of
  the Bayes (QDA) rule of the limit mixture; ``acc_raw``: logistic regression on the raw
  features X (the k = 0 baseline).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegression

from gnnclt._validate import check_params, check_seed
from gnnclt.limits import collapse_ratio, limit_covariances, limit_means, limit_mixture
from gnnclt.params import CSBMParams
from gnnclt.sampling import sample_csbm
from gnnclt.wasserstein import EXACT_MAX_POINTS, w1_distance
from paperkit import param_error, progress
from paperkit.checks import check_bool, check_choice, check_int, check_memory, check_real

__all__ = ["COLUMNS", "clt_experiment"]

#: The columns of :func:`clt_experiment`'s table, in order.
COLUMNS = (
    "k",
    "nu",
    "w1_centered",
    "w1_floor",
    "w1_uncentered",
    "mean_err",
    "cov_err",
    "collapse",
    "collapse_limit",
    "acc_emb",
    "acc_mixture",
    "acc_transfer",
    "acc_bayes",
    "acc_raw",
    "weight_gap",
    "seeds",
)
_OWNER = "clt_experiment"


def _logreg(Y: np.ndarray, z: np.ndarray) -> LogisticRegression:
    return LogisticRegression(C=1.0, max_iter=2000).fit(Y, z)


def _unit(W: np.ndarray) -> np.ndarray:
    return W / max(np.linalg.norm(W), 1e-300)


def _class_stats(
    h: np.ndarray, z: np.ndarray, K: int, nu: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class means ``hbar`` (K, d), centred scaled rows ``sqrt(nu)(h - hbar_z)``, covariances."""
    counts = np.bincount(z, minlength=K)
    hbar = np.zeros((K, h.shape[1]))
    np.add.at(hbar, z, h)
    hbar /= np.maximum(counts, 1)[:, None]
    cent = np.sqrt(nu) * (h - hbar[z])
    covs = np.stack([cent[z == c].T @ cent[z == c] / max(counts[c] - 1, 1) for c in range(K)])
    return hbar, cent, covs


def _one_k(
    params: CSBMParams,
    k: int,
    nu: float,
    h: np.ndarray,
    z: np.ndarray,
    X: np.ndarray,
    split: tuple[np.ndarray, np.ndarray],
    rng: np.random.Generator,
    n_points: int,
    method: str,
) -> dict[str, Any]:
    K = params.K
    p_hat = params.with_pi(np.bincount(z, minlength=K) / len(z))
    present = np.bincount(z, minlength=K) > 1
    hbar, cent, covs = _class_stats(h, z, K, nu)
    m_hat = limit_means(p_hat, k)
    g_hat = limit_covariances(p_hat, k)
    mean_err = (
        np.linalg.norm(hbar - m_hat, axis=1)[present].max() / np.linalg.norm(m_hat, axis=1).max()
    )
    cov_err = max(
        np.linalg.norm(covs[c] - g_hat[c]) / np.linalg.norm(g_hat[c])
        for c in range(K)
        if present[c]
    )
    idx = rng.choice(len(z), size=min(n_points, len(z)), replace=False)
    lab = z[idx]
    centred = limit_mixture(params, k)
    uncentred = limit_mixture(params, k, nu=nu, centered=False)
    Y1, _ = centred.sample(len(idx), rng, labels=lab)
    Y2, _ = centred.sample(len(idx), rng, labels=lab)
    at_hat = limit_mixture(p_hat, k, nu=nu, centered=False)  # means at the realised n_c / n
    Yu, _ = at_hat.sample(len(idx), rng, labels=lab)
    w1 = {"method": method, "seed": int(rng.integers(2**31))}
    train, test = split
    emb = _logreg(h[train], z[train])
    Ym, zm = uncentred.sample(len(train), rng)
    Yt, zt = uncentred.sample(len(test), rng)
    mix = _logreg(Ym, zm)
    same = list(emb.classes_) == list(mix.classes_)
    return {
        "k": k,
        "nu": nu,
        "w1_centered": w1_distance(cent[idx], Y1, **w1),
        "w1_floor": w1_distance(Y2, Y1, **w1),
        "w1_uncentered": w1_distance(h[idx], Yu, **w1),
        "mean_err": float(mean_err),
        "cov_err": float(cov_err),
        "collapse": collapse_ratio(hbar[present]),
        "collapse_limit": collapse_ratio(limit_means(params, k)),
        "acc_emb": float(emb.score(h[test], z[test])),
        "acc_mixture": float(mix.score(Yt, zt)),
        "acc_transfer": float(mix.score(h[test], z[test])),
        "acc_bayes": uncentred.bayes_accuracy(20_000, rng),
        "acc_raw": float(_logreg(X[train], z[train]).score(X[test], z[test])),
        "weight_gap": float(np.linalg.norm(_unit(emb.coef_) - _unit(mix.coef_)))
        if same
        else float("nan"),
    }


def clt_experiment(
    params: CSBMParams,
    n: int,
    nus: Sequence[float],
    ks: Sequence[int],
    seeds: int = 3,
    *,
    n_points: int = 2000,
    n_train: int = 10_000,
    method: str = "exact",
    seed: int = 0,
    show_progress: bool = False,
) -> pd.DataFrame:
    """Simulate and compare with the limits over ``nus`` x ``ks`` (see the module docstring).

    Args:
        params: the CSBM. n: nodes per graph.
        nus: degree scales (each ``> 0`` with ``nu max(B) < n``).
        ks: numbers of layers (each ``>= 1``).
        seeds: graphs per ``nu`` (results averaged). n_points: nodes subsampled for W1 (at most
            3000 for ``method="exact"``). n_train: most training (and test) nodes of the
            logistic regressions. method: ``"exact"`` or ``"sliced"`` W1. seed: base seed.
        show_progress: a progress bar over the graphs.

    Returns:
        A DataFrame with :data:`COLUMNS`, one row per ``(k, nu)``, sorted by k then nu.

    NaN or inf in ``nus`` raises ``ValueError``.
    """
    params = check_params(_OWNER, params)
    n = check_int("n", _OWNER, n, low=20)
    if isinstance(nus, (str, bytes)) or not isinstance(nus, (Sequence, np.ndarray)) or not len(nus):
        raise param_error("nus", _OWNER, "a non-empty sequence of numbers", nus, cls=TypeError)
    nus = [check_real("nus", _OWNER, v, low=0, low_open=True) for v in nus]
    if max(nus) * float(params.B.max()) >= n:
        raise param_error("nus", _OWNER, f"such that nu * max(B) < n = {n}", nus)
    if isinstance(ks, (str, bytes)) or not isinstance(ks, (Sequence, np.ndarray)) or not len(ks):
        raise param_error("ks", _OWNER, "a non-empty sequence of integers", ks, cls=TypeError)
    ks = sorted({check_int("ks", _OWNER, k, low=1, high=64) for k in ks})
    seeds = check_int("seeds", _OWNER, seeds, low=1, high=1000)
    n_points = check_int("n_points", _OWNER, n_points, low=10, high=10**6)
    n_train = check_int("n_train", _OWNER, n_train, low=10)
    method = check_choice("method", _OWNER, method, ("exact", "sliced"))
    if method == "exact" and n_points > EXACT_MAX_POINTS:
        raise param_error("n_points", _OWNER, f"<= {EXACT_MAX_POINTS} for exact W1", n_points)
    seed = check_seed(_OWNER, seed)
    show_progress = check_bool("show_progress", _OWNER, show_progress)
    edges = max(nus) * n * float(params.pi @ params.B @ params.pi) / 2
    check_memory("n", _OWNER, n, 8 * (6 * edges + n * (params.d * (len(ks) + 3) + 2)))
    rows = []
    jobs = [(s, nu) for s in range(seeds) for nu in nus]
    for s, nu in progress(jobs, "CSBM graphs", disable=None if show_progress else True):
        rng = np.random.default_rng([seed or 0, s, int(round(nu * 1000))])
        A, X, z = sample_csbm(params, n, nu, seed=int(rng.integers(2**31)))
        order = rng.permutation(n)
        half = min(n // 2, n_train)
        split = (order[:half], order[half : 2 * half])
        H = X
        for k in range(1, ks[-1] + 1):
            H = np.asarray(A @ H)
            if k in ks:
                rows.append(_one_k(params, k, nu, H / nu**k, z, X, split, rng, n_points, method))
    table = pd.DataFrame(rows).groupby(["k", "nu"], as_index=False).mean()
    table["seeds"] = seeds
    return table[list(COLUMNS)].sort_values(["k", "nu"]).reset_index(drop=True)
