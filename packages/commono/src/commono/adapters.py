"""Model adapters: anything that answers ``(images, prompt) -> text`` (Sec. 4 of the paper
evaluates multimodal LLMs this way).

The reference adapters read the lettered options from the prompt, as a model would, and answer
in the required ``Answer: <letters>`` format:

- :class:`OracleAdapter` knows the ground truth of given examples (an upper bound, and a check
  of the harness);
- :class:`RandomAdapter` picks each object option independently with probability 1/2 (NONE
  alone when it picks none);
- :class:`UnionAdapter` answers every object it detects in either image, the "co-occurrence"
  hallucinator: it picks the one-scene objects, look-alikes included;
- :class:`PerceptionIntersectAdapter` detects per image and intersects: two perceptions, then
  an exact set operation (what a model that perceives well and reasons exactly would do);
- :class:`CallableAdapter` wraps any user function, e.g. a client of a real MLLM.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Any, Protocol, runtime_checkable

import numpy as np

from commono.prompt import PERCEPTION_NONE, build_prompt, parse_options
from commono.schema import NONE_OPTION, Example, validate
from paperkit import check_callable, check_int, describe, param_error

__all__ = [
    "Adapter",
    "CallableAdapter",
    "OracleAdapter",
    "PerceptionIntersectAdapter",
    "RandomAdapter",
    "UnionAdapter",
    "format_answer",
]

_NONES = (NONE_OPTION, PERCEPTION_NONE)


@runtime_checkable
class Adapter(Protocol):
    """A model under test: ``adapter(images, prompt) -> response text``.

    ``images`` holds two ``(H, W, 3)`` uint8 arrays for the common task and one for the
    perception task; the response should end with ``Answer: <letters separated by commas>``.
    """

    def __call__(self, images: list[np.ndarray], prompt: str) -> str: ...


def format_answer(letters: Sequence[str]) -> str:
    """``["C", "A"] -> "Answer: A, C"``: the paper's answer line."""
    if isinstance(letters, str) or not isinstance(letters, (list, tuple, set, frozenset)):
        raise param_error(
            "letters", "format_answer", "a list of option letters", describe(letters), cls=TypeError
        )
    if not all(isinstance(x, str) and len(x) == 1 and "A" <= x <= "Z" for x in letters):
        raise param_error(
            "letters", "format_answer", "single letters A-Z", sorted(map(str, letters))
        )
    return "Answer: " + ", ".join(sorted(letters))


def _check_call(images: Any, prompt: Any, owner: str) -> dict[str, str]:
    if (
        isinstance(images, np.ndarray)
        or not isinstance(images, (list, tuple))
        or len(images) not in (1, 2)
    ):
        raise param_error(
            "images", owner, "a list of one or two images", describe(images), cls=TypeError
        )
    for img in images:
        if (
            not isinstance(img, np.ndarray)
            or img.ndim != 3
            or img.shape[-1] != 3
            or img.dtype != np.uint8
        ):
            raise param_error(
                "images", owner, "(H, W, 3) uint8 arrays", describe(img), cls=TypeError
            )
    return parse_options(prompt)


def _choose(options: dict[str, str], chosen: set[str]) -> str:
    """Letters of the chosen objects; the none option alone when nothing is chosen."""
    picks = [a for a, name in options.items() if name in chosen and name not in _NONES]
    if not picks:
        picks = [a for a, name in options.items() if name in _NONES][:1]
    return format_answer(picks)


def _key(images: Sequence[np.ndarray], prompt: str) -> bytes:
    h = hashlib.blake2b(digest_size=16)
    for img in images:
        h.update(str(img.shape).encode())
        h.update(np.ascontiguousarray(img).tobytes())
    h.update(prompt.encode())
    return h.digest()


