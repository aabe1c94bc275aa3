"""SAMA-Bench scoring, as the benchmark's evaluation scripts compute it (paper Sec. 4).

Per video (all its kept turns), then averaged over videos, per source subset and overall:

1. text: :func:`clean_text` drops ``<p>``, ``</p>``, ``[SEG]`` (and chat end tokens) and folds
   whitespace; :func:`extract_phrases` returns the ``<p>...</p>`` contents, stripped, lower-cased;
2. IoU of two (T, H, W) masks: |A and B| / |A or B| (0.0 for an empty union), for all pairs at
   once by one matrix product of the flattened masks (:func:`iou_matrix`);
3. mIoU: per turn, repeatedly take the largest entry of the IoU matrix (first in row-major order
   on ties) while it is > 0, record it and delete its row and column (:func:`greedy_pairs`); the
   turn's mIoU is the mean of the recorded IoUs (0 when none, or either side is empty); the
   video's is the mean over its turns (:func:`greedy_miou`);
4. recall: the same greedy loop, but a pair counts only when IoU >= 0.5 *and*
   text_sim(GT phrase, predicted phrase) >= 0.5, and the loop stops at the first largest IoU that
   fails; recall = sum of accepted pairs / sum of GT phrases over the video's turns that have
   predicted masks and phrases (:func:`greedy_recall`);
5. caption metrics of the cleaned texts (:mod:`sama.captions`) and an optional CLAIR judge.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from paperkit import (
    check_bool,
    check_callable,
    check_choice,
    check_int,
    check_real,
    describe,
    param_error,
)
from sama.captions import CAPTION_KEYS, CaptionScorer, caption_scores
from sama.textsim import resolve_text_sim

__all__ = [
    "Report",
    "caption_scores",
    "clean_text",
    "evaluate",
    "extract_phrases",
    "greedy_matches",
    "greedy_miou",
    "greedy_pairs",
    "greedy_recall",
    "iou_matrix",
    "mask_iou",
]

#: The tokens the scripts' ``remove_special_tokens`` deletes.
SPECIAL_TOKENS = ("<p>", "</p>", "[SEG]", "<|im_end|>", "<s>", "<|end|>")
_SPECIAL = re.compile("|".join(re.escape(t) for t in SPECIAL_TOKENS))
_PHRASE = re.compile(r"<p>(.*?)</p>", re.DOTALL)
#: Largest all-pairs block of packed words ``iou_matrix`` builds; beyond it, one row at a time.
PAIR_BLOCK_BYTES = 1 << 26


def _check_str(name: str, owner: str, value: Any) -> str:
    if not isinstance(value, str):
        raise param_error(name, owner, "a string", describe(value), cls=TypeError)
    return value


def clean_text(text: str) -> str:
    """``text`` without ``<p>``, ``</p>``, ``[SEG]``, ``<|im_end|>``, ``<s>``, ``<|end|>``, with
    every whitespace run folded to one space and the ends stripped.

    >>> clean_text("The <p>red circle</p> [SEG]  moves.")
    'The red circle moves.'
    """
    text = _check_str("text", "clean_text", text)
    return re.sub(r"\s+", " ", _SPECIAL.sub("", text)).strip()


def extract_phrases(text: str) -> list[str]:
    """The ``<p>...</p>`` contents of ``text`` in order, stripped and lower-cased.

    >>> extract_phrases("A <p> Red Circle </p> [SEG] and <p>a square</p> [SEG].")
    ['red circle', 'a square']
    """
    text = _check_str("text", "extract_phrases", text)
    return [p.strip().lower() for p in _PHRASE.findall(text)]


def _as_masks(name: str, owner: str, masks: Any) -> list[np.ndarray]:
    if isinstance(masks, np.ndarray):
        masks = [masks] if masks.ndim == 3 else list(masks)
    if not isinstance(masks, (list, tuple)):
        raise param_error(
            name, owner, "a list of boolean (T, H, W) arrays", describe(masks), cls=TypeError
        )
    out = []
    for m in masks:
        if not isinstance(m, np.ndarray) or m.dtype != np.bool_:
            raise param_error(
                name, owner, "a list of boolean (T, H, W) arrays", describe(m), cls=TypeError
            )
        if m.ndim != 3:
            raise param_error(name, owner, "masks of shape (T, H, W)", describe(m))
        out.append(m)
    return out


def mask_iou(a: np.ndarray, b: np.ndarray) -> float:
    """IoU = |a and b| / |a or b| of two boolean masks of the same shape; 0.0 when both are empty.

    >>> import numpy as np
    >>> mask_iou(np.array([[[1, 1, 0]]], bool), np.array([[[0, 1, 1]]], bool))
    0.3333333333333333
    """
    for name, m in (("a", a), ("b", b)):
        if not isinstance(m, np.ndarray) or m.dtype != np.bool_:
            raise param_error(name, "mask_iou", "a boolean array", describe(m), cls=TypeError)
        if m.ndim != 3 or m.size == 0:
            raise param_error(name, "mask_iou", "a non-empty (T, H, W) array", describe(m))
    if a.shape != b.shape:
        raise param_error("b", "mask_iou", f"of the shape of a {a.shape}", describe(b))
    union = int(np.logical_or(a, b).sum())
    return 0.0 if union == 0 else int(np.logical_and(a, b).sum()) / union


def iou_matrix(
    preds: Sequence[np.ndarray], gts: Sequence[np.ndarray], *, method: str = "packed"
) -> np.ndarray:
    """The (P, G) IoU matrix of P predicted and G ground-truth boolean masks of one shape.

    Every intersection comes from one boolean matrix product of the flattened masks,
    I = A B^T, and the unions are |a_i| + |b_j| - I_ij. ``method="packed"`` computes the product
    on bit-packed masks (AND of 64-bit words, then a popcount: exact, 8x less memory traffic than
    bytes); ``"matmul"`` multiplies float32 copies (exact below 2^24 pixels, float64 above). The
    packed form needs numpy >= 2 (``np.bitwise_count``) and falls back to ``"matmul"`` otherwise.
    """
    check_choice("method", "iou_matrix", method, ("packed", "matmul"))
    preds = _as_masks("preds", "iou_matrix", preds)
    gts = _as_masks("gts", "iou_matrix", gts)
    if not preds or not gts:
        return np.zeros((len(preds), len(gts)))
    shape = preds[0].shape
    for name, group in (("preds", preds), ("gts", gts)):
        for m in group:
            if m.shape != shape:
                raise param_error(name, "iou_matrix", f"masks of one shape {shape}", describe(m))
    n = int(np.prod(shape))
    a, b = np.stack(preds).reshape(len(preds), n), np.stack(gts).reshape(len(gts), n)
    if method == "packed" and hasattr(np, "bitwise_count"):
        inter, area_a, area_b = _packed_counts(a, b)
    else:
        dtype = np.float32 if n < 2**24 else np.float64
        fa, fb = a.astype(dtype), b.astype(dtype)
        inter = (fa @ fb.T).astype(np.float64)
        area_a, area_b = fa.sum(1, dtype=np.float64), fb.sum(1, dtype=np.float64)
    union = area_a[:, None] + area_b[None, :] - inter
    return np.where(union > 0, inter / np.where(union > 0, union, 1.0), 0.0)


def _packed_counts(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Intersections (P, G) and areas of boolean rows, by AND + popcount on 64-bit words."""
    pa, pb = np.packbits(a, axis=1), np.packbits(b, axis=1)
    pad = (-pa.shape[1]) % 8
    if pad:
        pa = np.pad(pa, ((0, 0), (0, pad)))
        pb = np.pad(pb, ((0, 0), (0, pad)))
    wa, wb = pa.view(np.uint64), pb.view(np.uint64)
    if wa.shape[0] * wb.nbytes <= PAIR_BLOCK_BYTES:  # all pairs at once
        inter = np.bitwise_count(wa[:, None, :] & wb[None, :, :]).sum(-1, dtype=np.int64)
    else:  # one prediction at a time: memory of one (G, words) block
        inter = np.stack([np.bitwise_count(row & wb).sum(-1, dtype=np.int64) for row in wa])
    area_a = np.bitwise_count(wa).sum(-1, dtype=np.int64)
    area_b = np.bitwise_count(wb).sum(-1, dtype=np.int64)
    return inter.astype(np.float64), area_a.astype(np.float64), area_b.astype(np.float64)


