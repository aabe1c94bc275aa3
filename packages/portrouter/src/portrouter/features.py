"""Per-query estimates of every model's quality and cost from the historical neighbours.

For a query j with neighbour set N(j) (|N(j)| = k) in the history H,

    d̂_ij = (1/k) Σ_{h∈N(j)} d_hi,        ĝ_ij = (1/k) Σ_{h∈N(j)} g_hi,

the "vanilla mean" of the paper's code. No predictor is trained: a new model enters the router as
soon as its column of the history table is filled.
"""

from __future__ import annotations

import numpy as np

from paperkit import Described, param_error
from portrouter.ann import ANNIndex

__all__ = ["check_table", "estimate_features"]


def check_table(
    table: np.ndarray, name: str, owner: str, n_models: int | None = None
) -> np.ndarray:
    """A 2-D finite float table (rows: queries, columns: models), or a worded ValueError."""
    table = np.asarray(table, dtype=np.float64)
    if table.ndim != 2 or (n_models is not None and table.shape[1] != n_models):
        want = "(n, M)" if n_models is None else f"(n, {n_models})"
        raise param_error(
            name, owner, f"a table of shape {want}", Described(f"shape {table.shape}")
        )
    if not np.isfinite(table).all():
        raise param_error(name, owner, "finite", Described("a table with NaN or inf"))
    return table


def estimate_features(
    index: ANNIndex, hist_d: np.ndarray, hist_g: np.ndarray, q: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(d̂ (b, M), ĝ (b, M)): neighbour means of the history's quality and cost columns."""
    hist_d = check_table(hist_d, "hist_d", "estimate_features")
    hist_g = check_table(hist_g, "hist_g", "estimate_features", hist_d.shape[1])
    if len(hist_d) != len(index) or len(hist_g) != len(index):
        raise param_error(
            "hist_d",
            "estimate_features",
            f"one row per indexed query ({len(index)})",
            Described(f"{len(hist_d)} and {len(hist_g)} rows"),
        )
    idx, _ = index.search(q)
    return hist_d[idx].mean(axis=1), hist_g[idx].mean(axis=1)
