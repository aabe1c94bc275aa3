"""Argument checks shared by the public entry points (paperkit's wording, naming the argument)."""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import check_array, param_error

__all__ = [
    "check_gammas",
    "check_groups",
    "check_scores_groups",
    "check_unit",
    "check_weights",
]


def check_unit(name: str, owner: str, value: Any, *, ndim: int = 1) -> np.ndarray:
    """A finite, non-empty real array of rank ``ndim`` with entries in [0, 1], as float64."""
    array = check_array(name, owner, value, ndim=ndim).astype(float)
    if array.min() < 0.0 or array.max() > 1.0:
        raise param_error(name, owner, "in [0, 1]", f"values in [{array.min():g}, {array.max():g}]")
    return array


def check_groups(owner: str, A: Any, n: int | None = None) -> np.ndarray:
    """Group labels: a 1-D array of 0/1 (bool or numbers), both groups present, length ``n``."""
    array = check_array("A", owner, A, ndim=1, kind=None)
    if array.dtype.kind not in "biuf":
        raise param_error(
            "A", owner, "an array of 0/1 labels", f"dtype {array.dtype}", cls=TypeError
        )
    if array.dtype.kind == "f" and not np.isfinite(array).all():
        raise param_error("A", owner, "finite (no NaN or inf)", "non-finite labels")
    if n is not None and array.shape[0] != n:
        raise param_error("A", owner, f"of length {n} (as the scores)", f"length {array.shape[0]}")
    if not np.isin(array, (0, 1)).all():
        raise param_error("A", owner, "binary (0/1)", f"values {np.unique(array)[:5].tolist()}")
    labels = array.astype(int)
    if labels.min() == labels.max():
        raise param_error("A", owner, "holding both groups 0 and 1", f"only group {labels[0]}")
    return labels


def check_scores_groups(owner: str, scores: Any, A: Any) -> tuple[np.ndarray, np.ndarray]:
    """Scores in [0, 1] ``(N,)`` and their group labels ``(N,)``."""
    scores = check_unit("scores", owner, scores)
    return scores, check_groups(owner, A, scores.shape[0])


def check_gammas(owner: str, gammas: Any) -> np.ndarray:
    """Parity levels: a non-empty 1-D array in [0, 1], returned sorted without duplicates."""
    return np.unique(check_unit("gammas", owner, gammas))


def check_weights(owner: str, sample_weight: Any, A: np.ndarray) -> np.ndarray:
    """Sample weights ``(N,)``, nonnegative and positive on both groups (ones when None)."""
    if sample_weight is None:
        return np.ones(A.shape[0])
    w = check_array("sample_weight", owner, sample_weight, ndim=1).astype(float)
    if w.shape[0] != A.shape[0]:
        raise param_error("sample_weight", owner, f"of length {A.shape[0]}", f"length {w.shape[0]}")
    if w.min() < 0 or w[A == 0].sum() <= 0 or w[A == 1].sum() <= 0:
        raise param_error(
            "sample_weight", owner, "nonnegative and positive on both groups", f"min {w.min():g}"
        )
    return w
