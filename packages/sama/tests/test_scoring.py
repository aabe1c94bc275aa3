import itertools

import numpy as np
import pytest

import sama.scoring
from conftest import line_mask
from sama import (
    clean_text,
    extract_phrases,
    greedy_matches,
    greedy_miou,
    greedy_pairs,
    greedy_recall,
    iou_matrix,
    jaccard_similarity,
    mask_iou,
)


def test_mask_iou_hand_example():
    a = np.zeros((2, 4, 4), bool)
    b = np.zeros((2, 4, 4), bool)
    a[0, :2, :2] = True  # 4 px in frame 0
    a[1, 0, :] = True  # 4 px in frame 1
    b[0, :2, 1:3] = True  # overlaps 2 px in frame 0
    b[1, 1, :] = True  # no overlap in frame 1
    # |A and B| = 2, |A or B| = 8 + 8 - 2 = 14 (counted by hand over both frames)
    assert mask_iou(a, b) == pytest.approx(2 / 14)
    assert mask_iou(a, a) == 1.0
    empty = np.zeros((2, 4, 4), bool)
    assert mask_iou(empty, empty) == 0.0  # empty union


def test_iou_matrix_equals_the_pairwise_loop():
    rng = np.random.default_rng(0)
    preds = [rng.random((3, 8, 8)) < 0.3 for _ in range(4)]
    gts = [rng.random((3, 8, 8)) < 0.3 for _ in range(3)] + [np.zeros((3, 8, 8), bool)]
    loop = np.array([[mask_iou(p, g) for g in gts] for p in preds])
    np.testing.assert_allclose(iou_matrix(preds, gts), loop, rtol=0, atol=1e-12)
    np.testing.assert_allclose(iou_matrix(preds, gts, method="matmul"), loop, rtol=0, atol=1e-12)
    odd = [rng.random((1, 3, 7)) < 0.5 for _ in range(3)]  # 21 bits: padding of the packed words
    ref = np.array([[mask_iou(p, g) for g in odd] for p in odd])
    np.testing.assert_allclose(iou_matrix(odd, odd), ref, rtol=0, atol=1e-12)


def test_iou_matrix_row_blocks_for_large_masks(monkeypatch):
    monkeypatch.setattr(sama.scoring, "PAIR_BLOCK_BYTES", 0)  # force the row-by-row path
    rng = np.random.default_rng(1)
    big = [rng.random((3, 16, 16)) < 0.2 for _ in range(9)]
    loop = np.array([[mask_iou(p, g) for g in big[4:]] for p in big[:4]])
    np.testing.assert_allclose(iou_matrix(big[:4], big[4:]), loop, rtol=0, atol=1e-12)


def test_greedy_pairs_on_a_hand_built_matrix():
    iou = np.array([[0.9, 0.8, 0.0], [0.85, 0.0, 0.0], [0.0, 0.0, 0.5]])
    # greedy: 0.9 at (0, 0) deletes row 0 and column 0; then 0.5 at (2, 2); row 1 is left at 0
    assert greedy_pairs(iou) == [(0, 0, 0.9), (2, 2, 0.5)]
    best = max(sum(iou[i, p[i]] for i in range(3)) for p in itertools.permutations(range(3)))
    assert best == pytest.approx(2.15)  # Hungarian (brute force): 0.8 + 0.85 + 0.5 > 0.9 + 0.5
    assert greedy_pairs(np.array([[0.5, 0.5], [0.5, 0.5]]))[0][:2] == (0, 0)  # row-major ties


def test_greedy_miou_hand_example_and_penalty():
    g0, g1 = line_mask(range(10)), line_mask(range(10, 20))
    p0, p1, p2 = line_mask(range(10)), line_mask(range(5, 15)), line_mask(range(30, 32))
    # IoU(p0, g0) = 1; IoU(p1, g1) = 5 / 15; p2 overlaps nothing
    assert greedy_miou([p0, p1, p2], [g0, g1]) == pytest.approx((1 + 1 / 3) / 2)
    assert greedy_miou([p0, p1, p2], [g0, g1], penalize_unpaired=True) == pytest.approx(4 / 9)
    assert greedy_miou([], [g0]) == 0.0 and greedy_miou([p0], []) == 0.0
    assert greedy_miou([p2], [g0]) == 0.0  # no positive IoU: no pair


