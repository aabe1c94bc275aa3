"""build_prompt lists every candidate once with consecutive letters and the answer format."""

import re

import numpy as np
import pytest

from commono import NONE_OPTION, Example, build_prompt, letters, parse_options
from commono.prompt import ANSWER_INSTRUCTION, PERCEPTION_NONE

IMG = np.zeros((8, 8, 3), np.uint8)


def make():
    return Example(
        id="x",
        images=(IMG, IMG),
        candidates=["red star", NONE_OPTION, "blue circle", "green striped square"],
        gt_common=["blue circle"],
        scene_objects=(["red star", "blue circle"], ["blue circle", "green striped square"]),
    )


def test_letters():
    assert letters(4) == ["A", "B", "C", "D"]
    assert letters(26)[-1] == "Z"


@pytest.mark.parametrize(("task", "k"), [("common", None), ("perception", 0), ("perception", 1)])
def test_every_candidate_once_with_consecutive_letters(task, k):
    ex = make()
    prompt = build_prompt(ex, task, k)
    found = re.findall(r"^([A-Z])\. (.+)$", prompt, re.MULTILINE)
    assert [a for a, _ in found] == ["A", "B", "C", "D"]
    names = [n for _, n in found]
    none = NONE_OPTION if task == "common" else PERCEPTION_NONE
    assert names == [none if c == NONE_OPTION else c for c in ex.candidates]
    assert prompt.endswith(ANSWER_INSTRUCTION)
    assert '"Answer: A, C"' in prompt
    assert parse_options(prompt) == dict(found)


def test_task_wording_differs():
    ex = make()
    assert "both images" in build_prompt(ex)
    assert "this image" in build_prompt(ex, "perception", 0)
    with pytest.raises(ValueError, match="'image_index'"):
        build_prompt(ex, "perception")
