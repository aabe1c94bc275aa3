"""Synthetic Common-O and Common-O Complex pairs (replacing the paper's photographs, Sec. 3).

A pair: n1, n2 ~ uniform on the split's range (3-7 for Common-O, 8-16 for Complex); |G| ~
uniform on 0..min(n1, n2); G is drawn from the 192-type vocabulary, then each scene is filled with
its own objects, disjoint from the other scene's (so G is exactly the intersection). With
probability ``similar_prob`` (and |G| > 0 and room in a scene) one scene gets a look-alike of a
common object: same shape, differing in exactly one of colour or pattern. Without it, look-alikes
of G are kept out of both scenes, so the ``similar_distractor`` flag is exact. Each scene is
rendered independently (the "viewpoint" change: new positions, sizes, rotations, occlusions and
background for the common objects). Candidates: G, the one-scene objects (the look-alike always
among them), 0-2 absent objects and the NONE option, shuffled with the seeded RNG, at most 26.
"""

from __future__ import annotations

import numpy as np

from commono.render import COLOURS, PATTERNS, SHAPES, VOCAB, attributes, object_name, render_scene
from commono.schema import MAX_OPTIONS, NONE_OPTION, Example
from paperkit import check_choice, check_int, check_memory, check_real, describe, param_error

__all__ = ["SPLIT_RANGES", "is_similar", "make_single_scenes", "make_synthetic_bench"]

#: Objects per scene for each split (inclusive).
SPLIT_RANGES = {"common-o": (3, 7), "complex": (8, 16)}
_MAX_N = 100_000


def is_similar(a: str, b: str) -> bool:
    """Whether two vocabulary objects share their shape and differ in exactly one attribute
    (False for names outside the vocabulary)."""
    for name, value in (("a", a), ("b", b)):
        if not isinstance(value, str):
            raise param_error(
                name, "is_similar", "an object name (a string)", describe(value), cls=TypeError
            )
    sa, sb = attributes(a), attributes(b)
    if sa is None or sb is None or sa[0] != sb[0]:
        return False
    return (sa[1] != sb[1]) + (sa[2] != sb[2]) == 1


def _lookalike(obj: str, rng: np.random.Generator, taken: set[str]) -> str | None:
    """A type sharing ``obj``'s shape and differing in colour or in pattern, outside ``taken``."""
    shape, colour, pattern = attributes(obj)
    options = [object_name(shape, c, pattern) for c in COLOURS if c != colour]
    options += [object_name(shape, colour, p) for p in PATTERNS if p != pattern]
    options = [o for o in options if o not in taken]
    return options[int(rng.integers(len(options)))] if options else None


def _draw(rng: np.random.Generator, k: int, exclude: set[str], avoid_like: list[str]) -> list[str]:
    """``k`` distinct types outside ``exclude`` and not look-alikes of ``avoid_like``."""
    pool = [v for v in VOCAB if v not in exclude and not any(is_similar(v, g) for g in avoid_like)]
    return [pool[i] for i in rng.choice(len(pool), size=k, replace=False)]


def _pair(rng: np.random.Generator, split: str, similar_prob: float):
    lo, hi = SPLIT_RANGES[split]
    n1, n2 = int(rng.integers(lo, hi + 1)), int(rng.integers(lo, hi + 1))
    g = int(rng.integers(0, min(n1, n2) + 1))
    common = _draw(rng, g, set(), [])
    want_similar = g > 0 and rng.random() < similar_prob and (n1 > g or n2 > g)
    used = set(common)
    look = None
    if want_similar:
        look = _lookalike(common[int(rng.integers(g))], rng, used)
        if look is not None:
            used.add(look)
    own1 = _draw(rng, n1 - g - (look is not None and n1 > g), used, common)
    used |= set(own1)
    own2_n = n2 - g - (look is not None and n1 <= g)
    own2 = _draw(rng, own2_n, used, common)
    used |= set(own2)
    if look is not None:
        (own1 if n1 > g else own2).append(look)
    want_similar = look is not None
    scene1 = common + own1
    scene2 = common + own2
    rng.shuffle(scene1)
    rng.shuffle(scene2)
    n_absent = int(rng.integers(0, 3))
    absent = _draw(rng, n_absent, used, [] if want_similar else common)
    room = MAX_OPTIONS - 1 - g - n_absent
    others = [o for o in own1 + own2 if o != look]
    if len(others) + (look is not None) > room:
        keep = room - (look is not None)
        others = [others[i] for i in sorted(rng.choice(len(others), size=keep, replace=False))]
    cands = common + others + ([look] if look else []) + absent + [NONE_OPTION]
    order = rng.permutation(len(cands))
    cands = [cands[i] for i in order]
    return scene1, scene2, common, cands, look is not None