def test_greedy_differs_from_hungarian_where_documented():
    g0, g1 = line_mask(range(10)), line_mask(range(10, 14))
    p0, p1 = line_mask(range(12)), line_mask(range(2, 10))
    m = iou_matrix([p0, p1], [g0, g1])  # [[10/12, 2/14], [8/10, 0]]
    # greedy takes 10/12 first and leaves p1 with g1 (IoU 0): one pair, mean 0.833
    assert greedy_miou([p0, p1], [g0, g1]) == pytest.approx(10 / 12)
    hungarian = max(m[0, 0] + m[1, 1], m[0, 1] + m[1, 0]) / 2  # 0.471
    assert hungarian < greedy_miou([p0, p1], [g0, g1])


def test_recall_rejects_a_text_mismatch_and_stops_the_loop():
    g0, g1 = line_mask(range(10)), line_mask(range(20, 30))
    p0, p1 = line_mask(range(10)), line_mask(range(20, 28))  # IoU 1 and 0.8
    gts, gtp = [g0, g1], ["red circle", "blue square"]
    ok = greedy_matches(
        [p0, p1], ["red circle", "blue square"], gts, gtp, text_sim=jaccard_similarity
    )
    assert ok == [(0, 0), (1, 1)]
    # the largest IoU (1.0) has a wrong phrase: the loop stops there, p1 is never tried
    bad = greedy_matches(
        [p0, p1], ["green diamond", "blue square"], gts, gtp, text_sim=jaccard_similarity
    )
    assert bad == []
    low_iou = greedy_matches(
        [line_mask(range(4))], ["red circle"], [g0], ["red circle"], text_sim=jaccard_similarity
    )
    assert low_iou == []  # IoU 0.4 < 0.5


def test_recall_skips_turns_without_predictions_unless_strict():
    g = line_mask(range(10))
    args = ([[g], []], [["red circle"], []], [[g], [g, g]], [["red circle"], ["a", "b"]])
    assert greedy_recall(*args, text_sim="jaccard") == 1.0  # turn 2 skipped in both sums
    assert greedy_recall(*args, text_sim="jaccard", strict=True) == pytest.approx(1 / 3)
    assert greedy_recall([[]], [[]], [[g]], [["x"]], text_sim="jaccard") == 0.0
    one_turn = ([g], ["red circle"], [g, line_mask(range(20, 30))], ["red circle", "blue"])
    assert greedy_recall(*one_turn, text_sim="jaccard") == 0.5  # a single turn, given flat


def test_official_quirks_transposed_text_lookup():
    g0, g1 = line_mask(range(10)), line_mask(range(20, 30))
    p0, p1 = line_mask(range(20, 30)), line_mask(range(9))  # p0 -> g1 (IoU 1), p1 -> g0 (0.9)
    preds, gts = [p0, p1], [g0, g1]
    pp, gp = ["blue square", "green diamond"], ["red circle", "blue square"]
    # consistent: (0, 1) compares gt1 'blue square' with pred0 'blue square' -> accepted;
    # (1, 0) compares 'red circle' with 'green diamond' -> rejected, loop stops
    assert greedy_matches(preds, pp, gts, gp, text_sim=jaccard_similarity) == [(0, 1)]
    # official: the text matrix is GT x pred, so (0, 1) reads sim(gt0, pred1) = 0 -> stop at once
    assert (
        greedy_matches(preds, pp, gts, gp, text_sim=jaccard_similarity, official_quirks=True) == []
    )


def test_official_quirks_crop_drops_surplus_predictions():
    g0 = line_mask(range(10))
    far, match = line_mask(range(30, 40)), line_mask(range(10))
    # two predictions, one GT: the crop keeps min(2, 1) x min(1, 2) = row 0 only
    args = ([far, match], ["red circle", "red circle"], [g0], ["red circle"])
    assert greedy_matches(*args, text_sim=jaccard_similarity) == [(1, 0)]
    assert greedy_matches(*args, text_sim=jaccard_similarity, official_quirks=True) == []


@pytest.mark.parametrize(
    ("text", "clean", "phrases"),
    [
        (
            "The <p>red circle</p> [SEG]  is   moving left.",
            "The red circle is moving left.",
            ["red circle"],
        ),
        (
            "<p>  A Big  Dog </p>[SEG][SEG] and\n<p>cat</p> [SEG]<|im_end|>",
            "A Big Dog and cat",
            ["a big  dog", "cat"],
        ),
        ("no tags at all", "no tags at all", []),
        ("<p>a\nb</p> [SEG]", "a b", ["a\nb"]),
        ("[SEG] [SEG] [SEG]", "", []),
    ],
)
def test_clean_text_and_extract_phrases(text, clean, phrases):
    assert clean_text(text) == clean
    assert extract_phrases(text) == phrases


def test_jaccard_similarity():
    assert jaccard_similarity("Red circle", "the red circle") == pytest.approx(2 / 3)
    assert jaccard_similarity("", "") == 1.0 and jaccard_similarity("a", "") == 0.0
