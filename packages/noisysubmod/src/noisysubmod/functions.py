r"""The test functions: weighted coverage, graph cut and facility location, vectorised over masks.

Each is a callable on one set (index array, set or mask (n,)) and has ``evaluate(masks)`` for a
batch of boolean masks (batch, n), plus ``.n`` and ``.is_monotone``. NaN policy: the data
(weights, adjacency, similarities) must be finite and >= 0, else ValueError.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import sparse

from noisysubmod.sets import as_mask
from paperkit import check_array, check_int, check_real, param_error

__all__ = ["FacilityLocation", "GraphCut", "SetFunction", "WeightedCoverage"]

_CHUNK = 4096


class SetFunction:
    """A set function f: 2^N -> R>=0 on N = {0, ..., n-1}; subclasses define ``_values``."""

    n: int
    is_monotone: bool

    def _values(self, masks: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def evaluate(self, masks: np.ndarray) -> np.ndarray:
        """f(S) for every row of ``masks`` (batch, n), in chunks of 4096 rows."""
        masks = np.asarray(masks, dtype=bool)
        if masks.ndim != 2 or masks.shape[1] != self.n:
            raise param_error(
                "masks",
                f"{type(self).__name__}.evaluate",
                f"a boolean array (batch, {self.n})",
                masks.shape,
            )
        out = np.empty(len(masks))
        for start in range(0, len(masks), _CHUNK):
            out[start : start + _CHUNK] = self._values(masks[start : start + _CHUNK])
        return out

    def _gains(self, masks: np.ndarray, cand: np.ndarray) -> np.ndarray:  # pragma: no cover
        raise NotImplementedError

    def extensions(self, masks: np.ndarray, cand: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(f(S) (batch,), f(S + e) (batch, len(cand))): one marginal-gain computation per row
        instead of len(cand) set evaluations."""
        masks = np.asarray(masks, dtype=bool)
        base = self.evaluate(masks)
        ext = np.empty((len(masks), len(cand)))
        step = max(1, _CHUNK // 4)
        for s in range(0, len(masks), step):
            gains = self._gains(masks[s : s + step], cand)
            gains[masks[s : s + step][:, cand]] = 0.0
            ext[s : s + step] = np.maximum(base[s : s + step, None] + gains, 0.0)
        return base, ext

    def __call__(self, S: Any) -> float:
        """f(S) for one set S (indices, a set, or a boolean mask (n,))."""
        return float(self.evaluate(as_mask(S, self.n, "S", type(self).__name__)[None])[0])


class WeightedCoverage(SetFunction):
    r"""f(S) = sum_u w_u [exists i in S: A_iu]: monotone submodular.

    Args:
        incidence: boolean (n, U), row i the items set i covers.
        weights: item weights (U,), finite and >= 0.

    >>> f = WeightedCoverage(np.array([[1, 1, 0], [0, 1, 1]], bool), np.array([1.0, 2.0, 4.0]))
    >>> f([0]), f([0, 1]), f.is_monotone
    (3.0, 7.0, True)
    """

    is_monotone = True

    def __init__(self, incidence: np.ndarray, weights: np.ndarray) -> None:
        owner = "WeightedCoverage"
        dims: dict = {}
        A = check_array("incidence", owner, incidence, shape=("n", "U"), dims=dims, kind="bool")
        w = check_array("weights", owner, weights, shape=("U",), dims=dims)
        if np.any(w < 0):
            raise param_error("weights", owner, "weights >= 0", describe_min(w))
        self.n = A.shape[0]
        self.incidence = A.astype(np.float32)
        self.weights = w.astype(np.float64)
        self._weighted = self.incidence.astype(np.float64)  # C order: BLAS on both operands

    @classmethod
    def random(
        cls, n: int, universe: int, density: float = 0.03, seed: int = 0
    ) -> WeightedCoverage:
        """n sets over ``universe`` items; each (set, item) incidence w.p. ``density``, item
        weights U(0, 1)."""
        owner = "WeightedCoverage.random"
        n = check_int("n", owner, n, low=1, high=10**6)
        universe = check_int("universe", owner, universe, low=1, high=10**7)
        density = check_real("density", owner, density, low=0, high=1, low_open=True)
        seed = check_int("seed", owner, seed, low=0)
        if n * universe > 10**9:
            raise param_error("universe", owner, "n * universe <= 1e9", universe)
        rng = np.random.default_rng(seed)
        return cls(rng.random((n, universe)) < density, rng.random(universe))

    def _values(self, masks: np.ndarray) -> np.ndarray:
        counts = masks.astype(np.float32) @ self.incidence  # (batch, U)
        return (counts > 0) @ self.weights

    def _gains(self, masks: np.ndarray, cand: np.ndarray) -> np.ndarray:
        # f(S + e) - f(S) = sum of the weights of e's items that S leaves uncovered
        uncovered = (masks.astype(np.float32) @ self.incidence) == 0
        return (self._weighted[cand] @ (uncovered * self.weights).T).T


class GraphCut(SetFunction):
    r"""f(S) = sum_{i in S, j notin S} W_ij, the weight of the cut (S, N \ S): non-monotone
    submodular. Vectorised as d^T x - x^T W x for the mask x and degrees d = W 1.

    >>> f = GraphCut(np.array([[0, 1, 1], [1, 0, 0], [1, 0, 0]], float))
    >>> f([0]), f([1]), f([0, 1, 2]), f.is_monotone
    (2.0, 1.0, 0.0, False)
    """

    is_monotone = False

    def __init__(self, adjacency: np.ndarray) -> None:
        owner = "GraphCut"
        W = check_array("adjacency", owner, adjacency, shape=("n", "n")).astype(float)
        if np.any(W < 0) or not np.allclose(W, W.T):
            raise param_error("adjacency", owner, "symmetric with entries >= 0", describe_min(W))
        self.n = W.shape[0]
        self.adjacency = sparse.csr_matrix(W)
        self.degree = W.sum(axis=1)

    @classmethod
    def from_networkx(cls, graph: Any) -> GraphCut:
        """The cut function of a networkx graph (edge attribute ``weight``, default 1)."""
        import networkx as nx

        if not isinstance(graph, nx.Graph):
            raise param_error(
                "graph", "GraphCut.from_networkx", "a networkx.Graph", graph, cls=TypeError
            )
        if graph.number_of_nodes() == 0:
            raise param_error("graph", "GraphCut.from_networkx", "a non-empty graph", graph)
        W = nx.to_numpy_array(graph, weight="weight")
        return cls(np.maximum(W, W.T))

    def _values(self, masks: np.ndarray) -> np.ndarray:
        x = masks.astype(float)
        return np.maximum(x @ self.degree - np.einsum("bi,bi->b", x, (self.adjacency @ x.T).T), 0)

    def _gains(self, masks: np.ndarray, cand: np.ndarray) -> np.ndarray:
        # f(S + e) - f(S) = d_e - 2 sum_{j in S} W_ej for e notin S
        inside = (self.adjacency[cand] @ masks.T.astype(float)).T  # (batch, len(cand))
        return self.degree[cand] - 2.0 * inside


class FacilityLocation(SetFunction):
    r"""f(S) = sum_c max_{j in S} s_cj (0 for S empty), clients c, facilities j: monotone
    submodular for similarities s >= 0.

    Args:
        similarity: (clients, n) similarities, finite and >= 0.

    >>> f = FacilityLocation(np.array([[1.0, 0.2], [0.0, 0.5]]))
    >>> f([0]), f([0, 1])
    (1.0, 1.5)
    """

    is_monotone = True

    def __init__(self, similarity: np.ndarray) -> None:
        owner = "FacilityLocation"
        s = check_array("similarity", owner, similarity, shape=("C", "n")).astype(float)
        if np.any(s < 0):
            raise param_error("similarity", owner, "similarities >= 0", describe_min(s))
        self.n = s.shape[1]
        self.similarity = np.concatenate([s, np.zeros((len(s), 1))], axis=1)  # column n: none

    @classmethod
    def rbf(cls, X: np.ndarray, gamma: float | None = None) -> FacilityLocation:
        """Clients and facilities the rows of X; s_cj = exp(-gamma |x_c - x_j|^2), gamma
        defaulting to 1 / (median squared distance)."""
        owner = "FacilityLocation.rbf"
        X = check_array("X", owner, X, ndim=2).astype(float)
        if len(X) > 20000:
            raise param_error("X", owner, "at most 20000 rows", X.shape)
        sq = (X * X).sum(1)
        d2 = np.maximum(sq[:, None] + sq[None] - 2 * X @ X.T, 0)
        if gamma is None:
            med = float(np.median(d2[np.triu_indices(len(X), 1)])) if len(X) > 1 else 1.0
            gamma = 1.0 / med if med > 0 else 1.0
        gamma = check_real("gamma", owner, gamma, low=0, low_open=True)
        return cls(np.exp(-gamma * d2))

    def _values(self, masks: np.ndarray) -> np.ndarray:
        sizes = masks.sum(axis=1)
        width = max(int(sizes.max(initial=0)), 1)
        order = np.argsort(~masks, axis=1, kind="stable")[:, :width]  # chosen indices first
        order = np.where(np.arange(width)[None] < sizes[:, None], order, self.n)
        out = np.empty(len(masks))
        step = max(1, 2**22 // (len(self.similarity) * width))
        for s in range(0, len(masks), step):
            sims = self.similarity[:, order[s : s + step]]  # (C, b, width)
            out[s : s + step] = sims.max(axis=2).sum(axis=0)
        return out

    def _gains(self, masks: np.ndarray, cand: np.ndarray) -> np.ndarray:
        # f(S + e) - f(S) = sum_c max(s_ce - max_{j in S} s_cj, 0)
        sizes = masks.sum(axis=1)
        width = max(int(sizes.max(initial=0)), 1)
        order = np.argsort(~masks, axis=1, kind="stable")[:, :width]
        order = np.where(np.arange(width)[None] < sizes[:, None], order, self.n)
        cur = self.similarity[:, order].max(axis=2).T  # (batch, C)
        s_c = self.similarity[:, cand]  # (C, len(cand))
        return np.maximum(s_c[None] - cur[:, :, None], 0.0).sum(axis=1)


def describe_min(a: np.ndarray) -> str:
    """``'an array with minimum <m>'``: what a non-negativity check saw."""
    return f"an array with minimum {float(np.min(a)):.3g}"
