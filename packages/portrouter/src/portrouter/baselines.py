"""The paper's baselines, as routers for :func:`portrouter.serving.simulate_serving`.

Online (one query at a time, in arrival order):
- ``random_router``: a uniformly random model.
- ``greedy_router(kind="perf")``: argmax_i d̂_ij (ANN features); ``kind="cost"``: the model with the
  most budget left, by the router's own estimate (B_i minus the ĝ of what it sent there).
- ``knn_router(kind)``: the same rules with exact brute-force cosine kNN (scikit-learn).
- ``batch_split_router``: per segment, the relaxed assignment LP on (d̂, ĝ) with the budgets
  pro-rated by the segment's share of the stream; each query goes to the argmax of its fractional
  column (not routed when the column is zero).
- ``predictor_router(kind)``: a trained predictor of (d, g) from the embedding (the paper fine-tunes
  RoBERTa; here scikit-learn's MLPRegressor on the sentence embeddings), with the greedy rules.
Offline (the whole stream known in advance; upper references, not deployable):
- ``offline_opt(d, g, budgets)``: the relaxed LP, solved by HiGHS, rounded by column argmax — on the
  true (d, g) it is Offline-Opt, on the estimates (d̂, ĝ) Offline-Approx-Opt.

Every constructor checks its arguments at once (the routers route later); NaN or inf in a table,
the budgets or the embeddings is refused (``ValueError``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import optimize, sparse

from paperkit import check_array, check_choice, check_int, describe, param_error
from portrouter.ann import ANNIndex, embeddings, unit_rows
from portrouter.features import history, neighbour_index, neighbour_means

__all__ = [
    "ExactKNNIndex",
    "batch_split_router",
    "greedy_router",
    "knn_router",
    "offline_opt",
    "predictor_router",
    "random_router",
    "relaxed_assignment",
]

KINDS = ("perf", "cost")


def _budgets(owner: str, budgets: Any, dims: dict) -> np.ndarray:
    budgets = check_array("budgets", owner, budgets, shape=("M",), dims=dims)
    if (budgets < 0).any():
        raise param_error("budgets", owner, "non-negative", describe(budgets))
    return budgets.astype(np.float64)


class _Greedy:
    """Greedy rule on per-query estimates; ``estimate(q) -> (d̂, ĝ)`` for q (b, dim)."""

    def __init__(self, estimate, dim, budgets, kind):
        self.estimate, self.dim, self.kind = estimate, dim, kind
        self.left = budgets.copy()

    def route_batch(self, q: np.ndarray) -> np.ndarray:
        d_hat, g_hat = self.estimate(embeddings(q, self.dim, "q", "route_batch"))
        if self.kind == "perf":
            return d_hat.argmax(axis=1)
        out = np.empty(len(d_hat), dtype=np.int64)
        for j in range(len(d_hat)):  # the estimate of what is left changes after every query
            out[j] = i = int(self.left.argmax())
            self.left[i] -= g_hat[j, i]
        return out


class _Random:
    def __init__(self, n_models, seed):
        self.M, self.rng = n_models, np.random.default_rng(seed)

    def route_batch(self, q: np.ndarray) -> np.ndarray:
        return self.rng.integers(0, self.M, size=len(q))


def random_router(n_models: int, seed: int = 0) -> _Random:
    """Uniformly random model for every query (``n_models`` >= 1, ``seed`` >= 0)."""
    n_models = check_int("n_models", "random_router", n_models, low=1)
    return _Random(n_models, check_int("seed", "random_router", seed, low=0))


def _greedy(owner, index, hist_d, hist_g, budgets, kind) -> _Greedy:
    index = neighbour_index("index", owner, index)
    dims: dict = {}
    hist_d, hist_g = history(owner, hist_d, hist_g, index, dims)
    budgets = _budgets(owner, budgets, dims)
    kind = check_choice("kind", owner, kind, KINDS)
    return _Greedy(lambda q: neighbour_means(index, hist_d, hist_g, q), index.dim, budgets, kind)


def greedy_router(
    index: ANNIndex, hist_d: np.ndarray, hist_g: np.ndarray, budgets: np.ndarray, kind: str = "perf"
) -> _Greedy:
    """Greedy-Perf / Greedy-Cost on ANN-estimated features: ``index`` over the history, its
    (n, M) quality and cost tables, the (M,) budgets; NaN or inf is refused."""
    return _greedy("greedy_router", index, hist_d, hist_g, budgets, kind)


class ExactKNNIndex:
    """Brute-force cosine kNN by scikit-learn over ``emb`` (n, dim), with :class:`ANNIndex`'s
    ``search`` interface; NaN or inf in ``emb`` or in the queries is refused."""

    def __init__(self, emb: np.ndarray, k: int = 5) -> None:
        from sklearn.neighbors import NearestNeighbors

        emb = check_array("emb", "ExactKNNIndex", emb, ndim=2)
        self.k = check_int("k", "ExactKNNIndex", k, low=1, high=len(emb))
        emb = unit_rows(emb)
        self.dim = emb.shape[1]
        self._nn = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute").fit(emb)
        self._n = len(emb)

    def __len__(self) -> int:
        return self._n

    def search(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most similar rows for each query (b, dim): (idx (b, k), cosine sim (b, k))."""
        q = unit_rows(embeddings(q, self.dim, "q", "ExactKNNIndex.search"))
        dist, idx = self._nn.kneighbors(q)
        return idx.astype(np.int64), (1.0 - dist).astype(np.float32)


