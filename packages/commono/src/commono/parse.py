"""Reading a model's answer: the letters after the last ``Answer:`` (Sec. 3 of the paper)."""

from __future__ import annotations

import re

from paperkit import check_int, describe, param_error

__all__ = ["parse_answer"]

_ANSWER = re.compile(r"answer\s*:", re.IGNORECASE)
_SPLIT = re.compile(r"[,\s;/&+]+|\band\b", re.IGNORECASE)
_STRIP = "()[]{}<>.:;!?\"'*`_-"


def parse_answer(text: str, n_options: int) -> set[str] | None:
    """The set of option letters a response chose, or None when it gives no usable answer.

    Take the last occurrence of ``Answer:`` (any case); split the rest of that line on commas,
    whitespace and the word "and"; strip surrounding punctuation and brackets from each token
    (``"C."`` -> C, ``"(A)"`` -> A); keep the tokens that are a single letter, upper-cased, and
    ignore longer words; duplicates collapse. Returns None (a parse failure, scored as wrong and
    not as a hallucination) when there is no ``Answer:``, when no letter follows it, or when a
    letter lies outside the first ``n_options`` (``"Answer: Z"`` with 5 options).

    >>> sorted(parse_answer("I see a cat.\\nAnswer: c and (a).", 5))
    ['A', 'C']
    """
    if not isinstance(text, str):
        raise param_error("text", "parse_answer", "a string", describe(text), cls=TypeError)
    n = check_int("n_options", "parse_answer", n_options, low=1, high=26)
    hits = list(_ANSWER.finditer(text))
    if not hits:
        return None
    rest = text[hits[-1].end() :].split("\n", 1)[0]
    valid = {chr(ord("A") + k) for k in range(n)}
    chosen: set[str] = set()
    for token in _SPLIT.split(rest):
        token = token.strip(_STRIP) if token else ""
        if not token:
            continue
        if len(token) != 1 or not token.isalpha():
            continue  # words around the letters ("Answer: A and C are common") are ignored
        letter = token.upper()
        if letter not in valid:
            return None
        chosen.add(letter)
    return chosen or None
