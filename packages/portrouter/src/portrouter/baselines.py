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
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, sparse

from paperkit import check_choice, param_error
from portrouter.ann import ANNIndex, normalize
from portrouter.features import check_table, estimate_features

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


class _Greedy:
    """Greedy rule on per-query estimates; ``estimate(q) -> (d̂, ĝ)``."""

    def __init__(self, estimate, budgets, kind):
        self.estimate, self.kind = estimate, check_choice("kind", "greedy_router", kind, KINDS)
        self.left = np.asarray(budgets, dtype=np.float64).copy()

    def route_batch(self, q: np.ndarray) -> np.ndarray:
        d_hat, g_hat = self.estimate(q)
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
    """Uniformly random model for every query."""
    if n_models < 1:
        raise param_error("n_models", "random_router", "a positive integer", n_models)
    return _Random(n_models, seed)


def greedy_router(
    index: ANNIndex, hist_d: np.ndarray, hist_g: np.ndarray, budgets: np.ndarray, kind: str = "perf"
) -> _Greedy:
    """Greedy-Perf / Greedy-Cost on ANN-estimated features."""
    return _Greedy(lambda q: estimate_features(index, hist_d, hist_g, q), budgets, kind)


class ExactKNNIndex:
    """Brute-force cosine kNN by scikit-learn, with :class:`ANNIndex`'s ``search`` interface."""

    def __init__(self, emb: np.ndarray, k: int = 5) -> None:
        from sklearn.neighbors import NearestNeighbors

        emb = normalize(emb)
        if not 1 <= k <= len(emb):
            raise param_error("k", "ExactKNNIndex", f"in [1, {len(emb)}]", k)
        self.k, self.dim = k, emb.shape[1]
        self._nn = NearestNeighbors(n_neighbors=k, metric="cosine", algorithm="brute").fit(emb)
        self._n = len(emb)

    def __len__(self) -> int:
        return self._n

    def search(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        dist, idx = self._nn.kneighbors(normalize(q))
        return idx.astype(np.int64), (1.0 - dist).astype(np.float32)


def knn_router(
    hist_emb: np.ndarray,
    hist_d: np.ndarray,
    hist_g: np.ndarray,
    budgets: np.ndarray,
    kind: str = "perf",
    k: int = 5,
) -> _Greedy:
    """KNN-Perf / KNN-Cost: the greedy rules on exact-kNN features."""
    index = ExactKNNIndex(hist_emb, k)
    return _Greedy(lambda q: estimate_features(index, hist_d, hist_g, q), budgets, kind)


def relaxed_assignment(
    d: np.ndarray, g: np.ndarray, budgets: np.ndarray
) -> tuple[float, np.ndarray]:
    """max Σ d_ij x_ij s.t. Σ_j g_ij x_ij ≤ B_i, Σ_i x_ij ≤ 1, 0 ≤ x ≤ 1, by HiGHS.

    ``d, g`` are (N, M) (queries × models); returns the LP value and x (N, M)."""
    d = check_table(d, "d", "relaxed_assignment")
    g = check_table(g, "g", "relaxed_assignment", d.shape[1])
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
    """(LP value, rounded choices (N,)) of the relaxed offline optimum on the given features."""
    value, x = relaxed_assignment(d, g, budgets)
    return value, _round(x)


class _BatchSplit:
    def __init__(self, index, hist_d, hist_g, budgets, n_queries):
        self.index, self.hist_d, self.hist_g = index, hist_d, hist_g
        self.budgets, self.n_queries = np.asarray(budgets, dtype=np.float64), n_queries

    def route_batch(self, q: np.ndarray) -> np.ndarray:
        d_hat, g_hat = estimate_features(self.index, self.hist_d, self.hist_g, q)
        share = len(d_hat) / self.n_queries
        _, x = relaxed_assignment(d_hat, g_hat, self.budgets * share)
        return _round(x)


def batch_split_router(
    index: ANNIndex, hist_d: np.ndarray, hist_g: np.ndarray, budgets: np.ndarray, n_queries: int
) -> _BatchSplit:
    """BatchSplit: the per-segment relaxed LP with pro-rated budgets."""
    if n_queries < 1:
        raise param_error("n_queries", "batch_split_router", "a positive integer", n_queries)
    return _BatchSplit(index, hist_d, hist_g, budgets, n_queries)


class _Predictor:
    def __init__(self, hist_emb, hist_d, hist_g, seed, max_iter):
        from sklearn.neural_network import MLPRegressor

        self.g_scale = float(hist_g.mean()) or 1.0  # costs ~1e-4: rescale for the regressor
        target = np.concatenate([hist_d, hist_g / self.g_scale], axis=1)
        self.model = MLPRegressor(
            hidden_layer_sizes=(256,), max_iter=max_iter, early_stopping=True, random_state=seed
        ).fit(normalize(hist_emb), target)
        self.M = hist_d.shape[1]

    def __call__(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        pred = self.model.predict(normalize(q))
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
    """Predictor-Perf / Predictor-Cost: an MLP trained on the history, then the greedy rules."""
    hist_d = check_table(hist_d, "hist_d", "predictor_router")
    hist_g = check_table(hist_g, "hist_g", "predictor_router", hist_d.shape[1])
    return _Greedy(_Predictor(hist_emb, hist_d, hist_g, seed, max_iter), budgets, kind)