def _check_matrix(name: str, owner: str, value: Any) -> np.ndarray:
    if isinstance(value, (str, bytes)) or value is None:
        raise param_error(name, owner, "a 2-D array", describe(value), cls=TypeError)
    m = np.asarray(value)
    if m.dtype.kind not in "iuf":
        raise param_error(name, owner, "a real 2-D array", describe(m), cls=TypeError)
    if m.ndim != 2:
        raise param_error(name, owner, "a 2-D array", describe(m))
    if m.dtype.kind == "f" and not np.isfinite(m).all():
        raise param_error(name, owner, "finite (no NaN or inf)", describe(m))
    return m.astype(np.float64)


def greedy_pairs(iou: np.ndarray) -> list[tuple[int, int, float]]:
    """The greedy one-to-one pairing on a (P, G) score matrix: while its largest entry is > 0,
    record (row, column, value) and delete that row and column. Ties go to the first entry in
    row-major order (``np.argmax``). This is not the Hungarian optimum.

    >>> import numpy as np
    >>> greedy_pairs(np.array([[0.9, 0.8], [0.85, 0.0]]))
    [(0, 0, 0.9)]
    """
    m = _check_matrix("iou", "greedy_pairs", iou).copy()
    pairs = []
    while m.size and m.max() > 0:
        i, j = np.unravel_index(int(np.argmax(m)), m.shape)
        pairs.append((int(i), int(j), float(m[i, j])))
        m[i, :] = -np.inf
        m[:, j] = -np.inf
    return pairs


