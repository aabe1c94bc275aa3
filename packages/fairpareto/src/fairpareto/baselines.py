"""A learned fair-representation baseline: logistic regression with a squared parity penalty.

The model p(x) = sigmoid(w . x + b) (features standardised, the group A included as a feature)
minimises

.. math:: \\frac{1}{N} \\sum_i \\ell(y_i, p(x_i)) + \\lambda\\,(\\bar p_1 - \\bar p_0)^2
          + \\rho \\lVert w \\rVert^2,

where p-bar_a is the mean predicted probability in group a, so lambda trades accuracy for parity;
one training run per lambda (L-BFGS with the exact gradient). Its hard predictions 1{p > 1/2}
give one (parity gap, accuracy) point per lambda.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

__all__ = ["dp_penalised_logistic", "predict_dp_logistic"]


def dp_penalised_logistic(
    X: np.ndarray, y: np.ndarray, A: np.ndarray, lam: float, ridge: float = 1e-4
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(w, mean, scale)``: the fitted weights (bias last) and the standardisation of
    ``[X, A]``. Predict with ``expit(((Z - mean) / scale) @ w[:-1] + w[-1])``, ``Z = [X, A]``.
    Arguments assumed checked (a reproduction helper)."""
    Z = np.column_stack([X, A]).astype(float)
    mean, scale = Z.mean(axis=0), Z.std(axis=0) + 1e-12
    Z = (Z - mean) / scale
    n, d = Z.shape
    g1, g0 = A == 1, A == 0
    contrast = np.where(g1, 1.0 / g1.sum(), -1.0 / g0.sum())  # p-bar_1 - p-bar_0 = contrast . p

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:-1], theta[-1]
        logits = Z @ w + b
        p = expit(logits)
        nll = np.mean(np.logaddexp(0.0, logits) - y * logits)
        gap = contrast @ p
        dlogit = (p - y) / n + 2.0 * lam * gap * contrast * p * (1.0 - p)
        grad = np.append(Z.T @ dlogit + 2.0 * ridge * w, dlogit.sum())
        return float(nll + lam * gap**2 + ridge * w @ w), grad

    res = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B")
    return res.x, mean, scale


def predict_dp_logistic(
    model: tuple[np.ndarray, np.ndarray, np.ndarray], X: np.ndarray, A: np.ndarray
) -> np.ndarray:
    """P(Y = 1 | x, a) of a :func:`dp_penalised_logistic` model."""
    w, mean, scale = model
    Z = (np.column_stack([X, A]).astype(float) - mean) / scale
    return expit(Z @ w[:-1] + w[-1])
