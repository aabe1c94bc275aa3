"""Nearest neighbours of a query among the historical queries.

PORT estimates a query's per-model quality and cost from its k most similar historical queries
(cosine similarity of unit-norm sentence embeddings). Three interchangeable back ends:

- ``"hnsw"``: hnswlib's HNSW graph (cosine space; M=32, ef_construction=200, ef=50 as in the
  paper's code) — sub-linear search, approximate;
- ``"faiss"``: faiss ``IndexFlatIP`` on normalised vectors — exact, BLAS brute force;
- ``"exact"``: numpy brute force (the reference the tests compare against).

NaN policy: embeddings with NaN or inf are refused (``ValueError``) by every function here.
"""

from __future__ import annotations

import numpy as np

from paperkit import check_array, check_choice, check_int, describe, param_error

__all__ = ["ANNIndex", "embeddings", "normalize", "recall_at_k", "unit_rows"]

METHODS = ("hnsw", "faiss", "exact")


def unit_rows(x: np.ndarray) -> np.ndarray:
    """:func:`normalize` on a validated array."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def normalize(x: np.ndarray) -> np.ndarray:
    """Rows of ``x`` (n, p) scaled to unit Euclidean norm (float32); zero rows are left at zero.
    NaN or inf is refused."""
    return unit_rows(check_array("x", "normalize", x, ndim=2))


def recall_at_k(found: np.ndarray, truth: np.ndarray) -> float:
    """Mean over queries of |found ∩ truth| / k, for (b, k) neighbour ids (truth: exact search).

    Both are integer arrays of the same shape with non-negative ids."""
    dims: dict = {}
    found = check_array("found", "recall_at_k", found, shape=("b", "k"), dims=dims, kind="int")
    truth = check_array("truth", "recall_at_k", truth, shape=("b", "k"), dims=dims, kind="int")
    for name, ids in (("found", found), ("truth", truth)):
        if ids.min() < 0:
            raise param_error(name, "recall_at_k", "non-negative ids", describe(ids))
    k = truth.shape[1]
    return float(np.mean([len(set(a) & set(b)) / k for a, b in zip(found, truth, strict=True)]))


def embeddings(x: np.ndarray, dim: int, name: str, owner: str) -> np.ndarray:
    """``x`` as a finite float32 (n, dim) array (one row may be given as (dim,))."""
    x = check_array(name, owner, x, ndim=(1, 2))
    if x.shape[-1] != dim:
        raise param_error(name, owner, f"of shape (n, {dim})", describe(x))
    return (x[None, :] if x.ndim == 1 else x).astype(np.float32)


class ANNIndex:
    """A k-nearest-neighbour index over unit-norm embeddings (cosine similarity).

    ``method`` picks the back end, ``dim`` the embedding width, ``k`` the neighbours returned;
    ``M``, ``ef_construction``, ``ef``, ``seed`` and ``threads`` (-1: all cores) set up HNSW.
    Embeddings with NaN or inf are refused by :meth:`add` and :meth:`search`.

    >>> idx = ANNIndex("exact", dim=3, k=1)
    >>> idx.add(np.eye(3))
    >>> idx.search(np.array([[0.1, 0.9, 0.0]]))[0].tolist()
    [[1]]
    """

    def __init__(
        self,
        method: str = "hnsw",
        dim: int = 384,
        k: int = 5,
        M: int = 32,
        ef_construction: int = 200,
        ef: int = 50,
        seed: int = 0,
        threads: int = 1,
    ) -> None:
        owner = "ANNIndex"
        self.method = check_choice("method", owner, method, METHODS)
        self.dim = check_int("dim", owner, dim, low=1)
        self.k = check_int("k", owner, k, low=1)
        self.M = check_int("M", owner, M, low=2)
        self.ef_construction = check_int("ef_construction", owner, ef_construction, low=1)
        self.ef = check_int("ef", owner, ef, low=1)
        self.seed = check_int("seed", owner, seed, low=0)
        # HNSW build threads (-1: all cores); 1 keeps the graph reproducible under a seed
        self.threads = check_int("threads", owner, threads, low=-1)
        if self.threads == 0:
            raise param_error("threads", owner, "a positive integer or -1 (all cores)", 0)
        self._data = np.zeros((0, self.dim), dtype=np.float32)
        self._index = None

    def __len__(self) -> int:
        return len(self._data)

    def add(self, emb: np.ndarray) -> None:
        """Add rows of ``emb`` (n, dim); they are normalised. Ids continue from ``len(self)``.
        NaN or inf is refused."""
        emb = unit_rows(embeddings(emb, self.dim, "emb", "ANNIndex.add"))
        start = len(self._data)
        self._data = np.concatenate([self._data, emb])
        if self.method == "hnsw":
            import hnswlib

            if self._index is None:
                self._index = hnswlib.Index(space="cosine", dim=self.dim)
                self._index.init_index(
                    max_elements=len(self._data),
                    ef_construction=self.ef_construction,
                    M=self.M,
                    random_seed=self.seed,
                )
            else:
                self._index.resize_index(len(self._data))
            self._index.add_items(emb, np.arange(start, len(self._data)), num_threads=self.threads)
            self._index.set_ef(max(self.ef, self.k))
        elif self.method == "faiss":
            import faiss

            if self._index is None:
                self._index = faiss.IndexFlatIP(self.dim)
            self._index.add(emb)

    def search(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The ``k`` most similar stored rows for each query row: (idx (b, k) int64, sim (b, k)),
        best first; ``sim`` is the cosine similarity. NaN or inf in ``q`` is refused."""
        q = unit_rows(embeddings(q, self.dim, "q", "ANNIndex.search"))
        if self.k > len(self._data):
            raise param_error(
                "k", "ANNIndex", f"at most the history size ({len(self._data)})", self.k
            )
        if self.method == "hnsw":
            labels, dist = self._index.knn_query(q, k=self.k, num_threads=1)
            return labels.astype(np.int64), (1.0 - dist).astype(np.float32)
        if self.method == "faiss":
            sim, labels = self._index.search(q, self.k)
            return labels.astype(np.int64), sim
        sims = q @ self._data.T
        part = np.argpartition(-sims, self.k - 1, axis=1)[:, : self.k]
        order = np.argsort(-np.take_along_axis(sims, part, axis=1), axis=1, kind="stable")
        idx = np.take_along_axis(part, order, axis=1)
        return idx.astype(np.int64), np.take_along_axis(sims, idx, axis=1)
