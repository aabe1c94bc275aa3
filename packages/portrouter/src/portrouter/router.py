"""PORT's online router: a random learning phase, one dual solve, then priced argmax routing.

For a stream of N queries arriving in random order, the first L = ⌈εN⌉ are routed uniformly at
random over {0, …, M−1, M} (M: not served, as in the paper's code) while their estimated features
are stored; then γ* is solved once (:func:`portrouter.dual.solve_dual`) and every later query j
goes to

    i*(j) = argmax_i (α d̂_ij − γ*_i ĝ_ij)      (not served if ``allow_skip`` and the max is < 0).

Budgets are enforced where the queries are served (:func:`portrouter.serving.simulate_serving`):
a model whose budget cannot cover the query's true cost loses the query.

NaN policy: NaN or inf in the history, the budgets or the query embeddings is refused
(``ValueError``); budgets must be finite and positive.
"""

from __future__ import annotations

import math

import numpy as np

from paperkit import (
    check_array,
    check_bool,
    check_choice,
    check_int,
    check_real,
    describe,
    param_error,
)
from portrouter.ann import ANNIndex, embeddings
from portrouter.dual import SOLVERS, optimal_prices, resolve_alpha
from portrouter.features import history, neighbour_index, neighbour_means

__all__ = ["PORTRouter"]


class PORTRouter:
    """Route batches of query embeddings in arrival order; ``M`` in the output means "not routed".

    ``alpha`` = 1e-4 is the paper's setting for RouterBench-scale costs (~1e-4 $ per query);
    ``"auto"`` sets median(ĝ)/median(d̂) from the learning phase, which puts quality and cost on
    one scale but can push prices to the box bound γ = 1 when budgets are tight. ``solver``:
    the paper code's ``"lbfgsb"`` (default) or the exact ``"lp"``
    (:func:`portrouter.dual.solve_dual`).

    Attributes after the learning phase: ``gamma`` (M,), ``alpha_`` (the α used),
    ``n_optimisations`` (1: the dual is solved once).
    """

    def __init__(
        self,
        index: ANNIndex,
        hist_d: np.ndarray,
        hist_g: np.ndarray,
        budgets: np.ndarray,
        n_queries: int,
        eps: float = 0.025,
        alpha: float | str = 1e-4,
        solver: str = "lbfgsb",
        allow_skip: bool = False,
        seed: int = 0,
    ) -> None:
        owner = "PORTRouter"
        self.index = neighbour_index("index", owner, index)
        dims: dict = {}
        self.hist_d, self.hist_g = history(owner, hist_d, hist_g, self.index, dims)
        self.M = self.hist_d.shape[1]
        self.budgets = check_array("budgets", owner, budgets, shape=("M",), dims=dims)
        if not (self.budgets > 0).all():
            raise param_error("budgets", owner, "positive", describe(self.budgets))
        self.budgets = self.budgets.astype(np.float64)
        self.n_queries = check_int("n_queries", owner, n_queries, low=1)
        self.eps = check_real("eps", owner, eps, low=0, high=1, low_open=True, high_open=True)
        if isinstance(alpha, str):
            check_choice("alpha", owner, alpha, ("auto",))
        else:
            alpha = check_real("alpha", owner, alpha, low=0, low_open=True)
        self.alpha = alpha
        self.solver = check_choice("solver", owner, solver, SOLVERS)
        self.allow_skip = check_bool("allow_skip", owner, allow_skip)
        seed = check_int("seed", owner, seed, low=0)
        self.n_learn = math.ceil(self.eps * self.n_queries)
        self.rng = np.random.default_rng(seed)
        self._seen_d, self._seen_g = [], []
        self.n_seen, self.n_optimisations = 0, 0
        self.gamma: np.ndarray | None = None
        self.alpha_: float | None = None

    def _optimise(self) -> None:
        d_hat, g_hat = np.concatenate(self._seen_d), np.concatenate(self._seen_g)
        self.alpha_ = resolve_alpha(self.alpha, d_hat, g_hat)
        self.gamma = optimal_prices(
            d_hat, g_hat, self.budgets, self.eps, self.alpha_, self.solver, self.allow_skip
        )
        self.n_optimisations += 1

    def route_batch(self, q: np.ndarray) -> np.ndarray:
        """Choices (b,) in {0, …, M} for the next ``b`` queries (b, dim) of the stream; NaN or inf
        in ``q`` is refused."""
        q = embeddings(q, self.index.dim, "q", "PORTRouter.route_batch")
        d_hat, g_hat = neighbour_means(self.index, self.hist_d, self.hist_g, q)
        b = len(d_hat)
        out = np.empty(b, dtype=np.int64)
        n_learn = min(max(self.n_learn - self.n_seen, 0), b)
        if n_learn:
            out[:n_learn] = self.rng.integers(0, self.M + 1, size=n_learn)
            self._seen_d.append(d_hat[:n_learn])
            self._seen_g.append(g_hat[:n_learn])
        if n_learn < b:
            if self.gamma is None:
                self._optimise()
            scores = self.alpha_ * d_hat[n_learn:] - self.gamma[None, :] * g_hat[n_learn:]
            best = scores.argmax(axis=1)
            if self.allow_skip:
                best = np.where(scores.max(axis=1) < 0, self.M, best)
            out[n_learn:] = best
        self.n_seen += b
        return out
