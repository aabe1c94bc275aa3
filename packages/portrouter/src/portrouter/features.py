"""Per-query estimates of every model's quality and cost from the historical neighbours.

For a query j with neighbour set N(j) (|N(j)| = k) in the history H,

    d̂_ij = (1/k) Σ_{h∈N(j)} d_hi,        ĝ_ij = (1/k) Σ_{h∈N(j)} g_hi,

the "vanilla mean" of the paper's code. No predictor is trained: a new model enters the router as
soon as its column of the history table is filled.

NaN policy: tables and embeddings with NaN or inf are refused (``ValueError``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from paperkit import Described, check_array, describe, param_error
from portrouter.ann import embeddings

__all__ = ["estimate_features", "history", "neighbour_index", "neighbour_means"]


def neighbour_index(name: str, owner: str, index: Any) -> Any:
    """``index`` if it offers :class:`~portrouter.ANNIndex`'s interface (``search``, ``k``,
    ``dim``, ``len``) and holds at least ``k`` rows, else the worded error."""
    if not all(hasattr(index, a) for a in ("search", "k", "dim", "__len__")):
        expected = "a neighbour index (ANNIndex or ExactKNNIndex)"
        raise param_error(name, owner, expected, describe(index), cls=TypeError)
    if index.k > len(index):
        got = Described(f"an index of {len(index)} rows with k = {index.k}")
        raise param_error(name, owner, "an index holding at least k rows", got)
    return index


def history(
    owner: str, hist_d: Any, hist_g: Any, index: Any = None, dims: dict | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The history's quality and cost tables (n, M) as float64: finite, costs non-negative, one
    row per indexed query when ``index`` is given."""
    dims = {} if dims is None else dims
    hist_d = check_array("hist_d", owner, hist_d, shape=("n", "M"), dims=dims)
    hist_g = check_array("hist_g", owner, hist_g, shape=("n", "M"), dims=dims)
    if (hist_g < 0).any():
        raise param_error("hist_g", owner, "non-negative costs", Described("negative entries"))
    if index is not None and len(hist_d) != len(index):
        got = Described(f"{len(hist_d)} rows for an index of {len(index)}")
        raise param_error("hist_d", owner, "one row per indexed query", got)
    return hist_d.astype(np.float64), hist_g.astype(np.float64)


def neighbour_means(
    index: Any, hist_d: np.ndarray, hist_g: np.ndarray, q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`estimate_features` on validated inputs (the routers' inner loop)."""
    idx, _ = index.search(q)
    return hist_d[idx].mean(axis=1), hist_g[idx].mean(axis=1)


def estimate_features(
    index: Any, hist_d: np.ndarray, hist_g: np.ndarray, q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(d̂ (b, M), ĝ (b, M)): neighbour means of the history's quality and cost columns for the
    queries ``q`` (b, dim). NaN or inf in the tables or in ``q`` is refused."""
    owner = "estimate_features"
    index = neighbour_index("index", owner, index)
    hist_d, hist_g = history(owner, hist_d, hist_g, index)
    q = embeddings(q, index.dim, "q", owner)
    return neighbour_means(index, hist_d, hist_g, q)
