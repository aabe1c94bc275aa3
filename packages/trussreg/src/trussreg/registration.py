"""The registration estimator: graph, skeleton, truss, hypotheses, scoring and refinement."""

from __future__ import annotations

import time
from typing import Any

import networkx as nx
import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

from paperkit import Described, check_choice, check_int, check_real, param_error
from trussreg.geometry import is_degenerate, kabsch_unchecked, point_pair, points
from trussreg.graph import compatibility_graph, consensus_sample, edge_list
from trussreg.scoring import refine, score_hypotheses
from trussreg.truss import check_levels, node_truss, resolve, truss_decomposition

__all__ = ["STRUCTURES", "TrussRegistration", "candidate_sets"]

STRUCTURES = ("truss", "core")


def candidate_sets(
    edges: np.ndarray, levels: np.ndarray, n: int, delta_k: int, n_seeds: int
) -> list[np.ndarray]:
    """Candidate inlier sets from edge levels (truss numbers) on n nodes ordered by votes.

    For k = k_max down to max(3, k_max - delta_k), every connected component of the subgraph of
    edges with level >= k that has >= 3 nodes; then, for each of the first ``n_seeds`` nodes, the
    node and its neighbours inside the largest level-k subgraph that contains it. Duplicates are
    dropped, first occurrence kept; each set is a sorted array of node indices.

    Shapes:
        edges: (E, 2) integer node indices in [0, n) (E = 0: no sets).
        levels: (E,) non-negative integer levels, one per edge.
        returns: a list of (k_i,) int64 arrays, k_i >= 3.

    Floating arrays (and with them NaN and inf) are refused.

    >>> edges = [[0, 1], [0, 2], [1, 2], [2, 3]]
    >>> [s.tolist() for s in candidate_sets(edges, [3, 3, 3, 2], 4, delta_k=3, n_seeds=0)]
    [[0, 1, 2]]
    """
    owner = "candidate_sets"
    edges, levels, n = check_levels(owner, edges, levels, n)
    delta_k = check_int("delta_k", owner, delta_k, low=0)
    n_seeds = check_int("n_seeds", owner, n_seeds, low=0)
    sets: dict[tuple[int, ...], None] = {}
    if len(edges) == 0:
        return []
    k_max = int(levels.max())
    for k in range(k_max, max(3, k_max - delta_k) - 1, -1):
        sel = levels >= k
        graph = sparse.coo_matrix((np.ones(sel.sum()), (edges[sel, 0], edges[sel, 1])), (n, n))
        _, labels = connected_components(graph, directed=False)
        touched = np.zeros(n, dtype=bool)
        touched[edges[sel].ravel()] = True
        sizes = np.bincount(labels[touched], minlength=n)
        for label in np.flatnonzero(sizes >= 3):
            sets[tuple(np.flatnonzero(touched & (labels == label)))] = None
    node_level = node_truss(edges, levels, n)
    for seed in range(min(n_seeds, n)):
        k = node_level[seed]
        if k < 3:
            continue
        mine = (levels >= k) & ((edges[:, 0] == seed) | (edges[:, 1] == seed))
        members = np.unique(np.append(edges[mine].ravel(), seed))
        if len(members) >= 3:
            sets[tuple(members)] = None
    return [np.array(s, dtype=np.int64) for s in sets]


