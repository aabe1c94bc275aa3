"""Task-specific Hybrid Matching and Dynamic Query Filtering (the paper's Sec. 3).

* :func:`matching_cost`: the DETR3D / PF-Track matching cost ``2.0 * focal + 0.25 * L1``.
* :func:`hungarian_one_to_one`: the S-decoder's one-to-one assignment of object queries to the
  newborn targets (targets not held by a track query).
* :func:`topk_one_to_many`: the C-decoder's one-to-many assignment of object queries to ALL
  targets: up to ``k`` queries per target, one target per query, conflicts to the lowest cost.
* :class:`DynamicQueryFilter`: keeps the low-cost mode of the candidates' costs when the costs
  are bimodal (the training state has a separated group of good candidates), else only the best
  candidate per target.
* :func:`hybrid_match`: all of it for one batch of one decoder layer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import torch
from scipy.optimize import linear_sum_assignment

from paperkit import check_array, check_bool, check_int, check_real, check_tensor, param_error

__all__ = [
    "DynamicQueryFilter",
    "hungarian_one_to_one",
    "hybrid_match",
    "matching_cost",
    "topk_one_to_many",
]

#: Floor of the variances in the EM fits (a pool of equal costs has variance 0).
VAR_FLOOR = 1e-6
#: Focal-loss constants of the classification cost (DETR3D / PF-Track: alpha 0.25, gamma 2).
FOCAL_ALPHA, FOCAL_GAMMA = 0.25, 2.0


def matching_cost(
    logits: torch.Tensor,
    boxes: torch.Tensor,
    gt_labels: torch.Tensor,
    gt_boxes: torch.Tensor,
    w_cls: float = 2.0,
    w_l1: float = 0.25,
) -> torch.Tensor:
    """Pairwise matching cost ``(Q, G)`` between predictions and targets (no gradient):

        C[q, g] = w_cls * (pos(p_qc) - neg(p_qc)) + w_l1 * |b_q - b_g|_1,  c = label of g,
        pos(p) = alpha (1 - p)^gamma (-log p),  neg(p) = (1 - alpha) p^gamma (-log(1 - p)),

    with ``p = sigmoid(logits)``, alpha = 0.25, gamma = 2 (the focal classification cost of
    Deformable DETR / DETR3D, used by PF-Track and SynCL) and the L1 distance of the box
    parameters (here ``(cx, cy, w, l, sin, cos)`` in metres).
    """
    owner = "matching_cost"
    dims: dict = {}
    check_tensor("logits", owner, logits, shape=("Q", "C"), dims=dims)
    check_tensor("boxes", owner, boxes, shape=("Q", "D"), dims=dims)
    check_tensor("gt_labels", owner, gt_labels, shape=("G",), dims=dims, dtype="int")
    check_tensor("gt_boxes", owner, gt_boxes, shape=("G", "D"), dims=dims)
    if gt_boxes.dtype != boxes.dtype:
        raise param_error(
            "gt_boxes", owner, f"of dtype {boxes.dtype} (as boxes)", gt_boxes.dtype, cls=TypeError
        )
    if gt_labels.numel() and (int(gt_labels.min()) < 0 or int(gt_labels.max()) >= logits.shape[1]):
        raise param_error(
            "gt_labels",
            owner,
            f"class indices in [0, {logits.shape[1] - 1}]",
            gt_labels.tolist()[:8],
        )
    w_cls = check_real("w_cls", owner, w_cls, low=0)
    w_l1 = check_real("w_l1", owner, w_l1, low=0)
    return _cost(logits, boxes, gt_labels, gt_boxes, w_cls, w_l1)


def _cost(logits, boxes, gt_labels, gt_boxes, w_cls=2.0, w_l1=0.25) -> torch.Tensor:
    """:func:`matching_cost` without the argument checks (inputs already validated)."""
    with torch.no_grad():
        p = logits.float().sigmoid()
        eps = 1e-8
        neg = (1 - FOCAL_ALPHA) * p.pow(FOCAL_GAMMA) * -(1 - p + eps).log()
        pos = FOCAL_ALPHA * (1 - p).pow(FOCAL_GAMMA) * -(p + eps).log()
        cls = (pos - neg)[:, gt_labels.long()]
        l1 = torch.cdist(boxes.float(), gt_boxes.float(), p=1)
        return (w_cls * cls + w_l1 * l1).to(boxes.dtype)


def _cost_array(cost: Any, owner: str) -> np.ndarray:
    if isinstance(cost, torch.Tensor):
        check_tensor("cost", owner, cost, ndim=2, nonempty=False)
        cost = cost.detach().cpu().double().numpy()
    return check_array("cost", owner, cost, ndim=2, nonempty=False).astype(float)


def hungarian_one_to_one(cost: Any) -> tuple[np.ndarray, np.ndarray]:
    """Minimum-cost one-to-one assignment of rows (queries) to columns (targets):
    ``argmin_sigma sum_g C[sigma(g), g]`` over injective maps (Kuhn-Munkres, scipy's
    ``linear_sum_assignment``); every target is assigned when ``Q >= G``. Returns
    ``(q_idx, g_idx)`` int64 arrays, sorted by query."""
    c = _cost_array(cost, "hungarian_one_to_one")
    if c.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    q, g = linear_sum_assignment(c)
    return q.astype(np.int64), g.astype(np.int64)


def topk_one_to_many(cost: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """One-to-many assignment: each target (column) takes up to ``k`` queries (rows) by
    increasing cost, and a query serves at most one target. Pairs are visited in increasing
    cost and taken when the query is free and the target has fewer than ``k`` queries, so a
    query wanted by several targets goes to the one it costs least, and each target's set is
    its ``k`` cheapest among the queries not claimed more cheaply by another target (the
    C-decoder assignment of Sec. 3). Returns ``(q_idx, g_idx)`` int64 arrays."""
    k = check_int("k", "topk_one_to_many", k, low=1, high=10_000)
    return _topk(_cost_array(cost, "topk_one_to_many"), k)


def _topk(c: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`topk_one_to_many` without the argument checks."""
    Q, G = c.shape
    if c.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    order = np.argsort(c, axis=None, kind="stable")
    q_free = np.ones(Q, bool)
    load = np.zeros(G, np.int64)
    qs, gs = [], []
    for flat in order:
        q, g = divmod(int(flat), G)
        if q_free[q] and load[g] < k:
            q_free[q] = False
            load[g] += 1
            qs.append(q)
            gs.append(g)
            if len(qs) == min(Q, G * k):
                break
    return np.asarray(qs, np.int64), np.asarray(gs, np.int64)


