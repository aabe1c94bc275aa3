"""Input checks shared by the estimators (paperkit wording, naming the argument)."""

from __future__ import annotations

from typing import Any

import numpy as np
from sklearn.exceptions import NotFittedError

from paperkit import check_array, check_bool, check_choice, check_int, check_real, param_error

MAX_ITER = 100_000


def features(name: str, owner: str, X: Any, n_features: int | None = None) -> np.ndarray:
    """A finite, non-empty ``(n, d)`` real array as float64 (NaN and inf refused)."""
    X = check_array(name, owner, X, ndim=2, kind="real")
    if X.shape[1] == 0:
        raise param_error(name, owner, "at least one feature column", f"shape {X.shape}")
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"The '{name}' parameter of {owner}: X has {X.shape[1]} features, but {owner} is "
            f"expecting {n_features} features as input (as in fit)."
        )
    return X.astype(np.float64)


def labels(name: str, owner: str, y: Any, n: int, n_classes: int, ndim: int = 1) -> np.ndarray:
    """Integer labels in ``{0, ..., n_classes-1}`` of length ``n`` (floats that are whole
    numbers accepted)."""
    y = check_array(name, owner, y, ndim=ndim, kind="real")
    if y.shape[0] != n:
        raise param_error(name, owner, f"{n} rows, one per row of X", f"{y.shape[0]}")
    if y.dtype.kind == "f" and not np.all(y == np.round(y)):
        raise param_error(name, owner, "integer labels", "non-integer values")
    if y.min() < 0 or y.max() > n_classes - 1:
        raise param_error(name, owner, f"labels in {{0, ..., {n_classes - 1}}}", "other values")
    return y.astype(np.int64)


def hyper(est: Any, owner: str) -> None:
    """The shared hyperparameters of the linear estimators."""
    check_bool("fit_intercept", owner, est.fit_intercept)
    check_real("ridge", owner, est.ridge, low=0)
    check_int("max_iter", owner, est.max_iter, low=1, high=MAX_ITER)
    check_real("tol", owner, est.tol, low=0, low_open=True)
    check_choice("solver", owner, est.solver, ["auto", "newton", "lbfgs"])
    if est.norm_bound is not None:
        check_real("norm_bound", owner, est.norm_bound, low=0, low_open=True)


def fitted(est: Any, attr: str = "coef_") -> None:
    if not hasattr(est, attr):
        raise NotFittedError(
            f"This {type(est).__name__} instance is not fitted yet; call 'fit' first."
        )
