"""Reference adapters: the oracle is perfect, random guessing is near zero, Union and
PerceptionIntersect do the set operations they promise on a stub detector."""

import numpy as np
import pytest

from commono import (
    CallableAdapter,
    OracleAdapter,
    PerceptionIntersectAdapter,
    RandomAdapter,
    UnionAdapter,
    evaluate,
    make_synthetic_bench,
)


class TruthDetector:
    """Detects exactly the objects of the scene an image came from (looked up by its bytes)."""

    def __init__(self, examples):
        self.table = {}
        for e in examples:
            for k in (0, 1):
                self.table[e.image(k).tobytes()] = set(e.scene_objects[k])

    def detect(self, image, candidates=None):
        found = self.table[image.tobytes()]
        return found if candidates is None else found & set(candidates)


@pytest.mark.parametrize("task", ["common", "perception"])
def test_oracle_is_perfect(bench_small, task):
    s = evaluate(OracleAdapter(bench_small), bench_small, task).summary()
    assert (
        s["accuracy"] == 1.0 and s["hallucination_rate"] == 0.0 and s["parse_failure_rate"] == 0.0
    )


def test_random_is_near_zero():
    # the candidate lists of 1,000 generated Common-O pairs; random guessing never looks at the
    # pixels, so the scenes are not rendered (one blank image per pair, a distinct id per pair)
    from commono import Example
    from commono.generator import _pair

    rng = np.random.default_rng(11)
    examples = []
    for i in range(1000):
        s1, s2, common, cands, similar = _pair(rng, "common-o", 0.5)
        img = np.full((8, 8, 3), i % 256, np.uint8)
        examples.append(
            Example(
                f"r{i}",
                (img, img),
                cands,
                [c for c in cands if c in common],
                scene_objects=(s1, s2),
            )
        )
    s = evaluate(RandomAdapter(0), examples).summary()
    assert s["accuracy"] < 0.1
    assert 0.35 < s["recall"] < 0.65  # each object option w.p. 1/2


def test_random_is_seeded(bench_small):
    a = evaluate(RandomAdapter(3), bench_small).records
    b = evaluate(RandomAdapter(3), bench_small).records
    assert [r["answer"] for r in a] == [r["answer"] for r in b]


def test_intersect_with_perfect_perception_is_perfect(bench_small):
    det = TruthDetector(bench_small)
    for task in ("common", "perception"):
        s = evaluate(PerceptionIntersectAdapter(det), bench_small, task).summary()
        assert s["accuracy"] == 1.0 and s["hallucination_rate"] == 0.0


def test_union_with_perfect_perception_hallucinates_exactly_on_one_scene_candidates(bench_small):
    det = TruthDetector(bench_small)
    rep = evaluate(UnionAdapter(det), bench_small)
    by_id = {e.id: e for e in bench_small}
    for r in rep.records:
        e = by_id[r["id"]]
        one_scene = set(e.candidates) & (set(e.scene_objects[0]) ^ set(e.scene_objects[1]))
        assert r["hallucination"] == bool(one_scene)
        assert r["fp"] == len(one_scene) and r["fn"] == 0
    assert evaluate(UnionAdapter(det), bench_small, "perception").summary()["accuracy"] == 1.0


def test_callable_adapter_checks_the_reply(bench_small):
    seen = []

    def fn(images, prompt):
        seen.append(len(images))
        return "Answer: A"

    evaluate(CallableAdapter(fn), bench_small[:3], "perception")
    assert seen == [1] * 6
    with pytest.raises(TypeError):
        evaluate(CallableAdapter(lambda images, prompt: 3), bench_small[:1])


def test_oracle_refuses_unknown_examples(bench_small):
    other = make_synthetic_bench(1, seed=99, image_size=64)[0]
    from commono import build_prompt

    with pytest.raises(KeyError):
        OracleAdapter(bench_small)([other.image(0), other.image(1)], build_prompt(other))
    assert isinstance(np.asarray(0), np.ndarray)
