"""Scoring as the paper defines it (Sec. 3-4): exact-set accuracy and hallucination.

Per example, with G the ground-truth set (``{NONE}`` when no candidate is common) and P the
predicted set of options (None when the response did not parse):

- accuracy: ``1[P == G]`` (order free; choosing NONE together with an object is wrong);
- hallucination (example level, the default rate): ``1[P contains an object not in G]``, i.e. at
  least one false positive; choosing any object when G is empty counts, a parse failure does not;
- object-level counts: ``tp = |P_obj & G_obj|``, ``fp = |P_obj - G_obj|``, ``fn = |G_obj - P_obj|``,
  ``n_pred = |P_obj|``, where ``X_obj`` drops the NONE option: NONE is not an object and never
  counts among the predicted objects (a prediction of 4 objects with one false positive has an
  object-level false-positive rate of 1/4 whether or not NONE was also chosen);
- miss: some object of G was not chosen; parse failure: P is None.

The paper calls the hallucination rate "the proportion of false-positive predictions" without a
formula we could recover; both normalisations are reported and labelled: ``hallucination_rate``
(examples with a false positive / examples) and ``object_fp_rate`` (sum fp / sum n_pred).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from commono.prompt import build_prompt, letters
from commono.schema import NONE_OPTION, Example, validate
from paperkit import check_choice, describe, param_error

__all__ = ["BREAKDOWNS", "Report", "evaluate", "score_example", "summarize"]

#: Keys :meth:`Report.breakdown` groups by.
BREAKDOWNS = ("split", "objects_per_scene", "source", "similar_distractor", "gt_size")


def _targets(example: Example, task: str, image_index: int | None) -> frozenset[str]:
    return example.gt_set if task == "common" else example.perception_gt(image_index)


def score_example(
    pred_letters: set[str] | None,
    example: Example,
    task: str = "common",
    image_index: int | None = None,
) -> dict[str, Any]:
    """Score one prediction (a set of letters, or None for a parse failure) against ``example``.

    Returns ``dict(correct, hallucination, fp, tp, fn, n_pred, miss, parse_failure)`` (see the
    module docstring). ``task="perception"`` scores against the candidates present in scene
    ``image_index``.
    """
    owner = "score_example"
    validate(example, owner=owner)
    check_choice("task", owner, task, ("common", "perception"))
    if task == "perception" and image_index not in (0, 1):
        raise param_error(
            "image_index", owner, "0 or 1 for the perception task", describe(image_index)
        )
    n = len(example.candidates)
    if pred_letters is not None:
        if isinstance(pred_letters, str) or not isinstance(pred_letters, Iterable):
            raise param_error(
                "pred_letters",
                owner,
                "a set of letters or None",
                describe(pred_letters),
                cls=TypeError,
            )
        pred_letters = set(pred_letters)
        valid = set(letters(n))
        bad = sorted(str(x) for x in pred_letters - valid)
        if bad:
            raise param_error(
                "pred_letters", owner, f"letters among {letters(n)[0]}-{letters(n)[-1]}", f"{bad}"
            )
    gt = _targets(example, task, image_index)
    gt_obj = gt - {NONE_OPTION}
    if pred_letters is None or not pred_letters:
        return {
            "correct": False,
            "hallucination": False,
            "fp": 0,
            "tp": 0,
            "fn": len(gt_obj),
            "n_pred": 0,
            "miss": bool(gt_obj),
            "parse_failure": True,
        }
    lookup = dict(zip(letters(n), example.candidates, strict=True))
    pred = {lookup[a] for a in pred_letters}
    pred_obj = pred - {NONE_OPTION}
    fp = len(pred_obj - gt_obj)
    return {
        "correct": pred == gt,
        "hallucination": fp > 0,
        "fp": fp,
        "tp": len(pred_obj & gt_obj),
        "fn": len(gt_obj - pred_obj),
        "n_pred": len(pred_obj),
        "miss": bool(gt_obj - pred_obj),
        "parse_failure": False,
    }


def _ratio(a: float, b: float) -> float:
    return a / b if b else float("nan")


def summarize(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Rates over scored records (:func:`score_example` outputs).

    ``accuracy``, ``hallucination_rate`` (example level), ``miss_rate`` and
    ``parse_failure_rate`` are means over records; ``object_fp_rate = sum fp / sum n_pred``,
    ``precision = sum tp / (sum tp + sum fp)``, ``recall = sum tp / (sum tp + sum fn)`` and
    ``f1 = 2 P R / (P + R)`` pool the object counts (NaN where a denominator is 0).
    """
    if not isinstance(records, (list, tuple)):
        raise param_error(
            "records", "summarize", "a list of scored examples", describe(records), cls=TypeError
        )
    n = len(records)
    if n == 0:
        raise param_error("records", "summarize", "a non-empty list of scored examples", "[]")
    tp = sum(r["tp"] for r in records)
    fp = sum(r["fp"] for r in records)
    fn = sum(r["fn"] for r in records)
    npred = sum(r["n_pred"] for r in records)
    precision, recall = _ratio(tp, tp + fp), _ratio(tp, tp + fn)
    f1 = (
        _ratio(2 * precision * recall, precision + recall)
        if tp
        else (0.0 if tp + fp + fn else float("nan"))
    )
    return {
        "n": n,
        "accuracy": sum(r["correct"] for r in records) / n,
        "hallucination_rate": sum(r["hallucination"] for r in records) / n,
        "object_fp_rate": _ratio(fp, npred),
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "miss_rate": sum(r["miss"] for r in records) / n,
        "parse_failure_rate": sum(r["parse_failure"] for r in records) / n,
    }