def greedy_miou(
    preds: Sequence[np.ndarray], gts: Sequence[np.ndarray], *, penalize_unpaired: bool = False
) -> float:
    """The mIoU of one turn: the mean IoU of the greedy pairs (:func:`greedy_pairs`), 0 when no
    pair or when either side is empty. ``penalize_unpaired``: divide the sum of paired IoUs by
    max(P, G) instead of the number of pairs (the benchmark does not)."""
    penalize_unpaired = check_bool("penalize_unpaired", "greedy_miou", penalize_unpaired)
    matrix = iou_matrix(preds, gts)
    if matrix.size == 0:
        return 0.0
    ious = [v for _, _, v in greedy_pairs(matrix)]
    if not ious:
        return 0.0
    return float(sum(ious) / (max(matrix.shape) if penalize_unpaired else len(ious)))


def greedy_matches(
    pred_masks: Sequence[np.ndarray],
    pred_phrases: Sequence[str],
    gt_masks: Sequence[np.ndarray],
    gt_phrases: Sequence[str],
    *,
    text_sim: Callable[[str, str], float] | str | None = None,
    iou_threshold: float = 0.5,
    sim_threshold: float = 0.5,
    official_quirks: bool = False,
) -> list[tuple[int, int]]:
    """The accepted (prediction, GT) pairs of one turn for recall.

    Loop on the (P, G) IoU matrix: take its largest entry (first on ties); stop when its IoU is
    below ``iou_threshold`` or the text similarity of its phrases below ``sim_threshold``;
    otherwise accept it and zero its row and column. Default: text_sim(gt_phrases[j],
    pred_phrases[i]) for IoU entry (i, j), a missing phrase scoring 0. ``official_quirks=True``:
    as the scripts, the similarity matrix is built GT x prediction, both matrices are cropped to
    min(P, #GT phrases) x min(G, #predicted phrases) and indexed by the same (i, j), so the text
    check reads the transposed entry and predictions or GTs beyond the crop are never matched.
    """
    owner = "greedy_matches"
    pred_masks = _as_masks("pred_masks", owner, pred_masks)
    gt_masks = _as_masks("gt_masks", owner, gt_masks)
    pred_phrases = _check_phrases("pred_phrases", owner, pred_phrases)
    gt_phrases = _check_phrases("gt_phrases", owner, gt_phrases)
    iou_threshold = check_real("iou_threshold", owner, iou_threshold, low=0, high=1, low_open=True)
    sim_threshold = check_real("sim_threshold", owner, sim_threshold, low=0, high=1, low_open=True)
    official_quirks = check_bool("official_quirks", owner, official_quirks)
    sim = resolve_text_sim(text_sim, owner)
    ious = iou_matrix(pred_masks, gt_masks)
    if official_quirks:
        sims = _sim_matrix(sim, gt_phrases, pred_phrases)  # GT x prediction, as the scripts
        rows, cols = min(ious.shape[0], sims.shape[0]), min(ious.shape[1], sims.shape[1])
        ious, sims = ious[:rows, :cols].copy(), sims[:rows, :cols].copy()
    else:
        sims = np.zeros(ious.shape)
        for i in range(min(len(pred_phrases), ious.shape[0])):
            for j in range(min(len(gt_phrases), ious.shape[1])):
                sims[i, j] = sim(gt_phrases[j], pred_phrases[i])
    matches = []
    while ious.size:
        i, j = np.unravel_index(int(np.argmax(ious)), ious.shape)
        if ious[i, j] < iou_threshold or sims[i, j] < sim_threshold:
            break
        matches.append((int(i), int(j)))
        ious[i, :] = ious[:, j] = 0.0
        sims[i, :] = sims[:, j] = 0.0
    return matches


