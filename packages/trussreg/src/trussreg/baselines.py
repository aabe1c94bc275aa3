"""Baselines on the same compatibility graphs: RANSAC, max k-core, spectral, maximal cliques.

Each takes the (N, 3) source and target points ``P`` and ``Q`` of N >= 3 correspondences (NaN and
inf refused, integers cast to float64), returns a :class:`RegistrationResult` (``R``, ``t``,
``inliers``, ``success``, ``seconds``) and refines its pick with the same least-squares rounds as
:class:`trussreg.TrussRegistration`.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Any

import networkx as nx
import numpy as np
from scipy.sparse.linalg import eigsh

from paperkit import check_int, check_real
from trussreg.geometry import is_degenerate, kabsch_unchecked, point_pair
from trussreg.graph import compatibility_graph, consensus_sample, edge_list
from trussreg.scoring import RESIDUAL_BLOCK, mae_scores, refine, residuals, score_hypotheses

__all__ = [
    "RegistrationResult",
    "kcore_registration",
    "maximal_clique_registration",
    "ransac",
    "spectral_registration",
]

#: MAC-lite enumerates cliques on skeletons of at most this many nodes (exponential worst case).
MAX_CLIQUE_NODES = 300


@dataclass
class RegistrationResult:
    """A baseline's estimate: rotation (3, 3), translation (3,), inlier mask (N,), whether a
    hypothesis with >= 3 inliers was found, and the wall time in seconds."""

    R: np.ndarray
    t: np.ndarray
    inliers: np.ndarray
    success: bool
    seconds: float


def _finish(R, t, P, Q, tau_in, start, refine_iters=3) -> RegistrationResult:
    if R is None:
        return RegistrationResult(
            np.eye(3), np.zeros(3), np.zeros(len(P), bool), False, time.perf_counter() - start
        )
    R, t, inliers = refine(R, t, P, Q, tau_in, refine_iters)
    ok = bool(inliers.sum() >= 3)
    return RegistrationResult(R, t, inliers, ok, time.perf_counter() - start)


def ransac(
    P: Any, Q: Any, iters: int = 50000, tau: float = 0.1, seed: int = 0, confidence: float = 0.999
) -> RegistrationResult:
    r"""Vectorised 3-point RANSAC: up to ``iters`` random minimal samples, Kabsch on each
    (batched), keeping the hypothesis with the largest MAE score
    :math:`\sum_{r_i<\tau} (\tau - r_i)/\tau`.

    Stops early, as usual, once the samples drawn reach
    :math:`\log(1 - \text{confidence}) / \log(1 - w^3)` for the best inlier fraction w so far.

    Shapes:
        P, Q: (N, 3) source and target points, N >= 3 (NaN and inf refused).
        returns: a :class:`RegistrationResult` with R (3, 3), t (3,) and inliers (N,).
    """
    P, Q = point_pair("ransac", P, Q)
    iters = check_int("iters", "ransac", iters, low=1)
    tau = check_real("tau", "ransac", tau, low=0, low_open=True)
    seed = check_int("seed", "ransac", seed, low=0)
    confidence = check_real(
        "confidence", "ransac", confidence, low=0, high=1, low_open=True, high_open=True
    )
    start = time.perf_counter()
    rng = np.random.default_rng(seed)
    best, best_score, best_count = None, 0.0, 0
    for lo in range(0, iters, RESIDUAL_BLOCK):
        w = best_count / len(P)
        if w > 0 and lo >= np.log(1 - confidence) / np.log(max(1 - w**3, 1e-300)):
            break
        size = min(RESIDUAL_BLOCK, iters - lo)
        idx = rng.integers(0, len(P), (size, 3))
        Ps, Qs = P[idx], Q[idx]
        # distinct and non-collinear samples only (a zero cross product covers repeated indices)
        ok = np.linalg.norm(np.cross(Ps[:, 1] - Ps[:, 0], Ps[:, 2] - Ps[:, 0]), axis=1) > 1e-9
        if not ok.any():
            continue
        Rs, ts = kabsch_unchecked(Ps[ok], Qs[ok])
        r = residuals(Rs, ts, P, Q)
        scores = mae_scores(r, tau)
        i = int(np.argmax(scores))
        if scores[i] > best_score:
            best, best_score = (Rs[i], ts[i]), float(scores[i])
            best_count = int((r[i] < tau).sum())
    R, t = best if best is not None else (None, None)
    return _finish(R, t, P, Q, tau, start)


def kcore_registration(
    P: Any, Q: Any, tau: float = 0.1, m: int | None = None
) -> RegistrationResult:
    """TEASER-style pruning without the clique: the maximum k-core of the compatibility graph
    (on the top-``m`` skeleton when ``m`` is set), then Kabsch on its nodes.

    Shapes:
        P, Q: (N, 3) source and target points, N >= 3 (NaN and inf refused).
        returns: a :class:`RegistrationResult` with R (3, 3), t (3,) and inliers (N,).
    """
    P, Q = point_pair("kcore_registration", P, Q)
    tau = check_real("tau", "kcore_registration", tau, low=0, low_open=True)
    m = None if m is None else check_int("m", "kcore_registration", m, low=3)
    start = time.perf_counter()
    A = compatibility_graph(P, Q, tau)
    nodes = consensus_sample(A, m) if m is not None else np.arange(len(P))
    graph = nx.Graph()
    graph.add_edges_from(nodes[edge_list(A[nodes][:, nodes])].tolist())
    R = t = None
    if graph.number_of_edges():
        core = np.array(sorted(nx.k_core(graph).nodes))
        if not is_degenerate(P[core]):
            R, t = kabsch_unchecked(P[core], Q[core])
    return _finish(R, t, P, Q, tau, start)


def spectral_registration(P: Any, Q: Any, tau: float = 0.1) -> RegistrationResult:
    r"""Spectral matching (SM / SC² style): the leading eigenvector u of the soft compatibility
    matrix S_ij = max(0, 1 - d_ij^2/tau^2); Kabsch weighted by u on {i : u_i >= max(u) / 2}.

    Shapes:
        P, Q: (N, 3) source and target points, N >= 3 (NaN and inf refused).
        returns: a :class:`RegistrationResult` with R (3, 3), t (3,) and inliers (N,).
    """
    P, Q = point_pair("spectral_registration", P, Q)
    tau = check_real("tau", "spectral_registration", tau, low=0, low_open=True)
    start = time.perf_counter()
    S = compatibility_graph(P, Q, tau, soft=True)
    R = t = None
    if S.nnz:
        _, vec = eigsh(S, k=1, which="LA", v0=np.ones(len(P)))
        u = np.abs(vec[:, 0])
        chosen = u >= u.max() / 2
        if not is_degenerate(P[chosen]):
            R, t = kabsch_unchecked(P[chosen], Q[chosen], u[chosen])
    return _finish(R, t, P, Q, tau, start)


def maximal_clique_registration(
    P: Any, Q: Any, tau: float = 0.1, m: int = 300, max_cliques: int = 5000
) -> RegistrationResult:
    """MAC-lite: maximal cliques (networkx ``find_cliques``) of the top-``m`` skeleton, m <= 300;
    for each node its largest clique (MAC's node-guided selection) gives a Kabsch hypothesis,
    scored by the MAE score on all correspondences. At most ``max_cliques`` are enumerated.

    Shapes:
        P, Q: (N, 3) source and target points, N >= 3 (NaN and inf refused).
        returns: a :class:`RegistrationResult` with R (3, 3), t (3,) and inliers (N,).
    """
    owner = "maximal_clique_registration"
    P, Q = point_pair(owner, P, Q)
    tau = check_real("tau", owner, tau, low=0, low_open=True)
    m = check_int("m", owner, m, low=3, high=MAX_CLIQUE_NODES)
    max_cliques = check_int("max_cliques", owner, max_cliques, low=1)
    start = time.perf_counter()
    A = compatibility_graph(P, Q, tau)
    nodes = consensus_sample(A, m)
    graph = nx.Graph()
    graph.add_edges_from(edge_list(A[nodes][:, nodes]).tolist())
    best_of: dict[int, tuple[int, ...]] = {}
    for clique in itertools.islice(nx.find_cliques(graph), max_cliques):
        if len(clique) < 3:
            continue
        for v in clique:
            if len(clique) > len(best_of.get(v, ())):
                best_of[v] = tuple(sorted(clique))
    hypotheses = [
        kabsch_unchecked(P[nodes[list(c)]], Q[nodes[list(c)]])
        for c in dict.fromkeys(best_of.values())
        if not is_degenerate(P[nodes[list(c)]])
    ]
    R = t = None
    if hypotheses:
        Rs = np.stack([h[0] for h in hypotheses])
        ts = np.stack([h[1] for h in hypotheses])
        scores, counts, _ = score_hypotheses(Rs, ts, P, Q, tau, 0.0)
        best = int(np.argmax(np.where(counts >= 3, scores, -np.inf)))
        if counts[best] >= 3:
            R, t = Rs[best], ts[best]
    return _finish(R, t, P, Q, tau, start)
