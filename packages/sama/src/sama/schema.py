"""The SAMA-Bench data schema: regions, turns, video records, their validation and JSON form.

A SAMA-Bench record (paper Sec. 4, SAMA-Bench) is one video and a multi-turn conversation about it.
A human question may refer to regions with ``<mask>`` placeholders, each bound to a
spatio-temporal mask of shape (T, H, W); a gpt answer marks grounded phrases as
``<p>phrase</p> [SEG]``, each ``[SEG]`` bound to a ground-truth mask. The benchmark's evaluation
keeps a turn only when ``#<mask> == #regions`` and ``#[SEG] == #non-empty GT masks``
(:func:`validate` gives the reason for each turn it would drop), splits a conversation into chunks
of at most 5 rounds *before* filtering (:func:`chunk_rounds`), and feeds the model every third
frame (:func:`sample_frame_indices`).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from paperkit import check_bool, check_choice, check_int, describe, param_error

__all__ = [
    "SEG_SUFFIX",
    "Region",
    "Turn",
    "VideoRecord",
    "chunk_rounds",
    "from_json",
    "sample_frame_indices",
    "to_json",
    "validate",
]

#: Appended to a question whose answer carries [SEG] outputs, as the benchmark's loader does.
SEG_SUFFIX = " Response with interleaved segmentation masks."


def _check_mask(name: str, owner: str, value: Any) -> np.ndarray:
    """A boolean (T, H, W) numpy array; anything else is refused with a worded error."""
    if not isinstance(value, np.ndarray):
        raise param_error(
            name, owner, "a boolean numpy array of shape (T, H, W)", describe(value), cls=TypeError
        )
    if value.dtype != np.bool_:
        raise param_error(
            name, owner, "a boolean array (dtype bool)", describe(value), cls=TypeError
        )
    if value.ndim != 3 or 0 in value.shape:
        raise param_error(name, owner, "a non-empty array of shape (T, H, W)", describe(value))
    return value


@dataclass
class Region:
    """A referred region: a boolean spatio-temporal mask ``masks`` of shape (T, H, W)."""

    masks: np.ndarray

    def __post_init__(self) -> None:
        self.masks = _check_mask("masks", "Region", self.masks)


@dataclass
class Turn:
    """One round: a human ``question`` (with one ``<mask>`` per entry of ``regions``) and the
    gpt ``answer`` (with one ``[SEG]`` per non-empty entry of ``gt_masks``).

    ``gt_masks`` entries are boolean (T, H, W) arrays, or None for an empty annotation (the
    benchmark counts only non-empty ones against the ``[SEG]`` tokens).
    """

    question: str
    answer: str
    regions: list[Region] = field(default_factory=list)
    gt_masks: list[np.ndarray | None] = field(default_factory=list)
    question_id: str | int | None = None

    def __post_init__(self) -> None:
        for name in ("question", "answer"):
            if not isinstance(getattr(self, name), str):
                raise param_error(
                    name, "Turn", "a string", describe(getattr(self, name)), cls=TypeError
                )
        if not isinstance(self.regions, (list, tuple)) or not all(
            isinstance(r, Region) for r in self.regions
        ):
            raise param_error(
                "regions", "Turn", "a list of Region", describe(self.regions), cls=TypeError
            )
        if not isinstance(self.gt_masks, (list, tuple)):
            raise param_error(
                "gt_masks",
                "Turn",
                "a list of boolean (T, H, W) arrays",
                describe(self.gt_masks),
                cls=TypeError,
            )
        if self.question_id is not None and (
            isinstance(self.question_id, bool) or not isinstance(self.question_id, (str, int))
        ):
            raise param_error(
                "question_id",
                "Turn",
                "a string, an integer or None",
                describe(self.question_id),
                cls=TypeError,
            )
        self.regions = list(self.regions)
        self.gt_masks = [
            None if m is None else _check_mask("gt_masks", "Turn", m) for m in self.gt_masks
        ]

    @property
    def valid_gt(self) -> list[np.ndarray]:
        """The non-empty ground-truth masks, in order."""
        return [m for m in self.gt_masks if m is not None]


@dataclass
class VideoRecord:
    """One benchmark video: ``frames`` (T, H, W, 3) uint8 or a list of T frame paths,
    ``height`` x ``width``, the ``turns`` of its conversation and its source ``subset``.

    Every mask of every turn must have shape (T, height, width): a mismatch is refused here.
    """

    video_id: str
    frames: Any
    height: int
    width: int
    turns: list[Turn]
    subset: str = "synthetic"

    def __post_init__(self) -> None:
        owner = "VideoRecord"
        if not isinstance(self.video_id, str) or not self.video_id:
            raise param_error(
                "video_id", owner, "a non-empty string", describe(self.video_id), cls=TypeError
            )
        self.height = check_int("height", owner, self.height, low=1, high=1 << 14)
        self.width = check_int("width", owner, self.width, low=1, high=1 << 14)
        if isinstance(self.frames, np.ndarray):
            f = self.frames
            if f.dtype != np.uint8:
                raise param_error("frames", owner, "a uint8 array", describe(f), cls=TypeError)
            if f.ndim != 4 or f.shape[0] == 0 or f.shape[1:] != (self.height, self.width, 3):
                raise param_error(
                    "frames", owner, f"of shape (T, {self.height}, {self.width}, 3)", describe(f)
                )
        elif isinstance(self.frames, (list, tuple)):
            if not self.frames or not all(isinstance(p, str) for p in self.frames):
                raise param_error(
                    "frames",
                    owner,
                    "a non-empty list of frame paths",
                    describe(self.frames),
                    cls=TypeError,
                )
            self.frames = list(self.frames)
        else:
            raise param_error(
                "frames",
                owner,
                "a (T, H, W, 3) uint8 array or a list of paths",
                describe(self.frames),
                cls=TypeError,
            )
        if not isinstance(self.turns, (list, tuple)) or not all(
            isinstance(t, Turn) for t in self.turns
        ):
            raise param_error("turns", owner, "a list of Turn", describe(self.turns), cls=TypeError)
        self.turns = list(self.turns)
        if not isinstance(self.subset, str):
            raise param_error("subset", owner, "a string", describe(self.subset), cls=TypeError)
        shape = (self.n_frames, self.height, self.width)
        for k, turn in enumerate(self.turns):
            for what, masks in (
                ("regions", [r.masks for r in turn.regions]),
                ("gt_masks", turn.valid_gt),
            ):
                for m in masks:
                    if m.shape != shape:
                        raise param_error(
                            "turns",
                            owner,
                            f"masks of the video's shape (T, H, W) = {shape} (turn {k}, {what})",
                            describe(m),
                        )

    @property
    def n_frames(self) -> int:
        """T, the number of frames."""
        return len(self.frames)


def validate(record: VideoRecord) -> list[str]:
    """The reasons the benchmark's loader would drop turns of ``record``, one line per turn.

    A turn is dropped when its question's ``<mask>`` count differs from its number of regions,
    or its answer's ``[SEG]`` count differs from its number of non-empty GT masks. An empty list
    means every turn is kept.
    """
    if not isinstance(record, VideoRecord):
        raise param_error("record", "validate", "a VideoRecord", describe(record), cls=TypeError)
    reasons = []
    for k, turn in enumerate(record.turns):
        why = _turn_problem(turn)
        if why:
            reasons.append(f"{record.video_id} turn {k} ({turn.question_id}): {why}")
    return reasons


def _turn_problem(turn: Turn) -> str:
    n_mask, n_regions = turn.question.count("<mask>"), len(turn.regions)
    if n_mask != n_regions:
        return f"{n_mask} <mask> placeholders but {n_regions} regions"
    n_seg, n_gt = turn.answer.count("[SEG]"), len(turn.valid_gt)
    if n_seg != n_gt:
        return f"{n_seg} [SEG] tokens but {n_gt} non-empty GT masks"
    return ""


def chunk_rounds(
    record: VideoRecord, max_rounds: int = 5, *, filter_turns: bool = True
) -> list[VideoRecord]:
    """Split the conversation into chunks of at most ``max_rounds`` rounds, then drop the
    invalid turns inside each chunk (see :func:`validate`) and the chunks left empty.

    Chunking happens before filtering, as in the benchmark's loader: 12 rounds give chunks of
    5, 5 and 2 rounds whatever is filtered. A kept turn whose answer has ``[SEG]`` gets the
    question suffix " Response with interleaved segmentation masks." (once). Chunks share the
    record's ``video_id`` (scores are averaged per video) and are new records.
    """
    if not isinstance(record, VideoRecord):
        raise param_error(
            "record", "chunk_rounds", "a VideoRecord", describe(record), cls=TypeError
        )
    max_rounds = check_int("max_rounds", "chunk_rounds", max_rounds, low=1, high=10_000)
    filter_turns = check_bool("filter_turns", "chunk_rounds", filter_turns)
    chunks = []
    for start in range(0, len(record.turns), max_rounds):
        kept = []
        for turn in record.turns[start : start + max_rounds]:
            if filter_turns and _turn_problem(turn):
                continue
            question = turn.question
            if turn.answer.count("[SEG]") > 0 and "with interleaved segmentation masks." not in (
                question
            ):
                question = question + SEG_SUFFIX
            kept.append(replace(turn, question=question))
        if kept:
            chunks.append(replace(record, turns=kept))
    return chunks


def sample_frame_indices(
    n: int, interval: int = 3, max_frames: int = 32, min_frames: int = 8
) -> list[int]:
    """The frames fed to the model, as the benchmark's ``get_sparse_indices_uniform``.

    idx = [0, interval, 2 interval, ...] below n; when longer than ``max_frames`` keep
    ``idx[int(i * len(idx) / max_frames)]`` for i < max_frames; when shorter than ``min_frames``
    add ``int((i + 1) * n / (k + 1))`` for the k = min_frames - len(idx) missing ones, then sort
    and deduplicate (so a short video may end with fewer than ``min_frames``). n = 0 gives [].
    """
    owner = "sample_frame_indices"
    n = check_int("n", owner, n, low=0, high=10**7)
    interval = check_int("interval", owner, interval, low=1, high=10**6)
    max_frames = check_int("max_frames", owner, max_frames, low=1, high=10**6)
    min_frames = check_int("min_frames", owner, min_frames, low=0, high=10**6)
    if n == 0:
        return []
    idx = list(range(0, n, interval))
    if len(idx) > max_frames:
        step = len(idx) / max_frames
        idx = [idx[int(i * step)] for i in range(max_frames)]
    if len(idx) < min_frames:
        missing = min_frames - len(idx)
        extra_step = n / (missing + 1)
        idx = sorted(set(idx + [int((i + 1) * extra_step) for i in range(missing)]))
    return sorted(idx)


# ----------------------------------------------------------------------------- JSON


def _encode_mask(m: np.ndarray, encoding: str) -> dict[str, Any]:
    if encoding == "bits":
        packed = np.packbits(m.reshape(-1))
        return {"bits": base64.b64encode(packed.tobytes()).decode("ascii"), "shape": list(m.shape)}
    from pycocotools import mask as mask_utils

    rles = mask_utils.encode(np.asfortranarray(m.transpose(1, 2, 0).astype(np.uint8)))
    return {
        "rle": [
            {"size": [int(s) for s in r["size"]], "counts": r["counts"].decode("ascii")}
            for r in rles
        ]
    }


def _decode_mask(d: dict[str, Any]) -> np.ndarray:
    if "bits" in d:
        shape = tuple(d["shape"])
        bits = np.frombuffer(base64.b64decode(d["bits"]), dtype=np.uint8)
        return np.unpackbits(bits)[: int(np.prod(shape))].reshape(shape).astype(bool)
    from pycocotools import mask as mask_utils

    rles = [{"size": r["size"], "counts": r["counts"].encode("ascii")} for r in d["rle"]]
    return np.ascontiguousarray(mask_utils.decode(rles).transpose(2, 0, 1).astype(bool))


def to_json(records: VideoRecord | Sequence[VideoRecord], *, masks: str = "rle") -> str:
    """Serialise records to a JSON string; masks as COCO RLE, one per frame (pycocotools,
    ``masks="rle"``) or as packed bits (``masks="bits"``). Frames given as arrays are stored
    as packed bytes (base64), frame paths as they are."""
    check_choice("masks", "to_json", masks, ("rle", "bits"))
    single = isinstance(records, VideoRecord)
    items = [records] if single else list(records)
    if not all(isinstance(r, VideoRecord) for r in items):
        raise param_error(
            "records",
            "to_json",
            "a VideoRecord or a list of them",
            describe(records),
            cls=TypeError,
        )
    out = []
    for r in items:
        if isinstance(r.frames, np.ndarray):
            frames: Any = {
                "uint8": base64.b64encode(r.frames.tobytes()).decode("ascii"),
                "shape": list(r.frames.shape),
            }
        else:
            frames = list(r.frames)
        out.append(
            {
                "video_id": r.video_id,
                "height": r.height,
                "width": r.width,
                "subset": r.subset,
                "frames": frames,
                "turns": [
                    {
                        "question": t.question,
                        "answer": t.answer,
                        "question_id": t.question_id,
                        "regions": [_encode_mask(g.masks, masks) for g in t.regions],
                        "gt_masks": [
                            None if m is None else _encode_mask(m, masks) for m in t.gt_masks
                        ],
                    }
                    for t in r.turns
                ],
            }
        )
    return json.dumps(out[0] if single else out)


def from_json(text: str) -> VideoRecord | list[VideoRecord]:
    """Read what :func:`to_json` wrote (one record, or a list of them)."""
    if not isinstance(text, str):
        raise param_error("text", "from_json", "a JSON string", describe(text), cls=TypeError)
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise param_error("text", "from_json", "valid JSON", f"invalid JSON ({exc})") from exc
    single = isinstance(doc, dict)
    records = []
    for d in [doc] if single else doc:
        try:
            frames = d["frames"]
            if isinstance(frames, dict):
                raw = np.frombuffer(base64.b64decode(frames["uint8"]), dtype=np.uint8)
                frames = raw.reshape(frames["shape"]).copy()
            turns = [
                Turn(
                    t["question"],
                    t["answer"],
                    [Region(_decode_mask(g)) for g in t["regions"]],
                    [None if m is None else _decode_mask(m) for m in t["gt_masks"]],
                    t.get("question_id"),
                )
                for t in d["turns"]
            ]
            records.append(
                VideoRecord(
                    d["video_id"],
                    frames,
                    d["height"],
                    d["width"],
                    turns,
                    d.get("subset", "synthetic"),
                )
            )
        except (KeyError, TypeError) as exc:
            raise param_error(
                "text", "from_json", "a record written by to_json", f"a document lacking {exc}"
            ) from exc
    return records[0] if single else records
