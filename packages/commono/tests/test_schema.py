"""Example validation and the JSONL round trip with PNG images."""

import numpy as np
import pytest

from commono import NONE_OPTION, Example, load_jsonl, save_jsonl, validate


def test_jsonl_round_trip(tmp_path, bench_small):
    examples = bench_small[:5]
    path = save_jsonl(examples, tmp_path / "bench.jsonl", tmp_path / "images")
    assert len(list((tmp_path / "images").glob("*.png"))) == 10
    back = load_jsonl(path)
    assert len(back) == 5
    for a, b in zip(examples, back, strict=True):
        assert (a.id, a.candidates, a.gt_common, a.split, a.source) == (
            b.id,
            b.candidates,
            b.gt_common,
            b.split,
            b.source,
        )
        assert [list(s) for s in a.scene_objects] == [list(s) for s in b.scene_objects]
        assert a.similar_distractor == b.similar_distractor
        for k in (0, 1):
            assert np.array_equal(a.image(k), b.image(k))  # PNG is lossless
    lazy = load_jsonl(path, load_images=False, limit=2)
    assert len(lazy) == 2 and isinstance(lazy[0].images[0], str)
    assert np.array_equal(lazy[0].image(1), examples[0].image(1))


IMG = np.zeros((8, 8, 3), np.uint8)


@pytest.mark.parametrize(
    ("change", "arg"),
    [
        ({"candidates": ["a star", "a star", NONE_OPTION]}, "candidates"),
        ({"candidates": ["red star", "blue circle"]}, "candidates"),
        ({"images": (IMG,)}, "images"),
        ({"images": (IMG, IMG, IMG)}, "images"),
        ({"gt_common": ["green cross"]}, "gt_common"),
        ({"split": "hard"}, "split"),
    ],
)
def test_bad_examples_name_the_field(change, arg):
    good = {
        "id": "x",
        "images": (IMG, IMG),
        "candidates": ["red star", NONE_OPTION],
        "gt_common": [],
    }
    with pytest.raises(ValueError, match=f"'{arg}'"):
        Example(**{**good, **change})
    e = Example(**good)
    for k, v in change.items():
        setattr(e, k, v)
    with pytest.raises(ValueError, match=f"'{arg}'"):
        validate(e)


def test_gt_must_match_the_scenes():
    with pytest.raises(ValueError, match="'gt_common'"):
        Example(
            id="x",
            images=(IMG, IMG),
            candidates=["red star", NONE_OPTION],
            gt_common=[],
            scene_objects=(["red star"], ["red star"]),
        )
