"""Residual makers for the GCM: regress targets on a fixed conditioning set C.

The conditioning set of a T-MEX test, C_k = (Z_{-k}, V), depends only on the latent k, so each
maker does its expensive work once per C and then returns residuals for any number of targets:

* ``"linear"``: least squares on [1, C] through one thin QR, residual = y - Q Q^T y.
* ``"krr"``: RBF kernel ridge regression on the standardised C, bandwidth h = median pairwise
  distance, k(c, c') = exp(-|c - c'|^2 / (2 h^2)). One eigendecomposition K = U diag(s) U^T
  serves every target and every ridge α ∈ {0.1, 1, 10}: the hat matrix is
  H_α = U diag(s / (s + α)) U^T, the residual (I - H_α) y = U diag(α / (s + α)) U^T y and the
  closed-form leave-one-out residual is r_i / (1 - (H_α)_ii); α minimises the mean squared
  leave-one-out residual, per target column.
* ``"rf"``: a random forest (100 trees, leaves of at least 5 samples); residuals are out-of-bag,
  so the forest's in-sample fit does not shrink them.
* any scikit-learn regressor (an object with ``fit`` and ``predict``): cloned, fitted on C, and
  the in-sample residuals returned.

With C = None (nothing to condition on) every maker returns the centred targets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Residualizer = Callable[[np.ndarray], np.ndarray]

#: The ridge penalties KRR chooses among by leave-one-out.
KRR_ALPHAS = (0.1, 1.0, 10.0)
REGRESSORS = ("linear", "krr", "rf")


def _centre(y: np.ndarray) -> np.ndarray:
    return y - y.mean(axis=0)


def linear_residualizer(C: np.ndarray) -> Residualizer:
    """Residuals of least squares on [1, C] (one QR for all targets)."""
    q, _ = np.linalg.qr(np.column_stack([np.ones(len(C)), C]))
    return lambda y: y - q @ (q.T @ y)


def median_bandwidth(C: np.ndarray) -> float:
    """Median of the pairwise Euclidean distances between rows of C (1.0 if all are equal)."""
    sq = np.sum(C**2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * C @ C.T, 0.0)
    upper = d2[np.triu_indices(len(C), k=1)]
    h = float(np.sqrt(np.median(upper))) if upper.size else 0.0
    return h if h > 0 else 1.0


def krr_residualizer(C: np.ndarray) -> Residualizer:
    """Residuals of RBF kernel ridge regression, α per column by closed-form leave-one-out."""
    sd = C.std(axis=0)
    Cs = (C - C.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    h = median_bandwidth(Cs)
    sq = np.sum(Cs**2, axis=1)
    d2 = np.maximum(sq[:, None] + sq[None, :] - 2 * Cs @ Cs.T, 0.0)
    s, U = np.linalg.eigh(np.exp(-d2 / (2 * h * h)))
    s = np.maximum(s, 0.0)
    U2 = U**2

    def residuals(y: np.ndarray) -> np.ndarray:
        yc = _centre(y)
        proj = U.T @ yc  # (n, d)
        best, best_loss = None, np.full(y.shape[1], np.inf)
        for alpha in KRR_ALPHAS:
            shrink = alpha / (s + alpha)
            r = U @ (shrink[:, None] * proj)
            leverage = U2 @ (s / (s + alpha))
            loo = r / np.maximum(1.0 - leverage, 1e-12)[:, None]
            loss = np.mean(loo**2, axis=0)
            better = loss < best_loss
            best = r if best is None else np.where(better[None, :], r, best)
            best_loss = np.minimum(loss, best_loss)
        return best

    return residuals


def rf_residualizer(C: np.ndarray, seed: int) -> Residualizer:
    """Out-of-bag residuals of a random forest (100 trees, min_samples_leaf=5)."""
    from sklearn.ensemble import RandomForestRegressor

    def residuals(y: np.ndarray) -> np.ndarray:
        forest = RandomForestRegressor(
            n_estimators=100, min_samples_leaf=5, oob_score=True, random_state=seed
        )
        target = y[:, 0] if y.shape[1] == 1 else y
        forest.fit(C, target)
        pred = forest.oob_prediction_.reshape(len(C), -1)
        return y - np.where(np.isfinite(pred), pred, y.mean(axis=0))

    return residuals


def sklearn_residualizer(C: np.ndarray, estimator: Any) -> Residualizer:
    """In-sample residuals of a cloned scikit-learn regressor fitted on C."""
    from sklearn.base import clone

    def residuals(y: np.ndarray) -> np.ndarray:
        cols = [y[:, j] - clone(estimator).fit(C, y[:, j]).predict(C) for j in range(y.shape[1])]
        return np.column_stack(cols)

    return residuals


def residualizer(regressor: Any, C: np.ndarray | None, seed: int = 0) -> Residualizer:
    """The residual maker of ``regressor`` on conditioning set ``C`` (None: centring)."""
    if C is None:
        return _centre
    if regressor == "linear":
        return linear_residualizer(C)
    if regressor == "krr":
        return krr_residualizer(C)
    if regressor == "rf":
        return rf_residualizer(C, seed)
    return sklearn_residualizer(C, regressor)