def _sim_matrix(sim: Callable[[str, str], float], a: list[str], b: list[str]) -> np.ndarray:
    return np.array([[float(sim(x, y)) for y in b] for x in a]).reshape(len(a), len(b))


def _check_phrases(name: str, owner: str, value: Any) -> list[str]:
    if (
        isinstance(value, str)
        or not isinstance(value, Sequence)
        or not all(isinstance(p, str) for p in value)
    ):
        raise param_error(name, owner, "a list of strings", describe(value), cls=TypeError)
    return list(value)


def greedy_recall(
    pred_masks: Sequence[Sequence[np.ndarray]],
    pred_phrases: Sequence[Sequence[str]],
    gt_masks: Sequence[Sequence[np.ndarray]],
    gt_phrases: Sequence[Sequence[str]],
    *,
    text_sim: Callable[[str, str], float] | str | None = None,
    iou_threshold: float = 0.5,
    sim_threshold: float = 0.5,
    strict: bool = False,
    official_quirks: bool = False,
) -> float:
    """Recall of one video over its turns (one list entry per turn): sum of accepted pairs
    (:func:`greedy_matches`) / sum of GT phrases. Turns without predicted masks or without
    predicted phrases are skipped in both sums (as the scripts); ``strict=True`` counts their GT
    phrases. 0.0 when nothing is counted. A single turn may be given directly (lists of masks
    and of phrases instead of lists of them)."""
    owner = "greedy_recall"
    strict = check_bool("strict", owner, strict)
    if _one_turn(pred_phrases) and _one_turn(gt_phrases) and (pred_phrases or gt_phrases):
        pred_masks, pred_phrases = [pred_masks], [pred_phrases]
        gt_masks, gt_phrases = [gt_masks], [gt_phrases]
    lists = (
        ("pred_masks", pred_masks),
        ("pred_phrases", pred_phrases),
        ("gt_masks", gt_masks),
        ("gt_phrases", gt_phrases),
    )
    for name, value in lists:
        if isinstance(value, (str, np.ndarray)) or not isinstance(value, Sequence):
            raise param_error(
                name, owner, "a list with one entry per turn", describe(value), cls=TypeError
            )
    n = len(pred_masks)
    for name, value in lists[1:]:
        if len(value) != n:
            raise param_error(
                name, owner, f"one entry per turn ({n}, as pred_masks)", f"{len(value)} entries"
            )
    sim = resolve_text_sim(text_sim, owner)
    tp = positives = 0
    for pm, pp, gm, gp in zip(pred_masks, pred_phrases, gt_masks, gt_phrases, strict=True):
        gp = _check_phrases("gt_phrases", owner, gp)
        if len(pm) == 0 or len(pp) == 0:
            positives += len(gp) if strict else 0
            continue
        positives += len(gp)
        tp += len(
            greedy_matches(
                pm,
                pp,
                gm,
                gp,
                text_sim=sim,
                iou_threshold=iou_threshold,
                sim_threshold=sim_threshold,
                official_quirks=official_quirks,
            )
        )
    return tp / positives if positives > 0 else 0.0


def _one_turn(phrases: Any) -> bool:
    return isinstance(phrases, (list, tuple)) and all(isinstance(p, str) for p in phrases)


# ----------------------------------------------------------------------------- evaluation


