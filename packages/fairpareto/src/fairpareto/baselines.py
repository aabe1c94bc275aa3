"""The baselines the front is checked against: one training run per trade-off level.

1. *DP-penalised logistic regression* (a learned fair-representation baseline, lambda sweep).
   The model p(x) = sigmoid(w . z + b), z the standardised ``[X, A]``, minimises

   .. math:: \\frac{1}{N} \\sum_i \\ell(y_i, p(x_i)) + \\lambda\\,(\\bar p_1 - \\bar p_0)^2
             + \\rho \\lVert w \\rVert^2,

   where p-bar_a is the mean predicted probability in group a (L-BFGS with the exact
   gradient). It predicts 1{p > 1/2}.
2. *fairlearn ExponentiatedGradient* (Agarwal et al. 2018) with a logistic regression on z and
   ``DemographicParity(difference_bound=eps)``. fairlearn bounds each group's selection rate
   against the overall one, |P(Yhat = 1 | A = a) - P(Yhat = 1)| <= eps, so the gap between the
   groups may reach eps / max(alpha, 1 - alpha). The result is a randomised classifier: a
   distribution over logistic models.
3. *fairlearn ThresholdOptimizer* (Hardt et al. 2016) with ``constraints="demographic_parity"``:
   randomised group-specific thresholds on a logistic model's probability, chosen for accuracy
   under exact parity on the training data.

Each :class:`Baseline` gives P(Yhat = 1 | x, a) on new rows: 0/1 for the DP-penalised model, the
probability of a positive prediction for fairlearn's randomised classifiers (their expected
accuracy and parity gap are then linear in it).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import expit

__all__ = ["Baseline", "dp_penalised_logistic", "fit_baselines", "predict_dp_logistic"]


@dataclass(frozen=True)
class Baseline:
    """One trained baseline at one trade-off level.

    ``positive(X, A)`` is P(Yhat = 1 | x, a) per row ``(N,)``; ``cpu_seconds`` is the CPU time
    of its training run (``time.process_time``, all threads of the process)."""

    method: str
    level: str
    positive: Callable[[np.ndarray, np.ndarray], np.ndarray]
    cpu_seconds: float


def _standardiser(X: np.ndarray, A: np.ndarray) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """z = ([X, A] - mean) / scale with the mean and scale of the training rows."""
    Z = np.column_stack([X, A]).astype(float)
    mean, scale = Z.mean(axis=0), Z.std(axis=0) + 1e-12
    return lambda X2, A2: (np.column_stack([X2, A2]).astype(float) - mean) / scale


def dp_penalised_logistic(
    X: np.ndarray, y: np.ndarray, A: np.ndarray, lam: float, ridge: float = 1e-4
) -> tuple[np.ndarray, Callable[[np.ndarray, np.ndarray], np.ndarray]]:
    """``(w, design)``: the weights (bias last) of the DP-penalised logistic model 1 above and
    the standardisation ``design(X, A) -> z``. Arguments assumed checked (a reproduction
    helper)."""
    design = _standardiser(X, A)
    Z = design(X, A)
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

    return minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B").x, design


def predict_dp_logistic(
    model: tuple[np.ndarray, Callable[[np.ndarray, np.ndarray], np.ndarray]],
    X: np.ndarray,
    A: np.ndarray,
) -> np.ndarray:
    """P(Y = 1 | x, a) of a :func:`dp_penalised_logistic` model."""
    w, design = model
    return expit(design(X, A) @ w[:-1] + w[-1])


def _timed(fit: Callable[[], object]) -> tuple[object, float]:
    """The fitted model and the CPU seconds of ``fit()``."""
    started = time.process_time()
    model = fit()
    return model, time.process_time() - started


def fit_baselines(
    X: np.ndarray,
    y: np.ndarray,
    A: np.ndarray,
    lambdas: Sequence[float] = (),
    bounds: Sequence[float] = (),
    threshold_optimizer: bool = False,
) -> list[Baseline]:
    """Train the baselines above on ``(X, y, A)``: the DP-penalised model for each lambda in
    ``lambdas``, ExponentiatedGradient for each difference bound in ``bounds``, and the
    ThresholdOptimizer when asked. Arguments assumed checked (a reproduction helper)."""
    from fairlearn.postprocessing import ThresholdOptimizer
    from fairlearn.reductions import DemographicParity, ExponentiatedGradient
    from sklearn.linear_model import LogisticRegression

    out = []
    for lam in lambdas:
        model, cpu = _timed(lambda lam=lam: dp_penalised_logistic(X, y, A, lam))

        def hard(X2: np.ndarray, A2: np.ndarray, m=model) -> np.ndarray:
            return (predict_dp_logistic(m, X2, A2) > 0.5).astype(float)

        out.append(Baseline("DP-penalised LR", f"lambda={lam:g}", hard, cpu))
    design = _standardiser(X, A)
    Z = design(X, A)
    for eps in bounds:
        eg = ExponentiatedGradient(LogisticRegression(), DemographicParity(difference_bound=eps))
        model, cpu = _timed(lambda eg=eg: eg.fit(Z, y, sensitive_features=A))

        def mixed(X2: np.ndarray, A2: np.ndarray, m=model) -> np.ndarray:
            return np.asarray(m._pmf_predict(design(X2, A2)))[:, 1]

        out.append(Baseline("ExponentiatedGradient", f"eps={eps:g}", mixed, cpu))
    if threshold_optimizer:
        to = ThresholdOptimizer(
            estimator=LogisticRegression(),
            constraints="demographic_parity",
            predict_method="predict_proba",
        )
        model, cpu = _timed(lambda: to.fit(Z, y, sensitive_features=A))

        def thresholds(X2: np.ndarray, A2: np.ndarray, m=model) -> np.ndarray:
            return np.asarray(m._pmf_predict(design(X2, A2), sensitive_features=A2))[:, 1]

        out.append(Baseline("ThresholdOptimizer", "DP", thresholds, cpu))
    return out