@dataclass
class Report:
    """What :func:`evaluate` returns: one record per scored item (an example for the common task,
    an example's image for the perception task) with its scores and breakdown keys."""

    task: str
    records: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        check_choice("task", "Report", self.task, ("common", "perception"))
        if not isinstance(self.records, list):
            raise param_error(
                "records",
                "Report",
                "a list of scored records",
                describe(self.records),
                cls=TypeError,
            )

    def summary(self) -> dict[str, float]:
        """Accuracy, hallucination rate (example level), object FP rate, precision, recall, F1,
        miss and parse-failure rates over every record (:func:`summarize`)."""
        return summarize(self.records)

    def breakdown(self, by: str = "split") -> list[dict[str, Any]]:
        """:meth:`summary` per value of ``by``, one of :data:`BREAKDOWNS`; rows sorted by value."""
        check_choice("by", "Report.breakdown", by, BREAKDOWNS)
        groups: dict[Any, list[dict[str, Any]]] = {}
        for r in self.records:
            groups.setdefault(r[by], []).append(r)
        return [
            {by: key, **summarize(groups[key])}
            for key in sorted(groups, key=lambda k: (str(type(k)), k))
        ]


def _records_keys(example: Example, task: str, image_index: int | None) -> dict[str, Any]:
    scenes = example.scene_objects
    if task == "common":
        per_scene = max(len(scenes[0]), len(scenes[1]))
    else:
        per_scene = len(scenes[image_index])
    return {
        "id": example.id,
        "image_index": image_index,
        "split": example.split,
        "source": example.source,
        "objects_per_scene": per_scene,
        "similar_distractor": bool(example.similar_distractor),
        "gt_size": len(example.gt_common),
    }


def evaluate(adapter: Any, examples: Sequence[Example], task: str = "common") -> Report:
    """Ask ``adapter`` (images, prompt) -> text about every example and score the answers.

    ``task="common"``: one call per example with both images. ``task="perception"``: one call
    per image with :func:`commono.prompt.build_prompt`'s perception prompt; each image is one
    record. Answers are read with :func:`commono.parse.parse_answer`; the record of an example
    holds its :func:`score_example` scores, the raw answer, and the breakdown keys
    ``split``, ``objects_per_scene`` (max over the two scenes for the common task), ``source``,
    ``similar_distractor`` and ``gt_size`` (|G|).
    """
    from commono.parse import parse_answer

    owner = "evaluate"
    if not callable(adapter):
        raise param_error(
            "adapter", owner, "a callable (images, prompt) -> str", describe(adapter), cls=TypeError
        )
    check_choice("task", owner, task, ("common", "perception"))
    if isinstance(examples, Example) or not isinstance(examples, Sequence) or not examples:
        raise param_error(
            "examples", owner, "a non-empty list of Example", describe(examples), cls=TypeError
        )
    for ex in examples:
        validate(ex, owner=owner)
    report = Report(task=task)
    for ex in examples:
        views = [None] if task == "common" else [0, 1]
        for k in views:
            prompt = build_prompt(ex, task, k)
            images = [ex.image(0), ex.image(1)] if k is None else [ex.image(k)]
            answer = adapter(images, prompt)
            if not isinstance(answer, str):
                raise TypeError(f"the adapter returned {describe(answer)}, not a string")
            pred = parse_answer(answer, len(ex.candidates))
            scores = score_example(pred, ex, task, k)
            report.records.append({**_records_keys(ex, task, k), **scores, "answer": answer})
    return report