@dataclass
class Report:
    """What :func:`evaluate` returns.

    ``overall`` and ``per_subset[name]``: metric -> mean over videos (None where not computed:
    METEOR/SPICE without Java, CLAIR without a judge); ``per_video``: video id -> its metrics;
    ``counts``: videos, records (chunks), turns, filtered turns, scored turns; ``filtered``: the
    reason for each dropped turn; ``text_sim`` and ``tokenizer``: what was used.
    """

    track: str
    overall: dict[str, float | None]
    per_subset: dict[str, dict[str, float | None]]
    per_video: dict[str, dict[str, float | None]]
    counts: dict[str, Any]
    filtered: list[str] = field(default_factory=list)
    text_sim: str = ""
    tokenizer: str = ""

    def table(self) -> list[dict[str, Any]]:
        """One row per subset and one "overall" row, for printing."""
        rows = []
        for name, metrics in [*sorted(self.per_subset.items()), ("overall", self.overall)]:
            n = self.counts["videos"] if name == "overall" else self.counts["per_subset"][name]
            rows.append({"subset": name, "videos": n, **metrics})
        return rows


def _metric_names(track: str, clair: bool) -> list[str]:
    names = ["mIoU", "recall"] if track == "G" else []
    return [*names, *CAPTION_KEYS, *(["CLAIR"] if clair else [])]


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return None if len(vals) < len(values) or not vals else float(np.mean(vals))


def _check_response(response: Any, shape: tuple[int, int, int], video_id: str) -> Any:
    from sama.adapter import ModelResponse

    if not isinstance(response, ModelResponse):
        raise param_error(
            "model",
            "evaluate",
            "a model whose respond() returns ModelResponse",
            describe(response),
            cls=TypeError,
        )
    for m in response.masks:
        if m.shape != shape:
            raise param_error(
                "model",
                "evaluate",
                f"predicted masks of the video's shape {shape} ({video_id})",
                describe(m),
            )
    return response


