"""The model side of the harness: the protocol a video chat model implements, and reference
models that bound the scores (perfect, empty, and degraded by a controlled amount)."""

from __future__ import annotations

import hashlib
import re
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np

from paperkit import check_int, check_real, describe, param_error
from sama.schema import SEG_SUFFIX, Region, VideoRecord

__all__ = ["ModelResponse", "NoisyOracle", "NullModel", "OracleModel", "VideoChatModel", "erode"]


@dataclass
class ModelResponse:
    """A model's answer: ``text`` (grounded phrases as ``<p>phrase</p> [SEG]``) and one boolean
    (T, H, W) mask per ``[SEG]``, in order."""

    text: str
    masks: list[np.ndarray] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise param_error(
                "text", "ModelResponse", "a string", describe(self.text), cls=TypeError
            )
        if not isinstance(self.masks, (list, tuple)):
            raise param_error(
                "masks",
                "ModelResponse",
                "a list of boolean (T, H, W) arrays",
                describe(self.masks),
                cls=TypeError,
            )
        for m in self.masks:
            if not isinstance(m, np.ndarray) or m.dtype != np.bool_ or m.ndim != 3:
                raise param_error(
                    "masks",
                    "ModelResponse",
                    "a list of boolean (T, H, W) arrays",
                    describe(m),
                    cls=TypeError,
                )
        self.masks = list(self.masks)


@runtime_checkable
class VideoChatModel(Protocol):
    """What :func:`sama.evaluate` calls, once per kept turn.

    ``frames``: the video, (T, H, W, 3) uint8 or frame paths (a model picks its frames, e.g. with
    :func:`sama.sample_frame_indices`); ``history``: the earlier (question, answer) rounds of the
    chunk; ``question``: with ``<mask>`` placeholders, one per entry of ``regions``.
    """

    def respond(
        self,
        frames: Any,
        history: list[tuple[str, str]],
        question: str,
        regions: list[Region],
    ) -> ModelResponse: ...


def _fingerprint(frames: Any) -> str:
    h = hashlib.blake2b(digest_size=16)
    if isinstance(frames, np.ndarray):
        h.update(str(frames.shape).encode())
        h.update(np.ascontiguousarray(frames).tobytes())
    else:
        h.update("\n".join(frames).encode())
    return h.hexdigest()


def _key(frames: Any, question: str, regions: Sequence[Region]) -> tuple:
    q = question[: -len(SEG_SUFFIX)] if question.endswith(SEG_SUFFIX) else question
    digests = tuple(
        hashlib.blake2b(np.packbits(r.masks).tobytes(), digest_size=8).hexdigest() for r in regions
    )
    return _fingerprint(frames), q, digests


def _check_respond(owner: str, history: Any, question: Any, regions: Any) -> None:
    if not isinstance(question, str):
        raise param_error("question", owner, "a string", describe(question), cls=TypeError)
    if not isinstance(history, (list, tuple)) or not all(
        isinstance(h, tuple) and len(h) == 2 for h in history
    ):
        raise param_error(
            "history",
            owner,
            "a list of (question, answer) tuples",
            describe(history),
            cls=TypeError,
        )
    if not isinstance(regions, (list, tuple)) or not all(isinstance(r, Region) for r in regions):
        raise param_error("regions", owner, "a list of Region", describe(regions), cls=TypeError)


