"""parse_answer against the answer format of Sec. 3 (last "Answer:", letters split on commas,
spaces and "and", punctuation stripped, range checked, duplicates collapsed)."""

import pytest

from commono import parse_answer


@pytest.mark.parametrize(
    ("text", "n", "expected"),
    [
        ("Answer: A, C", 5, {"A", "C"}),
        ("answer: c and a", 5, {"A", "C"}),
        ("B\nAnswer: D", 5, {"D"}),
        ("Answer: A, A", 5, {"A"}),
        ("Answer: (A), C.", 5, {"A", "C"}),
        ("Answer: [B] and [E]!", 5, {"B", "E"}),
        ("ANSWER:A,B,C", 3, {"A", "B", "C"}),
        ("Answer: A\nsome words\nAnswer: B", 5, {"B"}),  # the last occurrence wins
        ("Answer: A, C\nBecause the red star is there.", 5, {"A", "C"}),  # only that line
        ("Answer: A and C are common", 5, {"A", "C"}),  # longer words are ignored
    ],
)
def test_parses(text, n, expected):
    assert parse_answer(text, n) == expected


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ("Answer: Z", 5),  # out of range
        ("Answer: A, F", 5),  # one letter out of range spoils the answer
        ("The objects are A and C", 5),  # no "Answer:"
        ("Answer:", 5),  # nothing after it
        ("Answer: none of them", 5),  # no letter
        ("", 3),
    ],
)
def test_failures_are_none(text, n):
    assert parse_answer(text, n) is None
