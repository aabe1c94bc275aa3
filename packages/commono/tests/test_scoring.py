"""Scoring as defined in Sec. 3: exact-set accuracy, NONE handling, hallucination (example level)
and the object-level false-positive rate, on hand-made examples."""

import math

import numpy as np
import pytest

from commono import NONE_OPTION, Example, evaluate, score_example, summarize
from commono.adapters import CallableAdapter

IMG = np.zeros((8, 8, 3), np.uint8)
# A B C D E
CANDS = ["red star", "blue circle", NONE_OPTION, "green square", "pink cross"]


def ex(gt, **kw):
    return Example(id="e", images=(IMG, IMG), candidates=CANDS, gt_common=gt, **kw)


def test_exact_set_is_order_free_and_strict():
    e = ex(["red star", "green square"])
    assert score_example({"D", "A"}, e)["correct"]
    assert not score_example({"A"}, e)["correct"]  # subset
    assert not score_example({"A", "D", "E"}, e)["correct"]  # superset
    assert score_example({"A"}, e)["miss"] and not score_example({"A"}, e)["hallucination"]


def test_none_handling():
    empty = ex([])
    s = score_example({"C"}, empty)
    assert s["correct"] and not s["hallucination"] and s["n_pred"] == 0
    s = score_example({"A"}, empty)
    assert not s["correct"] and s["hallucination"] and s["fp"] == 1
    s = score_example({"C", "A"}, empty)  # NONE with an object
    assert not s["correct"] and s["hallucination"]
    e = ex(["red star"])
    s = score_example({"C", "A"}, e)  # NONE with a right object: wrong, not a hallucination
    assert not s["correct"] and not s["hallucination"] and s["n_pred"] == 1
    s = score_example({"C"}, e)  # NONE when G is not empty: a miss, not a hallucination
    assert not s["correct"] and s["miss"] and not s["hallucination"]


def test_parse_failure_is_wrong_not_hallucination():
    s = score_example(None, ex(["red star"]))
    assert s == {
        "correct": False,
        "hallucination": False,
        "fp": 0,
        "tp": 0,
        "fn": 1,
        "n_pred": 0,
        "miss": True,
        "parse_failure": True,
    }


def test_hand_set_rates():
    # three examples, counted by hand:
    # 1. G = {red star, green square}, P = {A, B, D, E}: tp 2, fp 2 (blue circle, pink cross)
    # 2. G = {}, P = {C}: correct, no objects predicted
    # 3. G = {blue circle}, P = {B, C}: NONE plus the right object, wrong, tp 1, fp 0
    records = [
        score_example({"A", "B", "D", "E"}, ex(["red star", "green square"])),
        score_example({"C"}, ex([])),
        score_example({"B", "C"}, ex(["blue circle"])),
    ]
    s = summarize(records)
    assert s["accuracy"] == pytest.approx(1 / 3)
    assert s["hallucination_rate"] == pytest.approx(1 / 3)  # example level: only example 1
    assert s["object_fp_rate"] == pytest.approx(2 / 5)  # 2 FP over 5 predicted objects
    assert s["precision"] == pytest.approx(3 / 5)
    assert s["recall"] == pytest.approx(3 / 3)
    assert s["f1"] == pytest.approx(2 * 0.6 / 1.6)
    assert s["miss_rate"] == 0 and s["parse_failure_rate"] == 0


def test_four_objects_one_false_positive_is_a_quarter():
    # NONE is not an object: choosing it as well does not change the denominator
    e = ex(["red star", "blue circle", "green square"])
    s = summarize([score_example({"A", "B", "C", "D", "E"}, e)])
    assert s["object_fp_rate"] == pytest.approx(0.25)
    assert s["hallucination_rate"] == 1.0


def test_evaluate_reads_answers_and_breaks_down(bench_small):
    def always_none(images, prompt):
        assert len(images) == 2 and prompt.count("\n") > 3
        letter = [ln[0] for ln in prompt.splitlines() if ln.endswith(NONE_OPTION)][0]
        return f"Let me think.\nAnswer: {letter}"

    rep = evaluate(CallableAdapter(always_none), bench_small)
    empty = [e for e in bench_small if not e.gt_common]
    assert rep.summary()["accuracy"] == pytest.approx(len(empty) / len(bench_small))
    assert rep.summary()["hallucination_rate"] == 0.0
    rows = {r["gt_size"]: r for r in rep.breakdown("gt_size")}
    assert rows[0]["accuracy"] == 1.0 and all(r["accuracy"] == 0.0 for k, r in rows.items() if k)
    splits = {r["split"]: r["n"] for r in rep.breakdown("split")}
    assert splits == {"common-o": 40, "complex": 20}
    assert {r["source"] for r in rep.breakdown("source")} == {"synthetic"}
    assert math.isnan(rep.summary()["object_fp_rate"])  # no object was ever predicted
