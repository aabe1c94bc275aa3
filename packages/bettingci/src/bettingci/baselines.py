"""Closed-form lower confidence bounds, vectorised over the rows of X (R, n), values in [0, 1].

All return the (R,) lower bounds at level :math:`\\delta`, clipped to [0, 1].

- Hoeffding: :math:`\\bar x - \\sqrt{\\log(1/\\delta)/(2n)}`.
- Maurer-Pontil empirical Bernstein:
  :math:`\\bar x - \\sqrt{2V_n\\log(2/\\delta)/n} - 7\\log(2/\\delta)/(3(n-1))`, :math:`V_n` the
  unbiased sample variance (n >= 2; 0 for n = 1).
- Clopper-Pearson (binary data): the :math:`\\delta` quantile of
  :math:`\\mathrm{Beta}(k, n-k+1)`, :math:`k = \\sum x` (0 when k = 0).
- Student t (no finite-sample guarantee): :math:`\\bar x - t_{1-\\delta,n-1}\\,s/\\sqrt n`.
"""

from __future__ import annotations

import numpy as np
from scipy import stats

__all__ = ["CLOSED_FORMS", "clopper_pearson", "hoeffding", "maurer_pontil", "t_test"]


def hoeffding(X: np.ndarray, delta: float) -> np.ndarray:
    """Hoeffding's bound :math:`\\bar x - \\sqrt{\\log(1/\\delta)/(2n)}`."""
    n = X.shape[1]
    return np.clip(X.mean(axis=1) - np.sqrt(np.log(1 / delta) / (2 * n)), 0.0, 1.0)


def maurer_pontil(X: np.ndarray, delta: float) -> np.ndarray:
    """Maurer & Pontil (2009, Thm. 4) empirical Bernstein bound."""
    n = X.shape[1]
    if n < 2:
        return np.zeros(X.shape[0])
    log2 = np.log(2 / delta)
    var = X.var(axis=1, ddof=1)
    lcb = X.mean(axis=1) - np.sqrt(2 * var * log2 / n) - 7 * log2 / (3 * (n - 1))
    return np.clip(lcb, 0.0, 1.0)


def clopper_pearson(X: np.ndarray, delta: float) -> np.ndarray:
    """Exact binomial (Clopper-Pearson) bound :math:`\\mathrm{Beta}^{-1}(\\delta; k, n-k+1)`."""
    n = X.shape[1]
    k = X.sum(axis=1)
    with np.errstate(invalid="ignore"):
        lcb = stats.beta.ppf(delta, k, n - k + 1)
    return np.where(k > 0, lcb, 0.0)


def t_test(X: np.ndarray, delta: float) -> np.ndarray:
    """Student-t bound :math:`\\bar x - t_{1-\\delta,n-1}s/\\sqrt n` (reference, no guarantee)."""
    n = X.shape[1]
    if n < 2:
        return np.zeros(X.shape[0])
    s = X.std(axis=1, ddof=1)
    lcb = X.mean(axis=1) - stats.t.ppf(1 - delta, n - 1) * s / np.sqrt(n)
    return np.clip(lcb, 0.0, 1.0)


#: The closed-form methods by name.
CLOSED_FORMS = {
    "hoeffding": hoeffding,
    "maurer_pontil": maurer_pontil,
    "clopper_pearson": clopper_pearson,
    "t_test": t_test,
}
