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

NaN policy: NaN or inf in the costs, the model averages or the totals is refused (``ValueError``).
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array, check_choice, check_real, describe, param_error

__all__ = ["STRATEGIES", "split_budget", "total_budget"]

STRATEGIES = ("weighted", "cost", "perf", "uniform", "extreme", "random")


def total_budget(stream_g: np.ndarray, factor: float = 1.0) -> float:
    """``factor × min_i Σ_j g_ij`` over the stream's true costs ``stream_g`` (N, M), non-negative
    and finite; ``factor`` > 0 and finite."""
    owner = "total_budget"
    stream_g = check_array("stream_g", owner, stream_g, ndim=2)
    if (stream_g < 0).any():
        raise param_error("stream_g", owner, "non-negative costs", describe(stream_g))
    factor = check_real("factor", owner, factor, low=0, low_open=True)
    return float(factor * stream_g.astype(np.float64).sum(axis=0).min())


def split_budget(
    total: float,
    perf: np.ndarray,
    cost: np.ndarray,
    strategy: str = "weighted",
    rng: np.random.Generator | None = None,
) -> np.ndarray | list[np.ndarray]:
    """Budgets (M,) summing to ``total`` — a list of such splits for "extreme" and "random".

    ``total`` > 0 and finite; ``perf`` (M,) non-negative and ``cost`` (M,) positive model
    averages; ``rng`` a numpy Generator (default: seeded with 0) for "random"."""
    owner = "split_budget"
    total = check_real("total", owner, total, low=0, low_open=True)
    dims: dict = {}
    perf = check_array("perf", owner, perf, shape=("M",), dims=dims).astype(np.float64)
    cost = check_array("cost", owner, cost, shape=("M",), dims=dims).astype(np.float64)
    if (perf < 0).any():
        raise param_error("perf", owner, "non-negative", describe(perf))
    if not (cost > 0).all():
        raise param_error("cost", owner, "positive", describe(cost))
    check_choice("strategy", owner, strategy, STRATEGIES)
    if rng is not None and not isinstance(rng, np.random.Generator):
        raise param_error("rng", owner, "None or a numpy Generator", describe(rng), cls=TypeError)
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
    if not w.sum() > 0:  # "weighted" and "perf" weigh by perf: all zero leaves nothing to split by
        raise param_error("perf", owner, f"not all zero for strategy {strategy!r}", describe(perf))
    return total * w / w.sum()