def knn_router(
    hist_emb: np.ndarray,
    hist_d: np.ndarray,
    hist_g: np.ndarray,
    budgets: np.ndarray,
    kind: str = "perf",
    k: int = 5,
) -> _Greedy:
    """KNN-Perf / KNN-Cost: the greedy rules on exact-kNN features over the history's
    embeddings ``hist_emb`` (n, dim); NaN or inf is refused."""
    owner = "knn_router"
    dims: dict = {}
    hist_emb = check_array("hist_emb", owner, hist_emb, shape=("n", None), dims=dims)
    history(owner, hist_d, hist_g, dims=dims)
    k = check_int("k", owner, k, low=1, high=len(hist_emb))
    return _greedy(owner, ExactKNNIndex(hist_emb, k), hist_d, hist_g, budgets, kind)


def relaxed_assignment(
    d: np.ndarray, g: np.ndarray, budgets: np.ndarray
) -> tuple[float, np.ndarray]:
    """max Σ d_ij x_ij s.t. Σ_j g_ij x_ij ≤ B_i, Σ_i x_ij ≤ 1, 0 ≤ x ≤ 1, by HiGHS.

    ``d, g`` are (N, M) (queries × models), ``budgets`` (M,) finite and non-negative; returns the
    LP value and x (N, M). NaN or inf is refused."""
    return _relaxed(*_offline_inputs("relaxed_assignment", d, g, budgets))


def _offline_inputs(owner: str, d: Any, g: Any, budgets: Any):
    dims: dict = {}
    d = check_array("d", owner, d, shape=("N", "M"), dims=dims).astype(np.float64)
    g = check_array("g", owner, g, shape=("N", "M"), dims=dims).astype(np.float64)
    if (g < 0).any():
        raise param_error("g", owner, "non-negative costs", describe(g))
    return d, g, _budgets(owner, budgets, dims)


def _relaxed(d: np.ndarray, g: np.ndarray, budgets: np.ndarray) -> tuple[float, np.ndarray]:
    N, M = d.shape
    s = float(np.median(g[g > 0])) if (g > 0).any() else 1.0  # budget rows in typical-cost units
    g, budgets = g / s, np.asarray(budgets, dtype=np.float64) / s
    cols = np.arange(N * M)  # x flattened query-major: column j*M + i
    j, i = np.divmod(cols, M)
    A = sparse.vstack(
        [
            sparse.csr_matrix((g.ravel(), (i, cols)), shape=(M, N * M)),
            sparse.csr_matrix((np.ones(N * M), (j, cols)), shape=(N, N * M)),
        ]
    ).tocsr()
    b = np.concatenate([budgets, np.ones(N)])
    res = optimize.linprog(-d.ravel(), A_ub=A, b_ub=b, bounds=(0.0, 1.0), method="highs")
    if res.status != 0:
        raise RuntimeError(f"the assignment LP did not solve: {res.message}")
    return float(-res.fun), res.x.reshape(N, M)