class OracleAdapter:
    """Answers the ground truth of ``examples`` (looked up by the images and the prompt), for
    both tasks; asked about anything else it raises ``KeyError``."""

    def __init__(self, examples: Sequence[Example]) -> None:
        if isinstance(examples, Example) or not isinstance(examples, Sequence) or not examples:
            raise param_error(
                "examples",
                "OracleAdapter",
                "a non-empty list of Example",
                describe(examples),
                cls=TypeError,
            )
        self._answers: dict[bytes, str] = {}
        for ex in examples:
            validate(ex, owner="OracleAdapter")
            images = [ex.image(0), ex.image(1)]
            self._answers[_key(images, build_prompt(ex))] = self._letters(ex, ex.gt_set)
            if ex.scene_objects[0] and ex.scene_objects[1]:
                for k in (0, 1):
                    prompt = build_prompt(ex, "perception", k)
                    self._answers[_key([images[k]], prompt)] = self._letters(
                        ex, ex.perception_gt(k)
                    )

    @staticmethod
    def _letters(ex: Example, truth: frozenset[str]) -> str:
        return format_answer([chr(ord("A") + i) for i, c in enumerate(ex.candidates) if c in truth])

    def __call__(self, images: list[np.ndarray], prompt: str) -> str:
        _check_call(images, prompt, "OracleAdapter")
        key = _key(images, prompt)
        if key not in self._answers:
            raise KeyError("OracleAdapter was not given the example behind these images and prompt")
        return self._answers[key]


class RandomAdapter:
    """Chooses each object option independently with probability ``p`` (default 1/2); the none
    option alone when it chose no object. Seeded: the same sequence of calls gives the same
    answers."""

    def __init__(self, seed: int = 0, p: float = 0.5) -> None:
        from paperkit import check_real

        self.seed = check_int("seed", "RandomAdapter", seed, low=0)
        self.p = check_real("p", "RandomAdapter", p, low=0, high=1)
        self._rng = np.random.default_rng(self.seed)

    def __call__(self, images: list[np.ndarray], prompt: str) -> str:
        options = _check_call(images, prompt, "RandomAdapter")
        objects = [name for name in options.values() if name not in _NONES]
        draws = self._rng.random(len(objects)) < self.p
        return _choose(options, {o for o, d in zip(objects, draws, strict=True) if d})


def _check_detector(detector: Any, owner: str) -> Any:
    if not callable(getattr(detector, "detect", None)):
        raise param_error(
            "detector",
            owner,
            "an object with detect(image, candidates) -> set of names",
            describe(detector),
            cls=TypeError,
        )
    return detector


class UnionAdapter:
    """Answers every candidate ``detector`` finds in either image (for the perception task, in
    the one image): the co-occurrence hallucinator, which picks one-scene objects and their
    look-alikes. ``detector.detect(image, candidates) -> set[str]`` (e.g. a trained
    :class:`commono.detector.TinyDetector`)."""

    def __init__(self, detector: Any) -> None:
        self.detector = _check_detector(detector, "UnionAdapter")

    def __call__(self, images: list[np.ndarray], prompt: str) -> str:
        options = _check_call(images, prompt, "UnionAdapter")
        names = [n for n in options.values() if n not in _NONES]
        found: set[str] = set()
        for img in images:
            found |= self.detector.detect(img, names)
        return _choose(options, found)


class PerceptionIntersectAdapter:
    """Detects the candidates in each image with ``detector`` and answers the intersection of
    the two sets (for the perception task, the one image's set): perfect reasoning on top of
    imperfect perception, so its errors are perception errors compounded across the images."""

    def __init__(self, detector: Any) -> None:
        self.detector = _check_detector(detector, "PerceptionIntersectAdapter")

    def __call__(self, images: list[np.ndarray], prompt: str) -> str:
        options = _check_call(images, prompt, "PerceptionIntersectAdapter")
        names = [n for n in options.values() if n not in _NONES]
        sets = [self.detector.detect(img, names) for img in images]
        return _choose(options, set.intersection(*sets))


class CallableAdapter:
    """Wraps ``fn(images, prompt) -> str`` (a user's MLLM client, a local model, a stub): checks
    the call and that the reply is a string. Nothing here opens a network connection."""

    def __init__(self, fn: Callable[[list[np.ndarray], str], str]) -> None:
        self.fn = check_callable("fn", "CallableAdapter", fn)

    def __call__(self, images: list[np.ndarray], prompt: str) -> str:
        _check_call(images, prompt, "CallableAdapter")
        reply = self.fn(list(images), prompt)
        if not isinstance(reply, str):
            raise TypeError(
                f"CallableAdapter: the wrapped function returned {describe(reply)}, not a string"
            )
        return reply