def make_synthetic_bench(
    n: int = 500,
    split: str = "common-o",
    seed: int = 0,
    similar_prob: float = 0.5,
    image_size: int = 128,
) -> list[Example]:
    """``n`` synthetic two-scene examples of ``split`` (``"common-o"`` or ``"complex"``).

    Deterministic under ``seed``. Images are ``image_size x image_size`` RGB uint8; every listed
    object keeps at least 30 visible pixels in its scene (see :func:`commono.render.render_scene`).
    ``gt_common`` is in the order of the candidate list.
    """
    owner = "make_synthetic_bench"
    n = check_int("n", owner, n, low=1, high=_MAX_N)
    check_choice("split", owner, split, tuple(SPLIT_RANGES))
    seed = check_int("seed", owner, seed, low=0)
    similar_prob = check_real("similar_prob", owner, similar_prob, low=0, high=1)
    image_size = check_int("image_size", owner, image_size, low=64, high=1024)
    check_memory("n", owner, n, 2 * n * image_size * image_size * 3)
    rng = np.random.default_rng([seed, SPLIT_RANGES[split][0]])
    out = []
    for i in range(n):
        s1, s2, common, cands, similar = _pair(rng, split, similar_prob)
        img1, _ = render_scene(s1, rng, image_size)
        img2, _ = render_scene(s2, rng, image_size)
        gt = [c for c in cands if c in set(common)]
        out.append(
            Example(
                id=f"{split}-{seed}-{i:05d}",
                images=(img1, img2),
                candidates=cands,
                gt_common=gt,
                split=split,
                source="synthetic",
                scene_objects=(s1, s2),
                similar_distractor=bool(similar),
            )
        )
    return out


def make_single_scenes(
    n: int = 2000,
    seed: int = 0,
    image_size: int = 128,
    objects: tuple[int, int] = (3, 16),
    stride: int = 8,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``n`` single scenes for training a detector, with their labels.

    Returns images ``(n, S, S, 3)`` uint8, multi-hot labels ``(n, 192)`` float32 over
    :data:`commono.render.VOCAB`, and cell maps ``(n, 3, S/stride, S/stride)`` int64: the
    (shape, colour, pattern) indices of the object whose visible centroid (from the renderer's
    label map) falls in the cell, -1 elsewhere (the most visible object wins a shared cell); and
    one row ``(scene, centroid y, centroid x, shape index)`` float32 per object.
    ``objects`` per scene is uniform on the inclusive
    range (both splits by default). Deterministic under ``seed``.
    """
    owner = "make_single_scenes"
    n = check_int("n", owner, n, low=1, high=_MAX_N)
    seed = check_int("seed", owner, seed, low=0)
    image_size = check_int("image_size", owner, image_size, low=64, high=1024)
    stride = check_int("stride", owner, stride, low=1, high=16)
    if image_size % stride:
        raise param_error("stride", owner, f"a divisor of image_size={image_size}", stride)
    if not (isinstance(objects, tuple) and len(objects) == 2):
        raise param_error(
            "objects", owner, "a (low, high) pair of integers", describe(objects), cls=TypeError
        )
    check_int("objects", owner, objects[0], low=1, high=16)
    check_int("objects", owner, objects[1], low=objects[0], high=16)
    check_memory("n", owner, n, n * image_size * image_size * 3 * 2)
    rng = np.random.default_rng([seed, 99])
    index = {v: k for k, v in enumerate(VOCAB)}
    shapes, colours, patterns = list(SHAPES), list(COLOURS), list(PATTERNS)
    g = image_size // stride
    images = np.empty((n, image_size, image_size, 3), dtype=np.uint8)
    labels = np.zeros((n, len(VOCAB)), dtype=np.float32)
    cells = np.full((n, 3, g, g), -1, dtype=np.int64)
    rows = []
    for i in range(n):
        k = int(rng.integers(objects[0], objects[1] + 1))
        names = _draw(rng, k, set(), [])
        images[i], label_map = render_scene(names, rng, image_size)
        labels[i, [index[v] for v in names]] = 1.0
        attrs = np.array(
            [
                [shapes.index(a[0]), colours.index(a[1]), patterns.index(a[2])]
                for a in map(attributes, names)
            ]
            + [[-1, -1, -1]]
        )
        owner_ids = label_map.ravel()
        vis = owner_ids >= 0
        yy, xx = np.divmod(np.flatnonzero(vis), image_size)
        count = np.bincount(owner_ids[vis], minlength=k)
        cy = np.bincount(owner_ids[vis], weights=yy, minlength=k) / count
        cx = np.bincount(owner_ids[vis], weights=xx, minlength=k) / count
        for j in np.argsort(count):  # the most visible object wins a shared cell
            cells[i, :, int(cy[j]) // stride, int(cx[j]) // stride] = attrs[j]
            rows.append((i, cy[j], cx[j], attrs[j, 0]))
    return images, labels, cells, np.asarray(rows, dtype=np.float32)


assert len(SHAPES) * len(COLOURS) * len(PATTERNS) == len(VOCAB)
