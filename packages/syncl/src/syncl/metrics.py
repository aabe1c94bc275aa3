"""Tracking and detection metrics in numpy: CLEAR-MOT, nuScenes-style AMOTA/AMOTP and
centre-distance AP.

Inputs are sequences of frames, each frame a list of dicts: ground truth with ``id`` and
``center`` (2,) (optional ``label``), predictions with ``id``, ``center`` and ``score``
(optional ``label``). A ground-truth box and a prediction may be paired when their centre
distance is at most ``dist_thr`` metres (2 m, the nuScenes tracking convention). Several
sequences are passed as a list of sequences (a frame list per sequence) and evaluated in one pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from scipy.optimize import linear_sum_assignment

from paperkit import check_int, check_real, param_error

__all__ = ["amota", "clear_mot", "detection_ap"]

_BIG = 1e9


def _check_frames(name: str, owner: str, value: Any, keys: tuple[str, ...]) -> list:
    """A sequence (list of frames) or a list of sequences; returns a list of sequences."""
    if not isinstance(value, Sequence) or isinstance(value, (str, bytes)):
        raise param_error(
            name, owner, "a list of frames (lists of dicts)", type(value).__name__, cls=TypeError
        )
    if len(value) == 0:
        raise param_error(name, owner, "a non-empty list of frames", "an empty list")
    nested = all(
        isinstance(f, Sequence)
        and all(isinstance(o, Sequence) and not isinstance(o, dict) for o in f)
        and len(f) > 0
        for f in value
    )
    seqs = list(value) if nested else [value]
    for seq in seqs:
        for frame in seq:
            if not isinstance(frame, Sequence) or isinstance(frame, (str, bytes)):
                raise param_error(
                    name,
                    owner,
                    "frames that are lists of dicts",
                    type(frame).__name__,
                    cls=TypeError,
                )
            for obj in frame:
                if not isinstance(obj, dict) or any(k not in obj for k in keys):
                    raise param_error(
                        name,
                        owner,
                        f"dicts with keys {keys}",
                        repr(obj)[:60],
                        cls=TypeError if not isinstance(obj, dict) else ValueError,
                    )
                c = np.asarray(obj["center"], dtype=float)
                if c.shape != (2,) or not np.isfinite(c).all():
                    raise param_error(
                        name,
                        owner,
                        "finite 'center' entries of shape (2,)",
                        repr(obj["center"])[:60],
                    )
                if "score" in keys and not np.isfinite(float(obj["score"])):
                    raise param_error(name, owner, "finite 'score' entries", obj["score"])
    return seqs


def _pair(gt_seqs: list, pred_seqs: list, owner: str) -> None:
    if len(gt_seqs) != len(pred_seqs) or any(
        len(g) != len(p) for g, p in zip(gt_seqs, pred_seqs, strict=True)
    ):
        raise param_error(
            "pred",
            owner,
            "as many sequences and frames as gt",
            f"{[len(p) for p in pred_seqs]} frames vs {[len(g) for g in gt_seqs]}",
        )


def _frame_arrays(frame: list[dict], with_score: bool) -> tuple[np.ndarray, ...]:
    ids = np.array([int(o["id"]) for o in frame], dtype=np.int64)
    xy = np.array([o["center"] for o in frame], dtype=float).reshape(-1, 2)
    if with_score:
        return ids, xy, np.array([float(o["score"]) for o in frame])
    return ids, xy


def _clear_counts(gt_seq: list, pred_seq: list, dist_thr: float) -> dict[str, float]:
    """CLEAR-MOT events of one sequence (Bernardin & Stiefelhagen 2008, as in py-motmetrics):
    carry forward a pairing from earlier frames when it is still within ``dist_thr``, match
    the rest by the Hungarian algorithm on centre distances, count a switch when a ground-truth
    id is paired with another prediction id than at its last pairing."""
    last: dict[int, int] = {}
    tracked_prev: dict[int, bool] = {}
    fp = fn = ids = frag = matches = 0
    dist_sum = 0.0
    for gframe, pframe in zip(gt_seq, pred_seq, strict=True):
        gid, gxy = _frame_arrays(gframe, False)
        pid, pxy = _frame_arrays(pframe, False)
        d = np.linalg.norm(gxy[:, None, :] - pxy[None, :, :], axis=-1)
        ok = d <= dist_thr
        g_used = np.zeros(len(gid), bool)
        p_used = np.zeros(len(pid), bool)
        for i, g in enumerate(gid):  # carry forward established pairings
            if g in last:
                j = np.flatnonzero((pid == last[g]) & ~p_used)
                if j.size and ok[i, j[0]]:
                    g_used[i] = p_used[j[0]] = True
                    matches += 1
                    dist_sum += d[i, j[0]]
        cost = np.where(ok & ~g_used[:, None] & ~p_used[None, :], d, _BIG)
        if cost.size:
            for i, j in zip(*linear_sum_assignment(cost), strict=True):
                if cost[i, j] >= _BIG:
                    continue
                g, p = int(gid[i]), int(pid[j])
                ids += g in last and last[g] != p
                last[g] = p
                g_used[i] = p_used[j] = True
                matches += 1
                dist_sum += d[i, j]
        fp += int((~p_used).sum())
        fn += int((~g_used).sum())
        for i, g in enumerate(gid):
            g = int(g)
            frag += bool(g_used[i]) and g in tracked_prev and not tracked_prev[g]
            if g_used[i] or g in tracked_prev:
                tracked_prev[g] = bool(g_used[i])
    return {
        "FP": fp,
        "FN": fn,
        "IDS": ids,
        "FRAG": frag,
        "matches": matches,
        "dist": dist_sum,
        "P": sum(len(f) for f in gt_seq),
    }


def clear_mot(gt: Sequence, pred: Sequence, dist_thr: float = 2.0) -> dict[str, float]:
    """CLEAR-MOT metrics: ``MOTA = 1 - (FN + FP + IDS) / P`` (P = number of ground-truth boxes),
    ``MOTP`` = mean centre distance (m) of the paired boxes, and the counts IDS (identity
    switches), FP, FN, FRAG (times a ground-truth trajectory is picked up again after being
    lost). Pairing as py-motmetrics' ``MOTAccumulator`` with distances > ``dist_thr`` forbidden."""
    dist_thr = check_real("dist_thr", "clear_mot", dist_thr, low=0, low_open=True)
    gs = _check_frames("gt", "clear_mot", gt, ("id", "center"))
    ps = _check_frames("pred", "clear_mot", pred, ("id", "center"))
    _pair(gs, ps, "clear_mot")
    return _clear_totals(gs, ps, dist_thr)


