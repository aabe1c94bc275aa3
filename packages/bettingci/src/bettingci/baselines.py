"""Closed-form lower confidence bounds, vectorised over the rows of X (R, n), values in [0, 1].

All return the (R,) lower bounds at level :math:`\\delta`, clipped to [0, 1].

- Hoeffding: :math:`\\bar x - \\sqrt{\\log(1/\\delta)/(2n)}`.
- Maurer-Pontil empirical Bernstein:
  :math:`\\bar x - \\sqrt{2V_n\\log(2/\\delta)/n} - 7\\log(2/\\delta)/(3(n-1))`, :math:`V_n` the
  unbiased sample variance (n >= 2; 0 for n = 1).
- Clopper-Pearson (binary data): the :math:`\\delta` quantile of
  :math:`\\mathrm{Beta}(k, n-k+1)`, :math:`k = \\sum x` (0 when k = 0).
- Student t (no finite-sample guarantee): :math:`\\bar x - t_{1-\\delta,n-1}\\,s/\\sqrt n`.

NaN policy: data with NaN or inf are refused (``ValueError``), as everywhere in this package.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import stats

from paperkit import Described, check_array, check_real, describe, param_error

__all__ = [
    "CLOSED_FORMS",
    "clopper_pearson",
    "hoeffding",
    "maurer_pontil",
    "t_test",
    "unit_sample",
]


def unit_sample(
    name: str,
    owner: str,
    x: Any,
    ndim: int | tuple[int, ...],
    bounds: tuple[float, float] = (0.0, 1.0),
) -> np.ndarray:
    """``x`` as a float64 array of rank ``ndim``, non-empty, finite, within ``bounds = (a, b)``,
    rescaled to [0, 1] by :math:`(x-a)/(b-a)`. Boolean data are read as 0 and 1."""
    arr = check_array(name, owner, x, ndim=ndim, kind=None)
    if arr.dtype.kind not in "biuf":
        raise param_error(name, owner, "an array of real numbers", describe(arr), cls=TypeError)
    arr = arr.astype(np.float64)
    a, b = bounds
    if arr.min() < a or arr.max() > b:
        got = Described(f"values in [{arr.min():.6g}, {arr.max():.6g}]")
        raise param_error(name, owner, f"within the bounds [{a:g}, {b:g}]", got)
    if (a, b) != (0.0, 1.0):
        arr = np.clip((arr - a) / (b - a), 0.0, 1.0)
    return arr


def _inputs(owner: str, X: Any, delta: Any) -> tuple[np.ndarray, float]:
    X = unit_sample("X", owner, X, 2)
    delta = check_real("delta", owner, delta, low=0, high=1, low_open=True, high_open=True)
    return X, delta


def _hoeffding(X: np.ndarray, delta: float) -> np.ndarray:
    n = X.shape[1]
    return np.clip(X.mean(axis=1) - np.sqrt(np.log(1 / delta) / (2 * n)), 0.0, 1.0)


def _maurer_pontil(X: np.ndarray, delta: float) -> np.ndarray:
    n = X.shape[1]
    if n < 2:
        return np.zeros(X.shape[0])
    log2 = np.log(2 / delta)
    var = X.var(axis=1, ddof=1)
    lcb = X.mean(axis=1) - np.sqrt(2 * var * log2 / n) - 7 * log2 / (3 * (n - 1))
    return np.clip(lcb, 0.0, 1.0)


def _clopper_pearson(X: np.ndarray, delta: float) -> np.ndarray:
    n = X.shape[1]
    k = X.sum(axis=1)
    with np.errstate(invalid="ignore"):
        lcb = stats.beta.ppf(delta, k, n - k + 1)
    return np.where(k > 0, lcb, 0.0)


def _t_test(X: np.ndarray, delta: float) -> np.ndarray:
    n = X.shape[1]
    if n < 2:
        return np.zeros(X.shape[0])
    s = X.std(axis=1, ddof=1)
    lcb = X.mean(axis=1) - stats.t.ppf(1 - delta, n - 1) * s / np.sqrt(n)
    return np.clip(lcb, 0.0, 1.0)


def binary_only(name: str, owner: str, X: np.ndarray) -> None:
    """Refuse non-binary data for Clopper-Pearson (an exact binomial bound)."""
    if not np.isin(X, (0.0, 1.0)).all():
        got = Described("non-binary values")
        raise param_error(name, owner, "binary (0 or 1) for method 'clopper_pearson'", got)


def hoeffding(X: Any, delta: float) -> np.ndarray:
    """Hoeffding's bound :math:`\\bar x - \\sqrt{\\log(1/\\delta)/(2n)}` for each row of X (R, n)
    in [0, 1], :math:`\\delta \\in (0, 1)`. NaN or inf in X is refused."""
    return _hoeffding(*_inputs("hoeffding", X, delta))


def maurer_pontil(X: Any, delta: float) -> np.ndarray:
    """Maurer & Pontil (2009, Thm. 4) empirical Bernstein bound for each row of X (R, n) in
    [0, 1] (0 when n = 1). NaN or inf in X is refused."""
    return _maurer_pontil(*_inputs("maurer_pontil", X, delta))


def clopper_pearson(X: Any, delta: float) -> np.ndarray:
    """Exact binomial (Clopper-Pearson) bound :math:`\\mathrm{Beta}^{-1}(\\delta; k, n-k+1)` for
    each row of binary X (R, n). NaN, inf and values other than 0 and 1 are refused."""
    X, delta = _inputs("clopper_pearson", X, delta)
    binary_only("X", "clopper_pearson", X)
    return _clopper_pearson(X, delta)


def t_test(X: Any, delta: float) -> np.ndarray:
    """Student-t bound :math:`\\bar x - t_{1-\\delta,n-1}s/\\sqrt n` for each row of X (R, n)
    (a reference without a finite-sample guarantee; 0 when n = 1). NaN or inf is refused."""
    return _t_test(*_inputs("t_test", X, delta))


#: The closed-form methods by name, on validated data.
CLOSED_FORMS = {
    "hoeffding": _hoeffding,
    "maurer_pontil": _maurer_pontil,
    "clopper_pearson": _clopper_pearson,
    "t_test": _t_test,
}
