"""Prompts in the paper's format: lettered options and a final ``Answer: <letters>`` line.

Sec. 3 of the paper: the candidates are listed with letters A, B, C, ... in the given order, one of
them being "No objects are in common", and the model must end with "Answer: " followed by the
letters of its choices separated by commas (e.g. "Answer: A, C"). The perception baseline (Sec. 4)
shows one image and asks which listed objects appear in it; its none option reads
:data:`PERCEPTION_NONE` at the same letter.
"""

from __future__ import annotations

import re

from commono.schema import MAX_OPTIONS, NONE_OPTION, Example, validate
from paperkit import check_choice, check_int, describe, param_error

__all__ = ["ANSWER_INSTRUCTION", "PERCEPTION_NONE", "build_prompt", "letters", "parse_options"]

ANSWER_INSTRUCTION = (
    "Select every option that applies. End your response with a final line of the form "
    '"Answer: <letters separated by commas>", for example "Answer: A, C".'
)
PERCEPTION_NONE = "None of these objects appear in this image"
_OPTION = re.compile(r"^([A-Z])\. (.+)$", re.MULTILINE)


def letters(n: int) -> list[str]:
    """The first ``n`` option letters: ``letters(3) == ["A", "B", "C"]`` (``1 <= n <= 26``)."""
    n = check_int("n", "letters", n, low=1, high=MAX_OPTIONS)
    return [chr(ord("A") + k) for k in range(n)]


def build_prompt(example: Example, task: str = "common", image_index: int | None = None) -> str:
    """The text shown with the image(s) of ``example``.

    ``task="common"``: both images; "Which of the following objects appear in both images?".
    ``task="perception"``: only image ``image_index`` (0 or 1); "Which of the following objects
    appear in this image?", the none option reading :data:`PERCEPTION_NONE`. Every candidate is
    listed once as ``"<letter>. <name>"`` with consecutive letters, followed by
    :data:`ANSWER_INSTRUCTION`.
    """
    validate(example, owner="build_prompt")
    check_choice("task", "build_prompt", task, ("common", "perception"))
    if task == "common":
        if image_index is not None:
            raise param_error(
                "image_index", "build_prompt", "None for the common task", describe(image_index)
            )
        head = "You are shown two images.\nWhich of the following objects appear in both images?"
        options = list(example.candidates)
    else:
        if image_index is None:
            raise param_error("image_index", "build_prompt", "0 or 1 for the perception task", None)
        check_int("image_index", "build_prompt", image_index, low=0, high=1)
        head = "You are shown one image.\nWhich of the following objects appear in this image?"
        options = [PERCEPTION_NONE if c == NONE_OPTION else c for c in example.candidates]
    lines = [f"{a}. {c}" for a, c in zip(letters(len(options)), options, strict=True)]
    return "\n".join([head, "Options:", *lines, ANSWER_INSTRUCTION])


def parse_options(prompt: str) -> dict[str, str]:
    """The lettered options of a prompt built by :func:`build_prompt`, letter -> text (what a
    reference adapter reads from the prompt, as a model would)."""
    if not isinstance(prompt, str):
        raise param_error("prompt", "parse_options", "a string", describe(prompt), cls=TypeError)
    found = dict(_OPTION.findall(prompt))
    if not found:
        raise param_error(
            "prompt", "parse_options", "a prompt with lettered options", describe(prompt[:40])
        )
    return found
