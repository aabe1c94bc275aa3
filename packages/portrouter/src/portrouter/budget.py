"""Per-model budgets: the total from the test stream, and the paper's splitting strategies.

The total is ``factor × min_i Σ_j g_ij``: what the cheapest model would spend serving the whole
stream alone (``factor = 1`` by default), so no method can afford to send everything to the
strong, expensive models. It is split across models by weights w (normalised to the total):

- ``"weighted"``: w_i ∝ √(perf_i / cost_i)   (quality per unit cost),
- ``"cost"``: w_i ∝ √(1 / cost_i),  ``"perf"``: w_i ∝ perf_i,  ``"uniform"``: w_i = 1,
- ``"extreme"``: five splits; in the k-th (k = 1…5) the k least efficient models (by √(perf/cost))
  get weight 50 and the others 12.5·k/(M − k),
- ``"random"``: 100 splits with w_i ~ U(5, 30).

perf_i and cost_i are model averages over the historical table.
"""

from __future__ import annotations

import numpy as np

from paperkit import check_choice, param_error

__all__ = ["STRATEGIES", "split_budget", "total_budget"]

STRATEGIES = ("weighted", "cost", "perf", "uniform", "extreme", "random")


def total_budget(stream_g: np.ndarray, factor: float = 1.0) -> float:
    """``factor × min_i Σ_j g_ij`` over the stream's true costs."""
    if not factor > 0:
        raise param_error("factor", "total_budget", "positive", factor)
    return float(factor * np.asarray(stream_g, dtype=np.float64).sum(axis=0).min())


def split_budget(
    total: float,
    perf: np.ndarray,
    cost: np.ndarray,
    strategy: str = "weighted",
    rng: np.random.Generator | None = None,
) -> np.ndarray | list[np.ndarray]:
    """Budgets (M,) summing to ``total`` — a list of such splits for "extreme" and "random"."""
    check_choice("strategy", "split_budget", strategy, STRATEGIES)
    if not total > 0:
        raise param_error("total", "split_budget", "positive", total)
    perf, cost = np.asarray(perf, dtype=np.float64), np.asarray(cost, dtype=np.float64)
    if perf.shape != cost.shape or perf.ndim != 1 or not (cost > 0).all() or (perf < 0).any():
        raise param_error(
            "cost", "split_budget", "positive, one per model like perf", f"{cost} vs {perf}"
        )
    M = len(perf)
    efficiency = np.sqrt(perf / cost)
    if strategy == "extreme":
        splits = []
        for k in range(1, min(5, M - 1) + 1):
            low = np.argsort(efficiency, kind="stable")[:k]
            w = np.full(M, 12.5 * k / (M - k))
            w[low] = 50.0
            splits.append(total * w / w.sum())
        return splits
    if strategy == "random":
        rng = rng if rng is not None else np.random.default_rng(0)
        return [total * w / w.sum() for w in rng.uniform(5.0, 30.0, size=(100, M))]
    w = {
        "weighted": efficiency,
        "cost": np.sqrt(1.0 / cost),
        "perf": perf,
        "uniform": np.ones(M),
    }[strategy]
    return total * w / w.sum()