def evaluate(
    model: Any,
    records: Sequence[Any],
    track: str = "G",
    text_sim: Callable[[str, str], float] | str | None = None,
    clair: Callable[[str, str], Any] | None = None,
    *,
    history: str = "gt",
    max_rounds: int = 5,
    penalize_unpaired: bool = False,
    strict: bool = False,
    official_quirks: bool = False,
    java: bool | None = None,
    captions: CaptionScorer | None = None,
) -> Report:
    """Run ``model`` on the benchmark ``records`` and score it on track ``"G"`` (grounded chat:
    mIoU, recall, caption metrics, CLAIR) or ``"C"`` (referring: caption metrics and CLAIR on
    the turns whose question refers to regions; predicted masks are ignored).

    Each record is split into chunks of ``max_rounds`` rounds and filtered (see
    :func:`sama.schema.chunk_rounds`); within a chunk the model sees the earlier rounds as
    history: the ground-truth answers (``history="gt"``) or its own (``"model"``). Metrics are
    computed per video over its kept turns and averaged over videos, per subset and overall.
    ``text_sim``: a callable, ``"minilm"``, ``"jaccard"`` or None (MiniLM when installed, else
    Jaccard). ``clair(candidate, reference)`` returns a score in [0, 1] (or ``(score, reason)``).
    ``java``/``captions``: see :class:`sama.captions.CaptionScorer` (one is made when None).
    """
    from sama.schema import VideoRecord, chunk_rounds

    owner = "evaluate"
    if not callable(getattr(model, "respond", None)):
        raise param_error(
            "model", owner, "an object with a respond() method", describe(model), cls=TypeError
        )
    if isinstance(records, VideoRecord):
        records = [records]
    if (
        not isinstance(records, Sequence)
        or not records
        or not all(isinstance(r, VideoRecord) for r in records)
    ):
        raise param_error(
            "records", owner, "a non-empty list of VideoRecord", describe(records), cls=TypeError
        )
    track = check_choice("track", owner, track, ("G", "C"))
    history = check_choice("history", owner, history, ("gt", "model"))
    penalize_unpaired = check_bool("penalize_unpaired", owner, penalize_unpaired)
    strict = check_bool("strict", owner, strict)
    official_quirks = check_bool("official_quirks", owner, official_quirks)
    check_callable("clair", owner, clair, optional=True)
    if captions is not None and not isinstance(captions, CaptionScorer):
        raise param_error(
            "captions", owner, "a CaptionScorer or None", describe(captions), cls=TypeError
        )
    max_rounds = check_int("max_rounds", owner, max_rounds, low=1, high=10_000)
    if java is not None:
        check_bool("java", owner, java)
    sim = resolve_text_sim(text_sim, owner)
    from sama.schema import validate

    own_scorer = captions is None
    scorer = CaptionScorer(java=java) if own_scorer else captions
    videos: dict[str, dict[str, Any]] = {}
    filtered: list[str] = []
    n_turns = n_chunks = n_scored = 0
    for record in records:
        n_turns += len(record.turns)
        filtered += validate(record)
        chunks = chunk_rounds(record, max_rounds)
        n_chunks += len(chunks)
        shape = (record.n_frames, record.height, record.width)
        v = videos.setdefault(record.video_id, {"subset": record.subset, "turns": []})
        for chunk in chunks:
            past: list[tuple[str, str]] = []
            for turn in chunk.turns:
                scored = track == "G" or len(turn.regions) > 0
                resp = _check_response(
                    model.respond(record.frames, list(past), turn.question, list(turn.regions)),
                    shape,
                    record.video_id,
                )
                past.append((turn.question, turn.answer if history == "gt" else resp.text))
                if scored:
                    n_scored += 1
                    v["turns"].append((turn, resp))
    texts = [
        t
        for v in videos.values()
        for turn, resp in v["turns"]
        for t in (clean_text(turn.answer), clean_text(resp.text))
    ]
    tokens = iter(scorer.tokenize(texts))
    per_video: dict[str, dict[str, float | None]] = {}
    for vid, v in videos.items():
        if not v["turns"]:
            continue
        refs, hyps, keep = [], [], []
        for turn, resp in v["turns"]:
            ref, hyp = next(tokens), next(tokens)
            raw_ref, raw_hyp = clean_text(turn.answer), clean_text(resp.text)
            keep.append(bool(raw_ref and raw_hyp))
            if raw_ref and raw_hyp:
                refs.append(ref)
                hyps.append(hyp)
        metrics: dict[str, float | None] = {}
        if track == "G":
            metrics["mIoU"] = float(
                np.mean(
                    [
                        greedy_miou(resp.masks, turn.valid_gt, penalize_unpaired=penalize_unpaired)
                        for turn, resp in v["turns"]
                    ]
                )
            )
            metrics["recall"] = greedy_recall(
                [resp.masks for _, resp in v["turns"]],
                [extract_phrases(resp.text) for _, resp in v["turns"]],
                [turn.valid_gt for turn, _ in v["turns"]],
                [extract_phrases(turn.answer) for turn, _ in v["turns"]],
                text_sim=sim,
                strict=strict,
                official_quirks=official_quirks,
            )
        metrics.update(scorer.score_tokenized(refs, hyps))
        if clair is not None:
            metrics["CLAIR"] = float(
                np.mean(
                    [
                        _clair_score(clair, clean_text(resp.text), clean_text(turn.answer))
                        for turn, resp in v["turns"]
                    ]
                )
            )
        per_video[vid] = {"subset": v["subset"], **metrics}  # type: ignore[dict-item]
    if own_scorer:
        scorer.close()
    names = _metric_names(track, clair is not None)
    subsets = sorted({m["subset"] for m in per_video.values()})  # type: ignore[misc]

    def average(rows: list[dict[str, Any]]) -> dict[str, float | None]:
        return {k: _mean([r[k] for r in rows]) for k in names}

    rows = list(per_video.values())
    per_subset = {s: average([r for r in rows if r["subset"] == s]) for s in subsets}
    counts = {
        "videos": len(per_video),
        "records": n_chunks,
        "turns": n_turns,
        "filtered_turns": len(filtered),
        "scored_turns": n_scored,
        "per_subset": {s: sum(r["subset"] == s for r in rows) for s in subsets},
    }
    for r in per_video.values():
        r.pop("subset")
    return Report(
        track,
        average(rows),
        per_subset,
        per_video,
        counts,
        filtered,
        getattr(sim, "name", getattr(sim, "__name__", "custom")),
        scorer.tokenizer,
    )


def _clair_score(clair: Callable[[str, str], Any], candidate: str, reference: str) -> float:
    out = clair(candidate, reference)
    score = out[0] if isinstance(out, tuple) else out
    return float(score)