def _clear_totals(gs: list, ps: list, dist_thr: float) -> dict[str, float]:
    """:func:`clear_mot` of validated sequences."""
    tot = {"FP": 0, "FN": 0, "IDS": 0, "FRAG": 0, "matches": 0, "dist": 0.0, "P": 0}
    for g, p in zip(gs, ps, strict=True):
        for k, v in _clear_counts(g, p, dist_thr).items():
            tot[k] += v
    P = max(tot["P"], 1)
    return {
        "MOTA": 1.0 - (tot["FN"] + tot["FP"] + tot["IDS"]) / P,
        "MOTP": tot["dist"] / tot["matches"] if tot["matches"] else float("nan"),
        "IDS": int(tot["IDS"]),
        "FP": int(tot["FP"]),
        "FN": int(tot["FN"]),
        "FRAG": int(tot["FRAG"]),
    }


def _labels(seqs: list) -> list:
    return sorted({o.get("label", 0) for s in seqs for f in s for o in f})


def _filter(seqs: list, label: Any, thr: float | None = None) -> list:
    return [
        [
            [o for o in f if o.get("label", 0) == label and (thr is None or o["score"] >= thr)]
            for f in s
        ]
        for s in seqs
    ]


def _matched_scores(gs: list, ps: list, dist_thr: float) -> np.ndarray:
    """Scores of the predictions paired by CLEAR matching with every prediction kept."""
    out = []
    for g_seq, p_seq in zip(gs, ps, strict=True):
        last: dict[int, int] = {}
        for gframe, pframe in zip(g_seq, p_seq, strict=True):
            gid, gxy = _frame_arrays(gframe, False)
            pid, pxy, ps_ = _frame_arrays(pframe, True)
            d = np.linalg.norm(gxy[:, None, :] - pxy[None, :, :], axis=-1)
            ok = d <= dist_thr
            g_used = np.zeros(len(gid), bool)
            p_used = np.zeros(len(pid), bool)
            for i, g in enumerate(gid):
                if g in last:
                    j = np.flatnonzero((pid == last[g]) & ~p_used)
                    if j.size and ok[i, j[0]]:
                        g_used[i] = p_used[j[0]] = True
            cost = np.where(ok & ~g_used[:, None] & ~p_used[None, :], d, _BIG)
            if cost.size:
                for i, j in zip(*linear_sum_assignment(cost), strict=True):
                    if cost[i, j] < _BIG:
                        last[int(gid[i])] = int(pid[j])
                        p_used[j] = True
            out.append(ps_[p_used])
    return np.concatenate(out) if out else np.zeros(0)


