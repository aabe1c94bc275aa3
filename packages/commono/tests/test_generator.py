"""The synthetic generator: G is the intersection of the scenes, the candidates are well formed,
similar distractors differ in one attribute, every object is visible, and all of it is seeded."""

import numpy as np
import pytest

from commono import NONE_OPTION, make_synthetic_bench
from commono.generator import SPLIT_RANGES, is_similar, make_single_scenes
from commono.render import MIN_VISIBLE, VOCAB, attributes, render_scene


def test_examples_are_consistent(bench_small):
    for e in bench_small:
        s1, s2 = e.scene_objects
        assert set(e.gt_common) == set(s1) & set(s2)
        lo, hi = SPLIT_RANGES[e.split]
        assert lo <= len(s1) <= hi and lo <= len(s2) <= hi
        assert set(e.gt_common) <= set(e.candidates)
        assert e.candidates.count(NONE_OPTION) == 1
        assert len(set(e.candidates)) == len(e.candidates) <= 26
        assert all(c in VOCAB for c in e.candidates if c != NONE_OPTION)
        assert e.image(0).shape == (64, 64, 3) and e.image(0).dtype == np.uint8


def test_similar_distractors_differ_in_exactly_one_attribute(bench_small):
    flagged = [e for e in bench_small if e.similar_distractor]
    assert flagged, "similar_prob=0.5 should give some"
    for e in bench_small:
        others = [c for c in e.candidates if c != NONE_OPTION and c not in e.gt_common]
        pairs = [(c, g) for c in others for g in e.gt_common if is_similar(c, g)]
        assert bool(pairs) == e.similar_distractor
        for c, g in pairs:
            a, b = attributes(c), attributes(g)
            assert a[0] == b[0] and sum(x != y for x, y in zip(a, b, strict=True)) == 1


def test_no_similar_when_prob_zero():
    assert not any(
        e.similar_distractor for e in make_synthetic_bench(30, similar_prob=0.0, image_size=64)
    )


def test_deterministic_under_seed():
    a = make_synthetic_bench(5, "complex", seed=7, image_size=64)
    b = make_synthetic_bench(5, "complex", seed=7, image_size=64)
    c = make_synthetic_bench(5, "complex", seed=8, image_size=64)
    for x, y in zip(a, b, strict=True):
        assert x.candidates == y.candidates and x.gt_common == y.gt_common
        assert np.array_equal(x.image(0), y.image(0)) and np.array_equal(x.image(1), y.image(1))
    assert any(x.candidates != z.candidates for x, z in zip(a, c, strict=True))


@pytest.mark.parametrize("n", [3, 7, 16])
def test_every_object_is_visible(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        names = list(rng.choice(VOCAB, size=n, replace=False))
        image, labels = render_scene(names, rng, 128)
        counts = np.bincount(labels[labels >= 0], minlength=n)
        assert counts.min() >= MIN_VISIBLE
        # the label map says who owns each pixel: object pixels carry the object's colour
        # family, background pixels are untouched by any object
        assert image.shape == (128, 128, 3) and (labels >= -1).all()


def test_single_scene_labels_match_the_label_map():
    images, labels, cells, objects = make_single_scenes(6, seed=1, image_size=64)
    assert images.shape == (6, 64, 64, 3) and labels.shape == (6, len(VOCAB))
    for i in range(6):
        n_obj = int(labels[i].sum())
        assert 3 <= n_obj <= 16
        assert (objects[:, 0] == i).sum() == n_obj
        marked = cells[i, 0] >= 0
        assert 1 <= marked.sum() <= n_obj  # one cell per object centre (shared cells merge)