class DynamicQueryFilter:
    """Dynamic Query Filtering (Sec. 3): choose how many one-to-many candidates to keep from
    the distribution of their matching costs, so that the number kept follows training.

    The costs ``c`` of all candidates of a batch form a pool. A two-component 1-D Gaussian
    mixture (EM, ``n_iter`` iterations from equal weights, the pool variance and means at the
    10% and 90% quantiles; variances floored at 1e-6) and a single Gaussian (closed form) are
    fitted; with ``BIC = -2 log L + p log n`` (p = 5 and 2 free parameters), the
    pool is called bimodal when it has at least ``min_pool`` costs and

        BIC(2) + bic_margin < BIC(1)

    (a BIC difference above 10 is "very strong" evidence, Kass & Raftery 1995). Then a candidate
    is kept when its posterior under the low-mean component exceeds 1/2. In every case the
    ``min_keep`` cheapest candidates of each target (``group``) are kept, so a target never loses
    all its candidates; without the bimodal evidence only those are kept. Early in training the
    costs are uniformly high and unimodal (only the best candidate per target survives); once a
    separated group of good candidates appears it is kept whole.
    """

    def __init__(
        self, n_iter: int = 10, min_keep: int = 1, min_pool: int = 20, bic_margin: float = 10.0
    ) -> None:
        owner = "DynamicQueryFilter"
        self.n_iter = check_int("n_iter", owner, n_iter, low=1, high=10_000)
        self.min_keep = check_int("min_keep", owner, min_keep, low=1, high=10_000)
        self.min_pool = check_int("min_pool", owner, min_pool, low=2, high=10**7)
        self.bic_margin = check_real("bic_margin", owner, bic_margin, low=0)
        self.last_open_: bool = False

    def _bimodal_low(self, c: np.ndarray) -> np.ndarray | None:
        """Posterior of the low-mean component per cost, or None when the pool is unimodal."""
        n = c.size
        var1 = max(float(c.var()), VAR_FLOOR)
        loglik1 = -0.5 * n * (np.log(2 * np.pi * var1) + 1.0)
        mu = np.quantile(c, [0.1, 0.9])
        if mu[1] <= mu[0]:  # a constant pool has no second mode
            return None
        var = np.full(2, var1)
        w = np.full(2, 0.5)
        for _ in range(self.n_iter):
            logp = np.log(w) - 0.5 * (np.log(2 * np.pi * var) + (c[:, None] - mu) ** 2 / var)
            resp = np.exp(logp - np.logaddexp(logp[:, :1], logp[:, 1:]))
            nk = resp.sum(0) + 1e-12
            w, mu = nk / n, (resp * c[:, None]).sum(0) / nk
            var = np.maximum((resp * (c[:, None] - mu) ** 2).sum(0) / nk, VAR_FLOOR)
        logp = np.log(w) - 0.5 * (np.log(2 * np.pi * var) + (c[:, None] - mu) ** 2 / var)
        norm = np.logaddexp(logp[:, 0], logp[:, 1])
        bic1 = -2 * loglik1 + 2 * np.log(n)
        bic2 = -2 * norm.sum() + 5 * np.log(n)
        if not bic2 + self.bic_margin < bic1:
            return None
        return np.exp(logp[:, int(np.argmin(mu))] - norm)

    def select(self, costs: Any, group: Any) -> np.ndarray:
        """``keep`` (n,) bool: which candidates survive (see the class docstring); ``group[i]``
        is the target of candidate ``i``."""
        owner = "DynamicQueryFilter.select"
        dims: dict = {}
        if isinstance(costs, torch.Tensor):
            check_tensor("costs", owner, costs, shape=("n",), dims=dims)
            costs = costs.detach().cpu().double().numpy()
        if isinstance(group, torch.Tensor):
            check_tensor("group", owner, group, shape=("n",), dims=dims, dtype="int")
            group = group.detach().cpu().numpy()
        c = check_array("costs", owner, costs, shape=("n",), dims=dims)
        g = check_array("group", owner, group, shape=("n",), dims=dims, kind="int")
        if int(g.min()) < 0:
            raise param_error("group", owner, "non-negative target indices", int(g.min()))
        c = c.astype(float)
        keep = np.zeros(c.size, bool)
        self.last_open_ = False
        for target in np.unique(g):  # min_keep cheapest per target, always
            idx = np.flatnonzero(g == target)
            keep[idx[np.argsort(c[idx], kind="stable")[: self.min_keep]]] = True
        if c.size >= self.min_pool:
            low = self._bimodal_low(c)
            if low is not None:
                self.last_open_ = True
                keep |= low > 0.5
        return keep