def amota(
    gt: Sequence,
    pred: Sequence,
    dist_thr: float = 2.0,
    n_thresholds: int = 40,
    min_recall: float = 0.1,
) -> dict[str, Any]:
    """nuScenes-style AMOTA and AMOTP (Caesar et al. 2020; the metrics of the paper's experiments).

    With every prediction kept, the paired predictions' scores sorted in decreasing order give
    the recall reached at each score threshold. For each ``r`` in
    ``linspace(min_recall, 1, n_thresholds)`` the highest threshold whose recall is ``>= r`` is
    taken and CLEAR-MOT is run on the predictions scoring at least that much:

        MOTAR(r) = clip(1 - (IDS_r + FP_r + FN_r - (1 - r) P) / (r P), 0, 1)

    (P = number of ground-truth boxes). An unreachable recall gets MOTAR 0 and MOTP
    ``dist_thr``. AMOTA is the mean MOTAR, AMOTP the mean MOTP (m), both first per class
    (``label``), then averaged over classes. Returns ``AMOTA``, ``AMOTP`` and ``MOTAR_curve``
    (recalls, MOTAR per class-mean).
    """
    owner = "amota"
    dist_thr = check_real("dist_thr", owner, dist_thr, low=0, low_open=True)
    n_thresholds = check_int("n_thresholds", owner, n_thresholds, low=1, high=10_000)
    min_recall = check_real("min_recall", owner, min_recall, low=0, low_open=True, high=1)
    gs = _check_frames("gt", owner, gt, ("id", "center"))
    ps = _check_frames("pred", owner, pred, ("id", "center", "score"))
    _pair(gs, ps, owner)
    recalls = np.linspace(min_recall, 1.0, n_thresholds)
    per_class = []
    for label in _labels(gs):
        g_l, p_l = _filter(gs, label), _filter(ps, label)
        P = sum(len(f) for s in g_l for f in s)
        motar = np.zeros(n_thresholds)
        motp = np.full(n_thresholds, dist_thr)
        if P:
            scores = np.sort(_matched_scores(g_l, p_l, dist_thr))[::-1]
            reach = np.arange(1, scores.size + 1) / P  # recall with the top-n paired scores
            cache: dict[float, dict[str, float]] = {}
            for k, r in enumerate(recalls):
                idx = np.flatnonzero(reach >= r - 1e-12)
                if idx.size == 0:
                    continue
                thr = float(scores[idx[0]])
                if thr not in cache:
                    cache[thr] = _clear_totals(g_l, _filter(p_l, label, thr), dist_thr)
                m = cache[thr]
                motar[k] = np.clip(1 - (m["IDS"] + m["FP"] + m["FN"] - (1 - r) * P) / (r * P), 0, 1)
                motp[k] = m["MOTP"] if np.isfinite(m["MOTP"]) else dist_thr
        per_class.append((motar, motp))
    motar_mean = np.mean([c[0] for c in per_class], axis=0)
    return {
        "AMOTA": float(motar_mean.mean()),
        "AMOTP": float(np.mean([c[1].mean() for c in per_class])),
        "MOTAR_curve": {"recall": recalls.tolist(), "MOTAR": motar_mean.tolist()},
    }


def detection_ap(gt: Sequence, pred: Sequence, dist_thr: float = 2.0) -> float:
    """nuScenes centre-distance average precision (Caesar et al. 2020) of one distance threshold.

    Predictions of all frames sorted by score; each is a true positive when the nearest unpaired
    ground-truth centre of its frame (same label) lies within ``dist_thr``. The precision envelope
    is sampled at 101 recall points, and ``AP = mean_{recall > 0.1} max(prec - 0.1, 0) / 0.9``
    (the devkit's ``min_recall = min_precision = 0.1``), then averaged over labels.
    """
    dist_thr = check_real("dist_thr", "detection_ap", dist_thr, low=0, low_open=True)
    gs = _check_frames("gt", "detection_ap", gt, ("center",))
    ps = _check_frames("pred", "detection_ap", pred, ("center", "score"))
    _pair(gs, ps, "detection_ap")
    aps = []
    for label in _labels(gs):
        g_l, p_l = _filter(gs, label), _filter(ps, label)
        P = sum(len(f) for s in g_l for f in s)
        rows = [
            (o["score"], si, fi, np.asarray(o["center"], float))
            for si, s in enumerate(p_l)
            for fi, f in enumerate(s)
            for o in f
        ]
        rows.sort(key=lambda r: -r[0])
        taken: dict[tuple[int, int], np.ndarray] = {}
        tp = np.zeros(len(rows))
        for n, (_, si, fi, c) in enumerate(rows):
            frame = g_l[si][fi]
            if not frame:
                continue
            used = taken.setdefault((si, fi), np.zeros(len(frame), bool))
            d = np.linalg.norm(np.array([o["center"] for o in frame], float) - c, axis=1)
            d[used] = np.inf
            j = int(np.argmin(d))
            if d[j] <= dist_thr:
                used[j] = True
                tp[n] = 1
        if P == 0 or tp.size == 0:
            aps.append(0.0)
            continue
        ctp = np.cumsum(tp)
        prec = ctp / np.arange(1, tp.size + 1)
        rec = ctp / P
        grid = np.linspace(0, 1, 101)
        env = np.maximum.accumulate(prec[::-1])[::-1]
        idx = np.searchsorted(rec, grid, side="left")
        prec_at = np.where(idx < env.size, env[np.minimum(idx, env.size - 1)], 0.0)
        sel = prec_at[grid > 0.1 + 1e-9]
        aps.append(float(np.mean(np.clip(sel - 0.1, 0, None)) / 0.9))
    return float(np.mean(aps))
