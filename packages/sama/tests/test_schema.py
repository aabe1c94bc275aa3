import numpy as np
import pytest

from conftest import tiny_record
from sama import (
    Region,
    Turn,
    VideoRecord,
    chunk_rounds,
    from_json,
    make_synthetic_bench,
    sample_frame_indices,
    to_json,
    validate,
)
from sama.schema import SEG_SUFFIX


def _same(a, b):
    assert a.video_id == b.video_id and a.subset == b.subset and a.height == b.height
    np.testing.assert_array_equal(a.frames, b.frames)
    for s, t in zip(a.turns, b.turns, strict=True):
        assert (s.question, s.answer, s.question_id) == (t.question, t.answer, t.question_id)
        for x, y in zip([r.masks for r in s.regions], [r.masks for r in t.regions], strict=True):
            assert x.dtype == y.dtype == bool and np.array_equal(x, y)
        for x, y in zip(s.gt_masks, t.gt_masks, strict=True):
            assert (x is None and y is None) or np.array_equal(x, y)


@pytest.mark.parametrize("encoding", ["rle", "bits"])
def test_json_round_trip_is_lossless(encoding):
    records = make_synthetic_bench(n_videos=3, n_frames=5, size=32, seed=1)
    back = from_json(to_json(records, masks=encoding))
    for a, b in zip(records, back, strict=True):
        _same(a, b)
    one = tiny_record()
    one.turns[0].gt_masks.append(None)  # an empty GT annotation survives as None
    _same(one, from_json(to_json(one, masks=encoding)))


def test_rle_is_cocos():
    from pycocotools import mask as mask_utils

    rec = tiny_record(1)
    doc = __import__("json").loads(to_json(rec))
    rle = doc["turns"][0]["regions"][0]["rle"][0]
    decoded = mask_utils.decode({"size": rle["size"], "counts": rle["counts"].encode()})
    np.testing.assert_array_equal(decoded.astype(bool), rec.turns[0].regions[0].masks[0])


def test_turn_with_two_masks_and_one_region_is_filtered_with_a_reason():
    rec = tiny_record(3)
    m = rec.turns[1].regions[0].masks
    rec.turns[1] = Turn("Compare <mask> with <mask>.", "The <p>x</p> [SEG].", [Region(m)], [m], 7)
    reasons = validate(rec)
    assert len(reasons) == 1 and "2 <mask> placeholders but 1 regions" in reasons[0]
    rec.turns[2] = Turn("What is <mask>?", "A <p>x</p>.", [Region(m)], [m], 8)
    assert "0 [SEG] tokens but 1 non-empty GT masks" in validate(rec)[1]
    kept = chunk_rounds(rec)
    assert [t.question_id for c in kept for t in c.turns] == [0]


def test_chunking_happens_before_filtering():
    rec = tiny_record(12)
    assert [len(c.turns) for c in chunk_rounds(rec, 5)] == [5, 5, 2]
    m = rec.turns[0].regions[0].masks
    for k in range(5, 10):  # invalidate the whole second chunk
        rec.turns[k] = Turn("<mask> <mask>", "x", [Region(m)], [], k)
    chunks = chunk_rounds(rec, 5)
    assert [len(c.turns) for c in chunks] == [5, 2]  # not [5, 2] re-chunked from 7 valid turns
    assert chunks[1].turns[0].question_id == 10
    assert chunks[0].turns[0].question.endswith(SEG_SUFFIX)
    assert chunk_rounds(chunks[0])[0].turns[0].question.count(SEG_SUFFIX.strip()) == 1


def test_sample_frame_indices_long_video():
    idx = sample_frame_indices(100)
    assert len(idx) == 32 and idx == sorted(set(idx)) and all(i % 3 == 0 for i in idx)
    # 34 candidates 0, 3, ..., 99 thinned by idx[int(i * 34 / 32)]
    assert idx[:3] == [0, 3, 6] and idx[-1] == 3 * int(31 * 34 / 32)  # 96, not 99


def test_sample_frame_indices_short_video_padding():
    # n = 10: [0, 3, 6, 9] plus int((i + 1) * 10 / 5) = 2, 4, 6, 8 -> deduplicated: 7 frames
    assert sample_frame_indices(10) == [0, 2, 3, 4, 6, 8, 9]
    for n in range(1, 24):
        idx = sample_frame_indices(n)
        assert idx == sorted(set(idx)) and all(0 <= i < n for i in idx)
    assert sample_frame_indices(0) == []
    assert sample_frame_indices(1) == [0]


def test_masks_must_match_the_video():
    frames = np.zeros((2, 4, 4, 3), np.uint8)
    wrong = np.zeros((2, 4, 5), bool)
    with pytest.raises(ValueError, match="'turns'"):
        VideoRecord("v", frames, 4, 4, [Turn("<mask>", "a", [Region(wrong)], [])])
    with pytest.raises(TypeError, match="'masks'"):
        Region(np.zeros((2, 4, 4), np.uint8))
    with pytest.raises(ValueError, match="'frames'"):
        VideoRecord("v", frames, 4, 5, [])
