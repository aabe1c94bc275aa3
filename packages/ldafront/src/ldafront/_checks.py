"""Argument checks shared by the package's entry points (paperkit's wording throughout)."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import numpy as np

from paperkit import check_array, param_error

#: Scores are clipped into [CLIP, 1 - CLIP] when ``clip=True``.
CLIP = 1e-7


def check_scores(
    name: str,
    owner: str,
    value: Any,
    *,
    clip: bool = False,
    dims: MutableMapping[str, tuple[int, str]] | None = None,
) -> np.ndarray:
    """A 1-D float array of probabilities in the open interval (0, 1); NaN and inf refused.

    With ``clip=True`` values outside are clipped into ``[CLIP, 1 - CLIP]`` instead of refused.
    """
    scores = check_array(name, owner, value, shape=("n",), dims=dims).astype(float)
    if clip:
        return np.clip(scores, CLIP, 1.0 - CLIP)
    if scores.min() <= 0.0 or scores.max() >= 1.0:
        worst = scores[np.argmax(np.abs(scores - 0.5))]
        raise param_error(
            name, owner, "probabilities in the open interval (0, 1) (or pass clip=True)", worst
        )
    return scores


def check_labels(
    name: str, owner: str, value: Any, *, dims: MutableMapping[str, tuple[int, str]] | None = None
) -> np.ndarray:
    """A 1-D array of labels in [0, 1]: hard 0/1 labels, or soft labels P(Y = 1) (e.g. the
    Bayes posterior, which turns the empirical loss into the expected one). Booleans accepted."""
    arr = np.asarray(value) if isinstance(value, np.ndarray) and value.dtype == bool else value
    if isinstance(arr, np.ndarray) and arr.dtype == bool:
        arr = arr.astype(float)
    labels = check_array(name, owner, arr, shape=("n",), dims=dims).astype(float)
    if labels.min() < 0.0 or labels.max() > 1.0:
        bad = labels[(labels < 0.0) | (labels > 1.0)][0]
        raise param_error(name, owner, "labels in [0, 1]", float(bad))
    return labels


def check_groups(
    name: str,
    owner: str,
    value: Any,
    *,
    dims: MutableMapping[str, tuple[int, str]] | None = None,
    both: bool = True,
) -> np.ndarray:
    """A 1-D binary group indicator (0/1 integers, floats or booleans), with both groups present
    when ``both``; returned as an integer array."""
    if isinstance(value, np.ndarray) and value.dtype == bool:
        value = value.astype(np.int64)
    groups = check_array(name, owner, value, shape=("n",), dims=dims)
    if not np.isin(groups, (0, 1)).all():
        bad = groups[~np.isin(groups, (0, 1))][0]
        raise param_error(name, owner, "binary (values 0 and 1 only)", bad.item())
    counts = np.bincount(groups.astype(np.int64), minlength=2)
    if both and counts.min() == 0:
        empty = int(np.argmin(counts))
        raise param_error(
            name, owner, "binary with both groups present", f"no member of group {empty}"
        )
    return groups.astype(np.int64)


def check_features(
    name: str, owner: str, value: Any, *, dims: MutableMapping[str, tuple[int, str]] | None = None
) -> np.ndarray:
    """A 2-D finite real feature matrix ``(n, d)``, returned as float."""
    return check_array(name, owner, value, shape=("n", "d"), dims=dims).astype(float)


def dp_weights(groups: np.ndarray) -> np.ndarray:
    """The weights w_a of the signed DP gap, D(f) = E[w_A f]: w_1 = 1/p_1, w_0 = -1/p_0, with
    p_a the frequencies of the groups in ``groups``."""
    p1 = groups.mean()
    return np.where(groups == 1, 1.0 / p1, -1.0 / (1.0 - p1))