def _box_tensor(t: Mapping[str, Any], key: str, owner: str, name: str) -> torch.Tensor:
    if not isinstance(t, Mapping) or key not in t:
        raise param_error(
            name, owner, f"dicts with a '{key}' entry", type(t).__name__, cls=TypeError
        )
    return t[key]


def hybrid_match(
    out_S: Mapping[str, torch.Tensor],
    out_C: Mapping[str, torch.Tensor] | None,
    targets: Sequence[Mapping[str, torch.Tensor]],
    track_ids: torch.Tensor,
    k: int = 4,
    use_filter: bool = True,
    query_filter: DynamicQueryFilter | None = None,
) -> dict[str, Any]:
    """Task-specific Hybrid Matching of one decoder layer for a batch (Sec. 3).

    Args:
        out_S, out_C: the S- and C-decoder predictions, dicts with ``logits`` (B, Q, C) and
            ``boxes`` (B, Q, D); the first ``N_t`` queries are track queries, the rest object
            queries. ``out_C=None`` gives the baseline (S-decoder only).
        targets: per batch element a dict with ``labels`` (G,), ``boxes`` (G, D), ``ids`` (G,).
        track_ids: (B, N_t) int64, the ground-truth identity each track query is bound to;
            -1 for an empty slot (padding, or an identity absent from this frame).
        k: queries per target in the one-to-many matching.
        use_filter: apply :class:`DynamicQueryFilter` to the pooled top-k candidates.
        query_filter: the filter to use (default ``DynamicQueryFilter()``).

    Returns a dict: ``S`` and ``C`` are per batch element ``(q_idx, g_idx)`` int64 tensors
    (query indices over all Q queries; track queries keep their identity's target in both);
    ``C_objects`` the object-query part of ``C`` (used by the contrastive loss);
    ``n_candidates`` and ``n_kept`` the top-k pool size before and after filtering; ``filter_open``
    whether the filter found two modes.
    """
    owner = "hybrid_match"
    k = check_int("k", owner, k, low=1, high=10_000)
    use_filter = check_bool("use_filter", owner, use_filter)
    for name, out in (("out_S", out_S), ("out_C", out_C)):
        if out is None and name == "out_C":
            continue
        if not isinstance(out, Mapping):
            raise param_error(
                name, owner, "a dict with 'logits' and 'boxes'", type(out).__name__, cls=TypeError
            )
    dims: dict = {}
    for name, out in (("out_S", out_S), ("out_C", out_C)):
        if out is None:
            continue
        for key, shape in (("logits", ("B", "Q", "C")), ("boxes", ("B", "Q", "D"))):
            check_tensor(name, owner, _box_tensor(out, key, owner, name), shape=shape, dims=dims)
    check_tensor(
        "track_ids", owner, track_ids, shape=("B", None), dims=dims, dtype="int", nonempty=False
    )
    B, Q = dims["B"][0], dims["Q"][0]
    n_t = track_ids.shape[1]
    if n_t > Q:
        raise param_error("track_ids", owner, f"at most Q={Q} track queries per element", n_t)
    if not isinstance(targets, Sequence) or len(targets) != B:
        raise param_error(
            "targets",
            owner,
            f"a list of {B} dicts (one per batch element)",
            type(targets).__name__,
            cls=TypeError,
        )
    if track_ids.numel() and int(track_ids.min()) < -1:
        raise param_error("track_ids", owner, "identities >= -1 (-1: empty slot)", "a smaller id")
    for t in targets:
        for key in ("labels", "boxes", "ids"):
            _box_tensor(t, key, owner, "targets")
        if not (len(t["labels"]) == len(t["boxes"]) == len(t["ids"])):
            raise param_error(
                "targets",
                owner,
                "labels, boxes and ids of equal length",
                [len(t["labels"]), len(t["boxes"]), len(t["ids"])],
            )
    qf = query_filter if query_filter is not None else DynamicQueryFilter()
    result: dict[str, Any] = {"S": [], "C": [], "C_objects": []}
    cand: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
    fixed_all = []
    for b, t in enumerate(targets):
        ids = t["ids"].tolist()
        pos = {gid: i for i, gid in enumerate(ids)}
        tq, tg = [], []
        for slot, gid in enumerate(track_ids[b].tolist()):
            if gid >= 0 and gid in pos:
                tq.append(slot)
                tg.append(pos[gid])
        fixed_all.append((tq, tg))
        held = set(tg)
        newborn = [i for i in range(len(ids)) if i not in held]
        qs, gs = list(tq), list(tg)
        if newborn:
            cost = _cost(
                out_S["logits"][b, n_t:],
                out_S["boxes"][b, n_t:],
                t["labels"][newborn],
                t["boxes"][newborn],
            )
            q, g = linear_sum_assignment(cost.double().numpy())
            qs += (q + n_t).tolist()
            gs += [newborn[j] for j in g]
        result["S"].append(_pair(qs, gs))
        if out_C is not None and len(ids) and n_t < Q:
            cost = _cost(out_C["logits"][b, n_t:], out_C["boxes"][b, n_t:], t["labels"], t["boxes"])
            c = cost.double().numpy()
            q, g = _topk(c, k)
            cand.append((q + n_t, g, c[q, g]))
        else:
            cand.append((np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0)))
    if out_C is not None:
        costs = np.concatenate([c[2] for c in cand])
        groups = np.concatenate([c[1] + 100_000 * b for b, c in enumerate(cand)])
        keep = np.ones(costs.size, bool)
        if use_filter and costs.size:
            keep = qf.select(costs, groups)
        result["n_candidates"], result["n_kept"] = int(costs.size), int(keep.sum())
        result["filter_open"] = bool(use_filter and costs.size and qf.last_open_)
        start = 0
        for (tq, tg), (q, g, _) in zip(fixed_all, cand, strict=True):
            kb = keep[start : start + q.size]
            start += q.size
            result["C_objects"].append(_pair(q[kb].tolist(), g[kb].tolist()))
            result["C"].append(_pair(tq + q[kb].tolist(), tg + g[kb].tolist()))
    return result


def _pair(q: list[int], g: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.as_tensor(q, dtype=torch.long), torch.as_tensor(g, dtype=torch.long)
