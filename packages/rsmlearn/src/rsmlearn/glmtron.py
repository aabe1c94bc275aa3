"""GLM-tron (Kakade, Kalai, Kanade & Shamir 2011), the paper's baseline for sigmoid-of-linear
models: :math:`w_0=0`, :math:`w_{t+1}=w_t+\\frac1n\\sum_i(y_i-\\sigma(w_t^\\top x_i))x_i`, returning
the iterate with the smallest held-out squared error :math:`\\sum(y-\\sigma(w^\\top x))^2` on a
``val_fraction`` split. Cost O(n d) per iteration. NaN/inf refused.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.special import expit
from sklearn.base import BaseEstimator, ClassifierMixin

from paperkit import check_int, check_real
from rsmlearn import _checks

__all__ = ["GLMTron"]


class GLMTron(ClassifierMixin, BaseEstimator):
    """GLM-tron with a validation-selected iterate (no intercept, as in Kakade et al.).

    >>> from rsmlearn.datasets import make_sigmoid_linear
    >>> X, y, eta = make_sigmoid_linear(2000, 3, seed=0)
    >>> bool(np.mean((GLMTron().fit(X, y).predict_statistic(X) - eta) ** 2) < 0.02)
    True
    """

    def __init__(self, n_iter: int = 500, val_fraction: float = 0.2, random_state: int = 0):
        self.n_iter = n_iter
        self.val_fraction = val_fraction
        self.random_state = random_state

    def fit(self, X: Any, y: Any) -> GLMTron:
        """Run ``n_iter`` full-batch updates on the training part; keep the best on validation."""
        n_iter = check_int("n_iter", "GLMTron", self.n_iter, low=1, high=_checks.MAX_ITER)
        frac = check_real(
            "val_fraction", "GLMTron", self.val_fraction, low=0, high=1, high_open=True
        )
        seed = check_int("random_state", "GLMTron", self.random_state, low=0)
        X = _checks.features("X", "GLMTron", X)
        y = _checks.labels("y", "GLMTron", y, X.shape[0], 2).astype(float)
        n = len(y)
        perm = np.random.default_rng(seed).permutation(n)
        n_val = int(round(frac * n)) if n > 1 else 0
        val, tr = perm[:n_val], perm[n_val:]
        Xt, yt, Xv, yv = X[tr], y[tr], X[val], y[val]
        w = np.zeros(X.shape[1])
        best, best_err, best_t = w.copy(), np.inf, 0
        for t in range(n_iter + 1):
            if n_val:
                err = float(np.sum((yv - expit(Xv @ w)) ** 2))
                if err < best_err:
                    best, best_err, best_t = w.copy(), err, t
            if t < n_iter:
                w = w + Xt.T @ (yt - expit(Xt @ w)) / len(yt)
        self.coef_ = best if n_val else w
        self.n_iter_ = best_t if n_val else n_iter
        self.classes_, self.n_features_in_ = np.array([0, 1]), X.shape[1]
        return self

    def predict_statistic(self, X: Any) -> np.ndarray:
        """:math:`\\hat\\eta(x)=\\sigma(\\hat w^\\top x)`, shape ``(n,)``."""
        _checks.fitted(self)
        X = _checks.features("X", "GLMTron", X, self.n_features_in_)
        return expit(X @ self.coef_)

    def predict_proba(self, X: Any) -> np.ndarray:
        """``(n, 2)``: :math:`1-\\hat\\eta,\\ \\hat\\eta`."""
        eta = self.predict_statistic(X)
        return np.column_stack([1 - eta, eta])

    def predict(self, X: Any) -> np.ndarray:
        """:math:`1\\{\\hat\\eta>\\tfrac12\\}`."""
        return (self.predict_statistic(X) > 0.5).astype(np.int64)