def _round(x: np.ndarray) -> np.ndarray:
    """Column argmax of a fractional assignment; M ("not routed") where the column is empty."""
    best = x.argmax(axis=1)
    return np.where(x.max(axis=1) > 1e-9, best, x.shape[1])


def offline_opt(d: np.ndarray, g: np.ndarray, budgets: np.ndarray) -> tuple[float, np.ndarray]:
    """(LP value, rounded choices (N,)) of the relaxed offline optimum on the given (N, M)
    features and (M,) budgets; NaN or inf is refused."""
    value, x = _relaxed(*_offline_inputs("offline_opt", d, g, budgets))
    return value, _round(x)


class _BatchSplit:
    def __init__(self, index, hist_d, hist_g, budgets, n_queries):
        self.index, self.hist_d, self.hist_g = index, hist_d, hist_g
        self.budgets, self.n_queries = budgets, n_queries

    def route_batch(self, q: np.ndarray) -> np.ndarray:
        q = embeddings(q, self.index.dim, "q", "route_batch")
        d_hat, g_hat = neighbour_means(self.index, self.hist_d, self.hist_g, q)
        share = len(d_hat) / self.n_queries
        _, x = _relaxed(d_hat, g_hat, self.budgets * share)
        return _round(x)


def batch_split_router(
    index: ANNIndex, hist_d: np.ndarray, hist_g: np.ndarray, budgets: np.ndarray, n_queries: int
) -> _BatchSplit:
    """BatchSplit: the per-segment relaxed LP with pro-rated budgets (``n_queries``: the stream
    length the budgets are for); NaN or inf is refused."""
    owner = "batch_split_router"
    index = neighbour_index("index", owner, index)
    dims: dict = {}
    hist_d, hist_g = history(owner, hist_d, hist_g, index, dims)
    budgets = _budgets(owner, budgets, dims)
    n_queries = check_int("n_queries", owner, n_queries, low=1)
    return _BatchSplit(index, hist_d, hist_g, budgets, n_queries)


class _Predictor:
    def __init__(self, hist_emb, hist_d, hist_g, seed, max_iter):
        from sklearn.neural_network import MLPRegressor

        self.g_scale = float(hist_g.mean()) or 1.0  # costs ~1e-4: rescale for the regressor
        target = np.concatenate([hist_d, hist_g / self.g_scale], axis=1)
        self.model = MLPRegressor(
            hidden_layer_sizes=(256,), max_iter=max_iter, early_stopping=True, random_state=seed
        ).fit(unit_rows(hist_emb), target)
        self.M = hist_d.shape[1]

    def __call__(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pred = self.model.predict(unit_rows(q))
        return pred[:, : self.M], np.maximum(pred[:, self.M :], 0.0) * self.g_scale


def predictor_router(
    hist_emb: np.ndarray,
    hist_d: np.ndarray,
    hist_g: np.ndarray,
    budgets: np.ndarray,
    kind: str = "perf",
    seed: int = 0,
    max_iter: int = 200,
) -> _Greedy:
    """Predictor-Perf / Predictor-Cost: an MLP (hidden 256, at most ``max_iter`` epochs) trained on
    the history's embeddings (n, dim) and tables (n, M), then the greedy rules; NaN or inf is
    refused."""
    owner = "predictor_router"
    dims: dict = {}
    hist_emb = check_array("hist_emb", owner, hist_emb, shape=("n", None), dims=dims)
    hist_d, hist_g = history(owner, hist_d, hist_g, dims=dims)
    budgets = _budgets(owner, budgets, dims)
    kind = check_choice("kind", owner, kind, KINDS)
    seed = check_int("seed", owner, seed, low=0)
    max_iter = check_int("max_iter", owner, max_iter, low=1)
    model = _Predictor(hist_emb, hist_d, hist_g, seed, max_iter)
    return _Greedy(model, hist_emb.shape[1], budgets, kind)