class OracleModel:
    """Answers every turn of ``records`` with its ground truth (text and non-empty GT masks),
    found by the video's frames, the question and the referred regions. Scores mIoU = recall =
    BLEU = ROUGE-L = 1 (CIDEr-D is not 1: its IDF comes from each video's few turns)."""

    def __init__(self, records: Sequence[VideoRecord]) -> None:
        if isinstance(records, VideoRecord):
            records = [records]
        if not isinstance(records, Sequence) or not all(
            isinstance(r, VideoRecord) for r in records
        ):
            raise param_error(
                "records",
                type(self).__name__,
                "a list of VideoRecord",
                describe(records),
                cls=TypeError,
            )
        self._answers: dict[tuple, tuple[str, list[np.ndarray], str]] = {}
        for r in records:
            for k, t in enumerate(r.turns):
                key = _key(r.frames, t.question, t.regions)
                if key in self._answers and self._answers[key][0] != t.answer:
                    raise param_error(
                        "records",
                        type(self).__name__,
                        "turns that differ in frames, question or regions when their answers "
                        "differ",
                        f"two answers to {t.question!r} in {r.video_id} (turn {k})",
                    )
                self._answers[key] = (t.answer, t.valid_gt, f"{r.video_id}/{k}")

    def _lookup(self, frames: Any, history: Any, question: str, regions: list[Region]) -> tuple:
        owner = f"{type(self).__name__}.respond"
        _check_respond(owner, history, question, regions)
        if not isinstance(frames, (np.ndarray, list, tuple)):
            raise param_error(
                "frames",
                owner,
                "an array or a list of frame paths",
                describe(frames),
                cls=TypeError,
            )
        key = _key(frames, question, regions)
        if key not in self._answers:
            raise param_error(
                "question",
                type(self).__name__,
                "a question of the records the oracle was built on",
                question,
            )
        return self._answers[key]

    def respond(
        self, frames: Any, history: list[tuple[str, str]], question: str, regions: list[Region]
    ) -> ModelResponse:
        answer, masks, _ = self._lookup(frames, history, question, regions)
        return ModelResponse(answer, [m.copy() for m in masks])


class NullModel:
    """Answers every question with the same ungrounded ``text`` and no masks (mIoU 0)."""

    def __init__(self, text: str = "I cannot tell.") -> None:
        if not isinstance(text, str):
            raise param_error("text", "NullModel", "a string", describe(text), cls=TypeError)
        self.text = text

    def respond(
        self, frames: Any, history: list[tuple[str, str]], question: str, regions: list[Region]
    ) -> ModelResponse:
        _check_respond("NullModel.respond", history, question, regions)
        return ModelResponse(self.text, [])


def erode(mask: np.ndarray, pixels: int) -> np.ndarray:
    """Binary erosion of each frame of a (T, H, W) mask by ``pixels`` steps of the 4-neighbour
    cross (pixels outside the image count as background)."""
    if not isinstance(mask, np.ndarray) or mask.dtype != np.bool_:
        raise param_error(
            "mask", "erode", "a boolean (T, H, W) array", describe(mask), cls=TypeError
        )
    if mask.ndim != 3 or mask.size == 0:
        raise param_error("mask", "erode", "a non-empty (T, H, W) array", describe(mask))
    pixels = check_int("pixels", "erode", pixels, low=0, high=4096)
    m = mask.copy()
    for _ in range(pixels):
        p = np.pad(m, ((0, 0), (1, 1), (1, 1)), constant_values=False)
        m = p[:, 1:-1, 1:-1] & p[:, :-2, 1:-1] & p[:, 2:, 1:-1] & p[:, 1:-1, :-2] & p[:, 1:-1, 2:]
    return m


_PIECE = re.compile(r"<p>.*?</p>|\[SEG\]|\S+", re.DOTALL)


class NoisyOracle(OracleModel):
    """The oracle, degraded: each mask eroded by ``mask_erosion`` pixels, and each plain word of
    the answer (not a ``<p>...</p>`` phrase, not ``[SEG]``) dropped when its uniform
    u < ``word_drop``.

    The uniforms depend only on ``seed`` and the turn, so a higher rate drops a superset of the
    words a lower one drops: the degradation is nested and the scores fall monotonically."""

    def __init__(
        self,
        records: Sequence[VideoRecord],
        mask_erosion: int = 1,
        word_drop: float = 0.2,
        seed: int = 0,
    ) -> None:
        super().__init__(records)
        self.mask_erosion = check_int("mask_erosion", "NoisyOracle", mask_erosion, low=0, high=4096)
        self.word_drop = check_real("word_drop", "NoisyOracle", word_drop, low=0, high=1)
        self.seed = check_int("seed", "NoisyOracle", seed, low=0, high=2**32 - 1)

    def respond(
        self, frames: Any, history: list[tuple[str, str]], question: str, regions: list[Region]
    ) -> ModelResponse:
        answer, masks, where = self._lookup(frames, history, question, regions)
        pieces = _PIECE.findall(answer)
        u = np.random.default_rng([self.seed, zlib.crc32(where.encode())]).random(len(pieces))
        kept = [
            p
            for p, x in zip(pieces, u, strict=True)
            if p.startswith("<p>") or p == "[SEG]" or x >= self.word_drop
        ]
        return ModelResponse(" ".join(kept), [erode(m, self.mask_erosion) for m in masks])