class TrussRegistration:
    r"""Robust rigid registration from putative correspondences by k-truss outlier rejection.

    ``fit(P, Q)`` runs the pipeline on N correspondences (p_i, q_i):

    1. compatibility graph A_ij = 1[| ||p_i - p_j|| - ||q_i - q_j|| | < tau_c];
    2. skeleton S = the top-m nodes by consensus votes v_i = (1/2) sum_j A_ij (A^2)_ij;
    3. truss numbers tau(e) of the graph on S (node truss = max over incident edges);
    4. candidate sets: components of the k-truss for k_max >= k >= max(3, k_max - delta_k), and
       each of the top ``n_seeds`` seeds' neighbourhood in its largest k-truss;
    5. a weighted Kabsch hypothesis per set (weights = node truss numbers);
    6. score on all N: sum_{r_i < tau_in} (tau_in - r_i)/tau_in * (1 + sds_weight * SDS);
    7. ``refine_iters`` least-squares re-fits on the best hypothesis' inliers.

    Args:
        tau_c: compatibility threshold (m); 0.1 indoors, 0.6 outdoors in the paper's setting.
        tau_in: inlier threshold (m), default ``tau_c``.
        m: skeleton size (``None``: all N, the "no consensus sampling" ablation).
        delta_k: how many truss levels below k_max give candidate sets.
        n_seeds: seeds whose truss neighbourhoods give candidate sets.
        sds_weight: lambda of the spatial distribution score (0: the "no SDS" ablation).
        refine_iters: least-squares refinement rounds.
        backend: truss backend, ``"reference"``, ``"cuda"`` or ``"auto"`` (identical numbers; see
            :func:`trussreg.truss_decomposition`).
        structure: ``"truss"`` (the method) or ``"core"`` (k-core numbers instead, an ablation).

    Shapes:
        ``fit(P, Q)``: P, Q (N, 3) source and target points of N >= 3 correspondences.
        ``transform(X)``: X (M, 3) -> (M, 3); M = 0 gives an empty result.

    NaN and inf points are refused (``ValueError``); integer points are cast to float64.

    Attributes after ``fit``: ``R_`` (3, 3), ``t_`` (3,), ``inliers_`` (N,) bool, ``success_``
    (False, with the identity, when no hypothesis has >= 3 inliers), ``k_max_``,
    ``n_hypotheses_``, ``skeleton_`` (indices into the N correspondences), ``score_``, ``sds_``
    and ``timings_`` (seconds per stage).
    """

    def __init__(
        self,
        tau_c: float = 0.1,
        tau_in: float | None = None,
        m: int | None = 500,
        delta_k: int = 3,
        n_seeds: int = 50,
        sds_weight: float = 1.0,
        refine_iters: int = 3,
        backend: str = "reference",
        structure: str = "truss",
    ):
        owner = "TrussRegistration"
        self.tau_c = check_real("tau_c", owner, tau_c, low=0, low_open=True)
        self.tau_in = (
            self.tau_c
            if tau_in is None
            else check_real("tau_in", owner, tau_in, low=0, low_open=True)
        )
        self.m = None if m is None else check_int("m", owner, m, low=3)
        self.delta_k = check_int("delta_k", owner, delta_k, low=0)
        self.n_seeds = check_int("n_seeds", owner, n_seeds, low=0)
        self.sds_weight = check_real("sds_weight", owner, sds_weight, low=0)
        self.refine_iters = check_int("refine_iters", owner, refine_iters, low=0)
        self.backend = resolve(owner, backend)
        self.structure = check_choice("structure", owner, structure, STRUCTURES)

    def _levels(self, A_s: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        if self.structure == "truss":
            return truss_decomposition(A_s, backend=self.backend)
        edges = edge_list(A_s)
        graph = nx.Graph()
        graph.add_nodes_from(range(A_s.shape[0]))
        graph.add_edges_from(edges.tolist())
        core = nx.core_number(graph)
        levels = np.array([min(core[u], core[v]) for u, v in edges.tolist()], dtype=np.int64)
        return edges, levels

    def fit(self, P: Any, Q: Any) -> TrussRegistration:
        """Estimate (R, t) with R p + t ~ q from (N, 3) source and target points; returns self."""
        P, Q = point_pair("TrussRegistration.fit", P, Q)
        if is_degenerate(P) or is_degenerate(Q):
            raise param_error(
                "P" if is_degenerate(P) else "Q",
                "TrussRegistration.fit",
                "points that are not all collinear",
                Described("collinear points"),
            )
        timings: dict[str, float] = {}
        clock = time.perf_counter()

        def lap(name: str) -> None:
            nonlocal clock
            now = time.perf_counter()
            timings[name] = now - clock
            clock = now

        A = compatibility_graph(P, Q, self.tau_c)
        lap("graph")
        skeleton = consensus_sample(A, self.m) if self.m is not None else np.arange(len(P))
        A_s = A[skeleton][:, skeleton]
        lap("sample")
        edges, levels = self._levels(A_s)
        lap("truss")
        weights = node_truss(edges, levels, len(skeleton)).astype(np.float64)
        sets = candidate_sets(edges, levels, len(skeleton), self.delta_k, self.n_seeds)
        sets = [s for s in sets if not is_degenerate(P[skeleton[s]])]
        hypotheses = [kabsch_unchecked(P[skeleton[s]], Q[skeleton[s]], weights[s]) for s in sets]
        lap("hypotheses")
        self.k_max_ = int(levels.max()) if len(levels) else 0
        self.n_hypotheses_ = len(hypotheses)
        self.skeleton_ = skeleton
        self.R_, self.t_ = np.eye(3), np.zeros(3)
        self.inliers_ = np.zeros(len(P), dtype=bool)
        self.score_, self.sds_, self.success_ = 0.0, 0.0, False
        if hypotheses:
            Rs = np.stack([h[0] for h in hypotheses])
            ts = np.stack([h[1] for h in hypotheses])
            scores, counts, sds = score_hypotheses(Rs, ts, P, Q, self.tau_in, self.sds_weight)
            best = int(np.argmax(np.where(counts >= 3, scores, -np.inf)))
            lap("score")
            if counts[best] >= 3:
                R, t, inliers = refine(Rs[best], ts[best], P, Q, self.tau_in, self.refine_iters)
                self.R_, self.t_, self.inliers_ = R, t, inliers
                self.score_, self.sds_ = float(scores[best]), float(sds[best])
                self.success_ = bool(inliers.sum() >= 3)
            lap("refine")
        timings["total"] = sum(timings.values())
        self.timings_ = timings
        return self

    def transform(self, X: Any) -> np.ndarray:
        """Apply the fitted transform to (n, 3) points: X R^T + t."""
        if not hasattr(self, "R_"):
            raise RuntimeError("This TrussRegistration is not fitted yet; call fit(P, Q) first.")
        X = points("X", "TrussRegistration.transform", X, label="M", nonempty=False)
        return X @ self.R_.T + self.t_
